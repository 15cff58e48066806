import AMQP
import Capture
import Dissection
import Foundation
import MQTT
@testable import Pipeline
import Render
import Testing

/// `Pipeline.runConcurrently` (what the command line runs on files: reading on a second thread)
/// must emit exactly what `run` emits, in the same order, on the caller's thread.
@Suite struct ConcurrentRunTests {
    static let batchPackets = 128

    struct Outcome: Equatable {
        var events: [String]
        var failed: Bool
        /// Every counter of the run (PDUs, problems, packets, connections, gap bytes…).
        var statistics: PipelineStatistics
    }

    /// Every event rendered as text and as JSON, in order, with the run's counters.
    static func outcome(_ path: String, concurrently: Bool, maxPDUs: Int? = nil, stopAfter: Int? = nil) throws -> Outcome {
        var reader = try CaptureFileReader(path: path)
        defer { reader.close() }
        let pipeline = Pipeline(registry: FactsDetailTests.registry(.tree, for: path), options: PipelineOptions(maxPDUs: maxPDUs))
        // Small batches, so a capture of a few thousand packets spans many.
        pipeline.batchPacketLimit = Self.batchPackets
        let options = RenderOptions(showSecrets: false, color: false, showTree: true, maxTableRows: 1000)
        var text = TextRenderer(options: options), json = JSONRenderer(options: options)
        var events: [String] = []
        let thread = pthread_self()
        var failed = false
        let emit: (OutputEvent) -> Bool = { event in
            #expect(pthread_equal(pthread_self(), thread) != 0, "events are emitted on the caller's thread")
            var out = ""
            text.render(event, into: &out)
            json.render(event, into: &out)
            events.append(out)
            return stopAfter.map { events.count < $0 } ?? true
        }
        do {
            if concurrently { try pipeline.runConcurrently(&reader, emit: emit) } else { try pipeline.run(&reader, emit: emit) }
        } catch is CaptureError {
            failed = true
        }
        return Outcome(events: events, failed: failed, statistics: pipeline.statistics)
    }

    /// 40 MQTT connections opened in turn and interleaved packet by packet, about 3,600 packets
    /// (many batches): publishes of varied sizes, some split across segments, acknowledgements,
    /// a lost segment; malformed packets (capture notes) between them; the file cut off inside
    /// its last record.
    static func interleavedCapture() throws -> String {
        var connections: [SyntheticCapture] = []
        var lost: [Set<Int>] = []
        for n in 0..<40 {
            var c = SyntheticCapture(clientPort: UInt16(40_000 + n))
            var dropped: Set<Int> = []
            c.handshake()
            c.send(toServer: true, MQTTBytes.connect(clientID: "client-\(n)"))
            c.send(toServer: false, [0x20, 2, 0, 0])
            for i in 0..<38 {
                let payload = [UInt8](repeating: UInt8(i), count: (n * 37 + i * 101) % 3000)
                let publish = MQTTBytes.publish(topic: "t/\(n)/\(i % 3)", payload: payload, qos: 1, id: UInt16(i + 1))
                if i % 4 == 1 || (i == 13 && n % 10 == 3) {
                    let half = publish.count / 2
                    c.send(toServer: true, Array(publish[..<half]))
                    // A lost segment on some connections: the first half never reaches the capture.
                    if i == 13 { dropped.insert(c.records.count - 1) }
                    c.send(toServer: true, Array(publish[half...]))
                } else {
                    c.send(toServer: true, publish)
                }
                c.send(toServer: false, [0x40, 2, 0, UInt8(i + 1)])
            }
            if n % 2 == 0 { c.close() }
            connections.append(c)
            lost.append(dropped)
        }
        // Interleave: connection k starts after k rounds, so opens, data and closes mix.
        var records: [SyntheticCapture.Record] = []
        var next = [Int](repeating: 0, count: connections.count)
        var round = 0
        while next.indices.contains(where: { next[$0] < connections[$0].records.count }) {
            for k in connections.indices where k <= round && next[k] < connections[k].records.count {
                if !lost[k].contains(next[k]) { records.append(connections[k].records[next[k]]) }
                next[k] += 1
            }
            if round % 97 == 5 {
                // A raw IPv4 packet cut inside its header: a note about the capture.
                records.append(SyntheticCapture.Record(seconds: 0, micros: 0, extraNanoseconds: 0, data: [0x45, 0, 0], originalLength: 3))
            }
            round += 1
        }
        var base = connections[0]
        base.replaceRecords(records)
        var bytes = base.bytes
        bytes += [1, 2, 3, 4, 5, 6, 7] // a record header cut short
        return try SyntheticCapture.write(bytes, name: "interleaved-\(UInt64.random(in: 0...UInt64.max))", suffix: "pcap")
    }

    @Test("many interleaved connections, capture notes and a file cut short: the same events in the same order, over many batches")
    func interleaved() throws {
        let path = try Self.interleavedCapture()
        let alone = try Self.outcome(path, concurrently: false)
        let both = try Self.outcome(path, concurrently: true)
        #expect(alone.failed && both.failed, "the cut-off record is reported by both")
        #expect(alone.statistics.packets > 8 * Self.batchPackets, "the capture spans many batches")
        #expect(alone.statistics.pdus > 1000)
        #expect(alone.statistics.connections == 40)
        #expect(alone.events.contains { $0.contains("IPv4 header cut short by the capture") }, "capture notes are among the events")
        #expect(alone.statistics.gapBytes > 0, "the lost segments are among the events")
        #expect(both == alone)
        if both != alone, let i = (0..<min(both.events.count, alone.events.count)).first(where: { both.events[$0] != alone.events[$0] }) {
            Issue.record("first difference at event \(i):\n\(alone.events[i])\n---\n\(both.events[i])")
        }
    }

    @Test("samples and the Suricata captures: the same events in the same order", arguments: FactsDetailTests.captures())
    func sameAsRun(capture: String) throws {
        let alone = try Self.outcome(capture, concurrently: false)
        let both = try Self.outcome(capture, concurrently: true)
        #expect(!alone.events.isEmpty)
        #expect(both == alone)
    }

    @Test("with a PDU limit, it stops where run stops")
    func pduLimit() throws {
        let path = try Self.interleavedCapture()
        let alone = try Self.outcome(path, concurrently: false, maxPDUs: 150)
        let both = try Self.outcome(path, concurrently: true, maxPDUs: 150)
        #expect(alone.statistics.pdus == 150)
        #expect(both == alone)
    }

    /// One MQTT connection whose broker acknowledges 1,000 publishes in one segment (4,000 bytes):
    /// the pipeline makes that segment's PDUs a part at a time (`StreamStage.pdusAtOnce`).
    static func denseSegmentCapture() throws -> String {
        var c = SyntheticCapture()
        c.handshake()
        c.send(toServer: true, MQTTBytes.connect(clientID: "dense"))
        c.send(toServer: false, [0x20, 2, 0, 0])
        var acks: [UInt8] = []
        for i in 1...1_000 { acks += [0x40, 2, UInt8(i >> 8), UInt8(i & 0xFF)] }
        c.send(toServer: false, acks)
        c.close()
        return try c.write(name: "dense-\(UInt64.random(in: 0...UInt64.max))")
    }

    @Test("a segment of 1,000 acknowledgements, made a part at a time: every PDU in order; a PDU limit inside a part stops there")
    func denseSegment() throws {
        let path = try Self.denseSegmentCapture()
        let all = try Self.outcome(path, concurrently: false)
        #expect(all.statistics.pdus == 1_002)
        // The PDUs' lines (each also has a record: a PUBACK with no PUBLISH in flight).
        let acks = all.events.filter { $0.contains("MQTT PUBACK") }
        #expect(acks.count == 1_000)
        // In the order of the segment: packet identifiers 1 to 1,000.
        #expect(acks.indices.allSatisfy { acks[$0].contains("id=\($0 + 1) ") || acks[$0].contains("id=\($0 + 1)\n") })
        // All in the segment's own frame (a part left for the end of the stream would be
        // attributed to the closing frame).
        let frame = acks[0].prefix { $0 != " " }
        #expect(acks.allSatisfy { $0.hasPrefix(frame + " ") })
        #expect(try Self.outcome(path, concurrently: true) == all)
        // 2 PDUs before the segment, then 300 of it: the limit falls inside the second part.
        let limited = try Self.outcome(path, concurrently: false, maxPDUs: 302)
        #expect(limited.statistics.pdus == 302)
        // The PDUs are the first 302 of the whole run (the flush at the end then closes the connection).
        #expect(Array(all.events.prefix(302)) == Array(limited.events.prefix(302)))
        #expect(limited.events.filter { $0.contains("PUBACK") }.count == 300)
    }

    @Test("emit returning false: nothing more is emitted, and the run ends")
    func stopByEmit() throws {
        let path = try Self.interleavedCapture()
        let stopped = try Self.outcome(path, concurrently: true, stopAfter: 300)
        let all = try Self.outcome(path, concurrently: false)
        #expect(stopped.events.count == 300)
        #expect(Array(all.events.prefix(300)) == stopped.events, "what was emitted is what run emits first")
        #expect(!stopped.failed, "reading stopped before the cut-off record")
    }
}
