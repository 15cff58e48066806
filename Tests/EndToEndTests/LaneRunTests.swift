import Capture
import Dissection
import Foundation
import MQTT
@testable import Pipeline
import Render
import Testing

/// `Pipeline.runInLanes` (what the command line runs for text and JSON on files: connections
/// dissected on two threads, the second lane's bytes copied back in their place) must write
/// exactly the bytes `run` gives one renderer, whichever lane each connection is in and however
/// often it moves.
@Suite struct LaneRunTests {
    enum Format { case text, json }

    struct Outcome: Equatable {
        var bytes: [UInt8]
        var failed: Bool
        /// Every counter of the run (PDUs, problems, packets, connections, gap bytes…).
        var statistics: PipelineStatistics
    }

    /// A renderer the second lane's closure can hold (it runs on the reading thread).
    final class LaneBox: @unchecked Sendable {
        var text: TextRenderer
        var json: JSONRenderer
        var events = 0
        var onCallerThread = 0
        let caller = pthread_self()
        init(_ options: RenderOptions) {
            text = TextRenderer(options: options)
            json = JSONRenderer(options: options)
        }
        func render(_ event: OutputEvent, _ format: Format, into sink: inout ByteSink) {
            events += 1
            if pthread_equal(pthread_self(), caller) != 0 { onCallerThread += 1 }
            switch format {
            case .text: text.render(event, into: &sink)
            case .json: json.render(event, into: &sink)
            }
        }
    }

    static let options = RenderOptions(showSecrets: false, color: false, showTree: true, maxTableRows: 1000)

    static func registry(_ format: Format, for path: String) -> ProtocolRegistry {
        FactsDetailTests.registry(format == .text ? .text(options.textTreeStyle) : .json, for: path)
    }

    /// What `run` writes with one renderer.
    static func alone(_ path: String, _ format: Format, maxPDUs: Int? = nil, firstStream: Int = 0) throws -> Outcome {
        var reader = try CaptureFileReader(path: path)
        defer { reader.close() }
        let pipeline = Pipeline(registry: registry(format, for: path), options: PipelineOptions(maxPDUs: maxPDUs, firstStream: firstStream))
        let box = LaneBox(options)
        var sink = ByteSink()
        var failed = false
        do {
            try pipeline.run(&reader) { event in
                box.render(event, format, into: &sink)
                return true
            }
        } catch is CaptureError {
            failed = true
        }
        return outcome(Array(sink.bytes), failed, pipeline)
    }

    /// What `runInLanes` writes, with batches of `batchPackets` packets and connections moved as
    /// `policy` says; `stopAfter` bytes written, `eventDone` stops the run. Also the pipeline,
    /// and the second lane's renderer.
    static func inLanes(_ path: String, _ format: Format, batchPackets: Int = Pipeline.batchPackets,
                        policy: LaneBalancer.Policy = .byWaits, maxPDUs: Int? = nil, firstStream: Int = 0,
                        stopAfter: Int? = nil) throws -> (Outcome, Pipeline, LaneBox) {
        var reader = try CaptureFileReader(path: path)
        defer { reader.close() }
        let pipeline = Pipeline(registry: registry(format, for: path), options: PipelineOptions(maxPDUs: maxPDUs, firstStream: firstStream))
        pipeline.batchPacketLimit = batchPackets
        // Two batches in flight: a move asked for comes back within a few batches.
        if batchPackets < Pipeline.batchPackets { pipeline.batchesInFlightInLanes = 2 }
        let first = LaneBox(options), second = LaneBox(options)
        var sink = ByteSink()
        var written: [UInt8] = []
        var failed = false
        let caller = pthread_self()
        do {
            try pipeline.runInLanes(&reader, into: &sink, render: { event, sink in
                #expect(pthread_equal(pthread_self(), caller) != 0, "lane 0 renders on the caller's thread")
                first.render(event, format, into: &sink)
            }, secondLane: { event, sink in
                second.render(event, format, into: &sink)
            }, balancing: policy, eventDone: { sink in
                // Written out in pieces, as the command line does: the sink is emptied.
                written += sink.bytes
                sink.removeAll()
                return stopAfter.map { written.count < $0 } ?? true
            })
        } catch is CaptureError {
            failed = true
        }
        written += sink.bytes
        return (outcome(written, failed, pipeline), pipeline, second)
    }

    static func outcome(_ bytes: [UInt8], _ failed: Bool, _ pipeline: Pipeline) -> Outcome {
        Outcome(bytes: bytes, failed: failed, statistics: pipeline.statistics)
    }

    static func expectSame(_ lanes: Outcome, _ alone: Outcome, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(lanes == alone, sourceLocation: sourceLocation)
        guard lanes.bytes != alone.bytes else { return }
        let a = String(decoding: alone.bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let b = String(decoding: lanes.bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        if let i = (0..<min(a.count, b.count)).first(where: { a[$0] != b[$0] }) {
            Issue.record("first difference at line \(i):\n\(a[i])\n---\n\(b[i])", sourceLocation: sourceLocation)
        } else {
            Issue.record("one output is a prefix of the other: \(a.count) lines against \(b.count)", sourceLocation: sourceLocation)
        }
    }

    @Test("40 interleaved connections, connections moved between lanes every other batch: the bytes of run, in text and JSON",
          arguments: [Format.text, .json])
    func interleavedWithMoves(format: Format) throws {
        let path = try ConcurrentRunTests.interleavedCapture()
        let alone = try Self.alone(path, format)
        let (lanes, pipeline, second) = try Self.inLanes(path, format, batchPackets: 8, policy: .everyWindow(batches: 2))
        #expect(alone.failed, "the cut-off record is reported")
        #expect(alone.statistics.connections == 40)
        #expect(pipeline.laneMoves > 20, "connections changed lanes many times")
        #expect(second.events > 100 && second.onCallerThread == 0, "the second lane rendered on the reading thread")
        Self.expectSame(lanes, alone)
    }

    @Test("40 interleaved connections, balanced by the threads' waits: the bytes of run")
    func interleavedBalanced() throws {
        let path = try ConcurrentRunTests.interleavedCapture()
        let alone = try Self.alone(path, .text)
        let (lanes, _, _) = try Self.inLanes(path, .text)
        Self.expectSame(lanes, alone)
    }

    @Test("samples and the Suricata captures, batches of 3 packets, a move after every batch: the bytes of run",
          arguments: FactsDetailTests.captures())
    func samples(capture: String) throws {
        for format in [Format.text, .json] {
            let alone = try Self.alone(capture, format)
            let (lanes, _, _) = try Self.inLanes(capture, format, batchPackets: 3, policy: .everyWindow(batches: 1))
            #expect(!alone.bytes.isEmpty)
            Self.expectSame(lanes, alone)
        }
    }

    @Test("a segment of 1,000 acknowledgements in lane 1 (its text longer than a chunk): the bytes of run")
    func denseSegment() throws {
        let path = try ConcurrentRunTests.denseSegmentCapture()
        for format in [Format.text, .json] {
            // The first connection starts in lane 1 (numbered from 1, as when lanes went by the
            // number's parity): its bytes come back in chunks.
            let alone = try Self.alone(path, format, firstStream: 1)
            let (lanes, _, second) = try Self.inLanes(path, format, firstStream: 1)
            #expect(second.events > 1_000, "lane 1 rendered the acknowledgements")
            #expect(alone.bytes.count > 2 * LaneChunks.chunkBytes)
            Self.expectSame(lanes, alone)
        }
    }

    @Test("eventDone returning false: the bytes written are the first of run's, and the run ends")
    func stop() throws {
        let path = try ConcurrentRunTests.interleavedCapture()
        let alone = try Self.alone(path, .text)
        let (stopped, _, _) = try Self.inLanes(path, .text, batchPackets: 8, policy: .everyWindow(batches: 2), stopAfter: 50_000)
        #expect(stopped.bytes.count >= 50_000 && stopped.bytes.count < alone.bytes.count / 2)
        #expect(Array(alone.bytes.prefix(stopped.bytes.count)) == stopped.bytes)
        #expect(!stopped.failed, "reading stopped before the cut-off record")
    }

    @Test("with a PDU limit, it is run")
    func pduLimit() throws {
        let path = try ConcurrentRunTests.interleavedCapture()
        let alone = try Self.alone(path, .text, maxPDUs: 150)
        let (lanes, _, second) = try Self.inLanes(path, .text, maxPDUs: 150)
        #expect(alone.statistics.pdus == 150)
        #expect(second.events == 0)
        Self.expectSame(lanes, alone)
    }
}
