import Capture
import Dissection
import Foundation
import MQTT
@testable import Pipeline
import Render
import Testing

/// `Pipeline.runInWorkers` (what the command line runs on capture files: connections shared out
/// among workers by a hash of their number, each worker's bytes copied back in their place, tables
/// merged at the end) must write exactly what `run` gives one renderer, for any number of workers,
/// any batch size, and wherever the tables' row limits cut.
@Suite struct WorkerRunTests {
    enum Format: CustomStringConvertible {
        case text, json
        /// The table as the command line runs it (counted PDUs), its rows limited.
        case table(rows: Int)
        var description: String {
            switch self {
            case .text: "text"
            case .json: "json"
            case .table(let rows): "table (\(rows) rows)"
            }
        }
    }

    struct Outcome: Equatable {
        var bytes: [UInt8]
        var failed: Bool
        /// Every counter of the run (PDUs, problems, packets, connections, gap bytes…).
        var statistics: PipelineStatistics
    }

    /// One renderer of any format, and the threads it rendered on.
    struct AnyFormat: EventRenderer {
        var text: TextRenderer?
        var json: JSONRenderer?
        var table: TableRenderer?
        let events: Events

        init(_ format: Format, events: Events) {
            self.events = events
            switch format {
            case .text: text = TextRenderer(options: WorkerRunTests.options(rows: 1000))
            case .json: json = JSONRenderer(options: WorkerRunTests.options(rows: 1000))
            case .table(let rows): table = TableRenderer(options: WorkerRunTests.options(rows: rows))
            }
        }

        mutating func render(_ event: OutputEvent, into sink: inout ByteSink) {
            events.note()
            text?.render(event, into: &sink)
            json?.render(event, into: &sink)
            table?.render(event, into: &sink)
        }

        mutating func setPosition(_ position: Int) { table?.setPosition(position) }

        mutating func merge(_ other: AnyFormat) {
            if let other = other.table { table?.merge(other) }
        }

        /// What `finish` adds (a table's summaries).
        mutating func finish() -> [UInt8] {
            var out = ""
            table?.finish(into: &out)
            return Array(out.utf8)
        }
    }

    /// Events rendered, and how many of them off the caller's thread.
    final class Events: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var count = 0
        private(set) var elsewhere = 0
        let caller = pthread_self()
        func note() {
            let off = pthread_equal(pthread_self(), caller) == 0
            lock.lock()
            count += 1
            if off { elsewhere += 1 }
            lock.unlock()
        }
    }

    static func options(rows: Int) -> RenderOptions {
        RenderOptions(showSecrets: false, color: false, showTree: true, maxTableRows: rows)
    }

    static func registry(_ format: Format, for path: String) -> ProtocolRegistry {
        let detail: PDUDetail
        switch format {
        case .text: detail = .text
        case .json: detail = .json
        case .table: detail = .facts
        }
        return FactsDetailTests.registry(detail, for: path)
    }

    static func pipelineOptions(_ format: Format, maxPDUs: Int?, firstStream: Int, firstEvent: Int) -> PipelineOptions {
        var options = PipelineOptions(maxPDUs: maxPDUs, firstStream: firstStream)
        if case .table = format { options.countedPDUs = true }
        options.firstEvent = firstEvent
        return options
    }

    /// What `run` writes with one renderer, over each capture in turn (the renderer kept from one
    /// to the next, as the command line keeps it).
    static func alone(_ paths: [String], _ format: Format, maxPDUs: Int? = nil, firstStream: Int = 0,
                      analysis: SpanningAnalysis? = nil) throws -> Outcome {
        var renderer = AnyFormat(format, events: Events())
        var sink = ByteSink()
        var failed = false
        var statistics = PipelineStatistics()
        var streams = firstStream
        for path in paths {
            var reader = try CaptureFileReader(path: path)
            defer { reader.close() }
            let pipeline = Pipeline(registry: registry(format, for: path),
                                    options: pipelineOptions(format, maxPDUs: maxPDUs, firstStream: streams, firstEvent: 0))
            do {
                try pipeline.run(&reader) { event in
                    if let analysis, analysis.reads(event) { analysis.observe(event) }
                    renderer.render(event, into: &sink)
                    return true
                }
            } catch is CaptureError {
                failed = true
            }
            statistics = pipeline.statistics
            streams += statistics.connections
        }
        return Outcome(bytes: Array(sink.bytes) + renderer.finish(), failed: failed, statistics: statistics)
    }

    /// What `runInWorkers` writes with `workers` workers and batches of `batchPackets` packets,
    /// over each capture in turn; `stopAfter` bytes written, `eventDone` stops the run. Also the
    /// renderers' events.
    static func inWorkers(_ paths: [String], _ format: Format, workers: Int, batchPackets: Int = Pipeline.batchPackets,
                          maxPDUs: Int? = nil, firstStream: Int = 0, stopAfter: Int? = nil,
                          analysis: SpanningAnalysis? = nil) throws -> (Outcome, Events) {
        let events = Events()
        var renderer = AnyFormat(format, events: events)
        var sink = ByteSink()
        var written: [UInt8] = []
        var failed = false
        var statistics = PipelineStatistics()
        var streams = firstStream, eventsSoFar = 0
        for path in paths {
            var reader = try CaptureFileReader(path: path)
            defer { reader.close() }
            let pipeline = Pipeline(registry: registry(format, for: path),
                                    options: pipelineOptions(format, maxPDUs: maxPDUs, firstStream: streams, firstEvent: eventsSoFar))
            pipeline.batchPacketLimit = batchPackets
            // Two batches in flight: the threads wait on each other often.
            if batchPackets < Pipeline.batchPackets { pipeline.batchesInFlightInWorkers = 2 }
            do {
                try pipeline.runInWorkers(&reader, workers: workers, renderer: &renderer,
                                          makeRenderer: { AnyFormat(format, events: events) }, analysis: analysis, into: &sink) { sink in
                    // Written out in pieces, as the command line does: the sink is emptied.
                    written += sink.bytes
                    sink.removeAll()
                    return stopAfter.map { written.count < $0 } ?? true
                }
            } catch is CaptureError {
                failed = true
            }
            statistics = pipeline.statistics
            streams += statistics.connections
            eventsSoFar = pipeline.eventsRead
        }
        written += sink.bytes
        return (Outcome(bytes: written + renderer.finish(), failed: failed, statistics: statistics), events)
    }

    static func expectSame(_ workers: Outcome, _ alone: Outcome, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(workers == alone, sourceLocation: sourceLocation)
        guard workers.bytes != alone.bytes else { return }
        let a = String(decoding: alone.bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let b = String(decoding: workers.bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        if let i = (0..<min(a.count, b.count)).first(where: { a[$0] != b[$0] }) {
            Issue.record("first difference at line \(i):\n\(a[i])\n---\n\(b[i])", sourceLocation: sourceLocation)
        } else {
            Issue.record("one output is a prefix of the other: \(a.count) lines against \(b.count)", sourceLocation: sourceLocation)
        }
    }

    @Test("40 interleaved connections with gaps and closes, 2 to 5 workers, batches of 8 packets: the bytes and counters of run",
          arguments: [Format.text, .json, .table(rows: 1000), .table(rows: 7)])
    func interleaved(format: Format) throws {
        let path = try ConcurrentRunTests.interleavedCapture()
        let alone = try Self.alone([path], format)
        #expect(alone.failed, "the cut-off record is reported")
        #expect(alone.statistics.connections == 40)
        for workers in 2...5 {
            let (outcome, events) = try Self.inWorkers([path], format, workers: workers, batchPackets: 8)
            #expect(events.elsewhere > 100 && events.elsewhere < events.count,
                    "the workers rendered on their threads and on the caller's (\(events.elsewhere) of \(events.count))")
            Self.expectSame(outcome, alone)
        }
    }

    @Test("samples and the Suricata captures, 3 workers, batches of 3 packets: the bytes of run, tables with rows limited to 2 too",
          arguments: FactsDetailTests.captures())
    func samples(capture: String) throws {
        for format in [Format.text, .json, .table(rows: 1000), .table(rows: 2)] {
            let alone = try Self.alone([capture], format)
            let (outcome, _) = try Self.inWorkers([capture], format, workers: 3, batchPackets: 3)
            #expect(!alone.bytes.isEmpty)
            Self.expectSame(outcome, alone)
        }
    }

    @Test("two captures in a row, one renderer kept: the tables of run, rows limited to 5 cut in the same places")
    func capturesInARow() throws {
        let paths = [try ConcurrentRunTests.interleavedCapture(),
                     Repo.samples.appendingPathComponent("mqtt311-basic.pcap").path,
                     Repo.samples.appendingPathComponent("amqp-consume-ack.pcap").path]
        for format in [Format.table(rows: 5), .table(rows: 1000), .text] {
            let alone = try Self.alone(paths, format)
            let (outcome, _) = try Self.inWorkers(paths, format, workers: 3, batchPackets: 5)
            Self.expectSame(outcome, alone)
        }
    }

    @Test("a segment of 1,000 acknowledgements in another worker (its text longer than a chunk): the bytes of run")
    func denseSegment() throws {
        let path = try ConcurrentRunTests.denseSegmentCapture()
        // The first connection's number is one that worker 1 of 2 owns: its bytes come back in chunks.
        let first = (0..<100).first { Batch.worker(of: $0, among: 2) == 1 }!
        for format in [Format.text, .json] {
            let alone = try Self.alone([path], format, firstStream: first)
            let (outcome, events) = try Self.inWorkers([path], format, workers: 2, firstStream: first)
            #expect(events.elsewhere > 1_000, "worker 1 rendered the acknowledgements")
            #expect(alone.bytes.count > 2 * RenderedChunks.chunkBytes)
            Self.expectSame(outcome, alone)
        }
    }

    @Test("eventDone returning false: the bytes written are the first of run's, and the run ends")
    func stop() throws {
        let path = try ConcurrentRunTests.interleavedCapture()
        let alone = try Self.alone([path], .text)
        let (stopped, _) = try Self.inWorkers([path], .text, workers: 3, batchPackets: 8, stopAfter: 50_000)
        #expect(stopped.bytes.count >= 50_000 && stopped.bytes.count < alone.bytes.count / 2)
        #expect(Array(alone.bytes.prefix(stopped.bytes.count)) == stopped.bytes)
        #expect(!stopped.failed, "reading stopped before the cut-off record")
    }

    @Test("with a PDU limit, or one worker, it is run on the caller's thread")
    func oneThread() throws {
        let path = try ConcurrentRunTests.interleavedCapture()
        let limited = try Self.alone([path], .text, maxPDUs: 150)
        let (withLimit, events) = try Self.inWorkers([path], .text, workers: 4, maxPDUs: 150)
        #expect(limited.statistics.pdus == 150)
        #expect(events.count > 0 && events.elsewhere == 0)
        Self.expectSame(withLimit, limited)
        let alone = try Self.alone([path], .json)
        let (one, oneEvents) = try Self.inWorkers([path], .json, workers: 1)
        #expect(oneEvents.count > 0 && oneEvents.elsewhere == 0)
        Self.expectSame(one, alone)
    }

    /// What a spanning analysis is handed: each PDU, run of counted PDUs and close, in order.
    // Unchecked: `observe` runs on the caller's thread alone (counted when it does not), and
    // `reads` reads nothing of it.
    final class Recording: SpanningAnalysis, @unchecked Sendable {
        let caller = pthread_self()
        var seen: [String] = []
        var offThread = 0

        func reads(_ event: OutputEvent) -> Bool {
            switch event {
            case .pdu, .counted, .connectionClosed, .analysis: return true
            case .streamNote, .captureNote: return false
            }
        }

        func observe(_ event: OutputEvent) {
            if pthread_equal(pthread_self(), caller) == 0 { offThread += 1 }
            switch event {
            case .pdu(let e): seen.append("\(e.context.frame) \(e.context.stream) \(e.direction) \(e.pdu.summary)")
            case .counted(let run): seen.append("\(run.context.frame) \(run.context.stream) \(run.pdus.map(\.kind))")
            case .connectionClosed(let c): seen.append("closed \(c.stream)")
            case .analysis(let r): seen.append("analysis \(r.kind) \(r.frames)")
            case .streamNote, .captureNote: seen.append("a note it does not read")
            }
        }
    }

    @Test("a spanning analysis is handed every connection's events in capture order, on the caller's thread, for 2 to 4 workers",
          arguments: [Format.text, .table(rows: 1000)])
    func spanningAnalysis(format: Format) throws {
        let paths = [try ConcurrentRunTests.interleavedCapture(), Repo.samples.appendingPathComponent("mqtt311-basic.pcap").path,
                     Repo.samples.appendingPathComponent("amqp-errors.pcap").path]
        for path in paths {
            let alone = Recording()
            _ = try Self.alone([path], format, analysis: alone)
            #expect(alone.seen.count > 20)
            #expect(Set(alone.seen.compactMap { $0.split(separator: " ").dropFirst().first }).count > 1, "several connections")
            for workers in 2...4 {
                let shared = Recording()
                let (_, events) = try Self.inWorkers([path], format, workers: workers, batchPackets: 8, analysis: shared)
                #expect(events.elsewhere > 0, "other workers made events")
                #expect(shared.offThread == 0)
                #expect(shared.seen.count == alone.seen.count, "\(workers) workers, \(path)")
                if let i = (0..<min(shared.seen.count, alone.seen.count)).first(where: { shared.seen[$0] != alone.seen[$0] }) {
                    Issue.record("\(workers) workers, \(path): event \(i) is \(shared.seen[i]), not \(alone.seen[i])")
                }
            }
        }
    }

    @Test("connections are shared out evenly: 10,000 consecutive numbers among 2 to 8 workers, none with more than 10% over its share")
    func evenShares() {
        for workers in 2...8 {
            var counts = [Int](repeating: 0, count: workers)
            for stream in 0..<10_000 { counts[Int(Batch.worker(of: stream, among: workers))] += 1 }
            #expect(counts.max()! <= 10_000 / workers * 11 / 10, "\(workers) workers: \(counts)")
        }
    }
}
