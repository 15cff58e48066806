import Capture
import Dissection
import Foundation
@testable import Pipeline
@testable import Render
import Testing

/// The table in lanes (what the command line runs for `--format table` on files): the caller's
/// lane counts its events as they come, the second lane writes records of its own
/// (`TableRecordWriter`) that the caller's thread counts in their place (`TableRecordReader`).
/// The tables must be exactly those of one renderer given every event by `run`, whichever lane
/// each connection is in, however often it moves, and wherever the row limits cut.
@Suite struct TableLaneTests {
    static func options(maxTableRows: Int) -> RenderOptions {
        RenderOptions(showSecrets: false, color: false, showTree: true, maxTableRows: maxTableRows)
    }

    /// The tables `run` makes with one renderer.
    static func alone(_ path: String, maxTableRows: Int = 1000) throws -> String {
        var reader = try CaptureFileReader(path: path)
        defer { reader.close() }
        let pipeline = Pipeline(registry: FactsDetailTests.registry(.facts, for: path))
        var table = TableRenderer(options: options(maxTableRows: maxTableRows))
        do {
            try pipeline.run(&reader) { event in
                var nothing = ""
                table.render(event, into: &nothing)
                return true
            }
        } catch is CaptureError {}
        var out = ""
        table.finish(into: &out)
        return out
    }

    /// A table the two closures on the caller's thread share.
    final class TableBox {
        var table: TableRenderer
        init(_ table: TableRenderer) { self.table = table }
    }

    /// The tables of a run in lanes with batches of `batchPackets` packets and connections moved
    /// as `policy` says; also how many records the second lane wrote, and the pipeline.
    static func inLanes(_ path: String, maxTableRows: Int = 1000, batchPackets: Int = Pipeline.batchPackets,
                        policy: LaneBalancer.Policy = .byWaits, counted: Bool = false,
                        writer: TableRecordWriter = TableRecordWriter()) throws -> (String, Int, Pipeline) {
        var reader = try CaptureFileReader(path: path)
        defer { reader.close() }
        let pipeline = Pipeline(registry: FactsDetailTests.registry(.facts, for: path), options: PipelineOptions(countedPDUs: counted))
        pipeline.batchPacketLimit = batchPackets
        if batchPackets < Pipeline.batchPackets { pipeline.batchesInFlightInLanes = 2 }
        let box = TableBox(TableRenderer(options: options(maxTableRows: maxTableRows)))
        let reading = TableRecordReader()
        let records = Counter()
        var sink = ByteSink()
        do {
            try pipeline.runInLanes(&reader, into: &sink, render: { event, sink in
                box.table.count(event)
            }, secondLane: { event, sink in
                records.count += 1
                writer.write(event, into: &sink)
            }, secondLaneBatchEnd: { leaving, isLast, sink in
                writer.flushRepeats(of: leaving, all: isLast, into: &sink)
            }, balancing: policy, eventDone: { sink in
                reading.read(sink.bytes, into: &box.table)
                sink.removeAll()
                return true
            })
        } catch is CaptureError {}
        var out = ""
        box.table.finish(into: &out)
        return (out, records.count, pipeline)
    }

    final class Counter: @unchecked Sendable { var count = 0 }

    static func expectSame(_ lanes: String, _ alone: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(lanes == alone, sourceLocation: sourceLocation)
        guard lanes != alone else { return }
        let a = alone.split(separator: "\n", omittingEmptySubsequences: false)
        let b = lanes.split(separator: "\n", omittingEmptySubsequences: false)
        if let i = (0..<min(a.count, b.count)).first(where: { a[$0] != b[$0] }) {
            Issue.record("first difference at line \(i):\n\(a[i])\n---\n\(b[i])", sourceLocation: sourceLocation)
        }
    }

    @Test("samples and the Suricata captures, batches of 3 packets, a move after every batch: the tables of run",
          arguments: FactsDetailTests.captures())
    func samples(capture: String) throws {
        let alone = try Self.alone(capture)
        let (lanes, _, _) = try Self.inLanes(capture, batchPackets: 3, policy: .everyWindow(batches: 1))
        #expect(alone.contains("Connections"))
        Self.expectSame(lanes, alone)
    }

    @Test("counted PDUs (as the command line runs the table), batches of 3 packets, a move after every batch, rows unlimited and limited to 2: the tables of run with boxes alone",
          arguments: FactsDetailTests.captures())
    func samplesCounted(capture: String) throws {
        for rows in [1000, 2] {
            let alone = try Self.alone(capture, maxTableRows: rows)
            let (lanes, _, _) = try Self.inLanes(capture, maxTableRows: rows, batchPackets: 3, policy: .everyWindow(batches: 1),
                                                 counted: true)
            Self.expectSame(lanes, alone)
        }
    }

    @Test("samples and the Suricata captures, rows limited to 2 and one string named (AMQP exchanges, queues and closes cut, strings in full): the tables of run",
          arguments: FactsDetailTests.captures())
    func samplesCut(capture: String) throws {
        let alone = try Self.alone(capture, maxTableRows: 2)
        let (lanes, _, _) = try Self.inLanes(capture, maxTableRows: 2, batchPackets: 2, policy: .everyWindow(batches: 1),
                                             writer: TableRecordWriter(maxNamedStrings: 1))
        Self.expectSame(lanes, alone)
    }

    @Test("the writer's state stays within its bounds: connections introduced, and named strings by count, bytes and length")
    func writerBounded() throws {
        let path = try ConcurrentRunTests.interleavedCapture()
        let alone = try Self.alone(path)
        // Moved every other batch, connections close in either lane: the introduced set is emptied when full.
        let writer = TableRecordWriter(maxNamedStrings: 1_000, maxNamedBytes: 40, maxNamedLength: 6, maxIntroduced: 3)
        let (lanes, _, pipeline) = try Self.inLanes(path, batchPackets: 8, policy: .everyWindow(batches: 2), writer: writer)
        #expect(pipeline.laneMoves > 20)
        #expect(writer.introducedCount <= 3)
        #expect(writer.namedBytes > 0 && writer.namedBytes <= 40)
        Self.expectSame(lanes, alone)
    }

    @Test("40 interleaved connections with gaps and closes, moved every other batch, rows limited to 7: the tables of run, the limits cut where they do")
    func rowLimits() throws {
        let path = try ConcurrentRunTests.interleavedCapture()
        let alone = try Self.alone(path, maxTableRows: 7)
        #expect(alone.contains("more connections not listed") && alone.contains("PUBLISHes to topics not listed"),
                "the limits cut connections and topics")
        #expect(alone.contains("Problems"), "the gaps are counted")
        let (lanes, records, pipeline) = try Self.inLanes(path, maxTableRows: 7, batchPackets: 8, policy: .everyWindow(batches: 2))
        #expect(pipeline.laneMoves > 20, "connections changed lanes many times")
        #expect(records > 20, "the second lane wrote records")
        Self.expectSame(lanes, alone)
    }

    @Test("PDUs that count alike are summed by the lane (topics, kinds and channels of 40 connections moved every other batch, rows limited to 7): the tables of run")
    func summed() throws {
        let path = try ConcurrentRunTests.interleavedCapture()
        for rows in [1000, 7] {
            let alone = try Self.alone(path, maxTableRows: rows)
            let writer = TableRecordWriter()
            let (lanes, records, _) = try Self.inLanes(path, maxTableRows: rows, batchPackets: 8, policy: .everyWindow(batches: 2),
                                                       writer: writer)
            #expect(writer.summedPDUs > records / 4, "most of the lane's PDUs repeat a kind, topic and connection counted before")
            #expect(writer.keptRepeats == 0, "every sum is written by the end")
            Self.expectSame(lanes, alone)
            // Two sums and three connections at most: written early, and let go, over and over.
            let bounded = TableRecordWriter(maxNamedStrings: TableRecord.maxNamedStrings, maxIntroduced: 3, maxRepeats: 2)
            let (cut, _, _) = try Self.inLanes(path, maxTableRows: rows, batchPackets: 8, policy: .everyWindow(batches: 2),
                                               writer: bounded)
            #expect(bounded.summedPDUs > 0)
            // The bounds are reached and held: three connections; a third sum is written at once.
            #expect(bounded.peakLaneConnections == 3)
            #expect(bounded.peakRepeats == 3)
            Self.expectSame(cut, alone)
        }
    }

    @Test("sums and the lane's connections within their bounds (2 sums, 3 connections): written early, the same tables",
          arguments: FactsDetailTests.captures())
    func summedBounded(capture: String) throws {
        let alone = try Self.alone(capture)
        let writer = TableRecordWriter(maxNamedStrings: TableRecord.maxNamedStrings, maxIntroduced: 3, maxRepeats: 2)
        let (lanes, _, _) = try Self.inLanes(capture, batchPackets: 4, policy: .everyWindow(batches: 1), writer: writer)
        #expect(writer.peakLaneConnections <= 3)
        #expect(writer.peakRepeats <= 3, "a third sum is written at once")
        #expect(writer.keptRepeats == 0)
        Self.expectSame(lanes, alone)
    }

    @Test("more distinct strings than the writer names by number: the rest written in full, the same tables")
    func namedStringsRunOut() throws {
        let path = try ConcurrentRunTests.interleavedCapture()
        let alone = try Self.alone(path)
        let (lanes, _, _) = try Self.inLanes(path, batchPackets: 8, policy: .everyWindow(batches: 2),
                                             writer: TableRecordWriter(maxNamedStrings: 3))
        #expect(alone.contains("t/39/2"), "120 topics")
        Self.expectSame(lanes, alone)
    }

    @Test("balanced by the threads' waits: the tables of run")
    func balanced() throws {
        let path = try ConcurrentRunTests.interleavedCapture()
        let (lanes, _, _) = try Self.inLanes(path)
        Self.expectSame(lanes, try Self.alone(path))
    }
}
