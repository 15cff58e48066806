import AMQP
import AMQPViews
import Capture
import Dissection
import Foundation
import MQTT
import MQTTViews
import Pipeline
import Render
import Testing

/// `PDUDetail.facts` (what the table format runs with) must count exactly what the field tree
/// says: the same facts, problems and table, PDU by PDU, on real and hostile captures.
@Suite struct FactsDetailTests {
    struct Seen: Equatable, CustomStringConvertible {
        var frame: Int
        var stream: Int
        var direction: Direction
        var facts: PDUFacts
        var problems: [String]
        var description: String { "#\(frame) stream \(stream) \(direction) \(facts) \(problems)" }
    }

    /// The default ports, and those a sample's `.args` file assigns with `--decode-as PORT=PROTO`.
    static func registry(_ detail: PDUDetail, for path: String) -> ProtocolRegistry {
        var mqtt = MQTTOptions()
        mqtt.detail = detail
        var amqp = AMQPOptions()
        amqp.detail = detail
        var registry = ProtocolRegistry()
        registry.register("mqtt", ports: [1883]) { MQTTConnectionDissector(info: $0, options: mqtt) }
        registry.register("amqp", ports: [5672]) { AMQPConnectionDissector(info: $0, options: amqp) }
        let args = GoldenTests.arguments(for: URL(fileURLWithPath: path).lastPathComponent)
        for (option, value) in zip(args, args.dropFirst()) where option == "--decode-as" {
            let parts = value.split(separator: "=")
            if parts.count == 2, let port = UInt16(parts[0]) { _ = registry.assign(port: port, to: String(parts[1])) }
        }
        return registry
    }

    /// Every PDU's facts and problems, the table, and how many PDUs took the fast path (with
    /// `counted`, those that came as counted values, by protocol, are in `fast` too, and alone
    /// under `counted PROTOCOL`; `runs`: how many `.counted` events carried them).
    static func run(_ path: String, _ detail: PDUDetail, counted: Bool = false,
                    maxPDUs: Int? = nil) throws -> (seen: [Seen], table: String, fast: [String: Int], runs: Int) {
        var reader = try CaptureFileReader(path: path)
        defer { reader.close() }
        let pipeline = Pipeline(registry: registry(detail, for: path), options: PipelineOptions(maxPDUs: maxPDUs, countedPDUs: counted))
        var runs = 0
        var table = TableRenderer(options: RenderOptions(showSecrets: false, color: false, showTree: true, maxTableRows: 1000))
        var seen: [Seen] = []
        var fast: [String: Int] = [:]
        var ignored = ""
        do {
            try pipeline.run(&reader) { event in
                table.render(event, into: &ignored)
                if case .pdu(let e) = event {
                    let ctx = e.context, direction = e.direction, pdu = e.pdu
                    if pdu.facts != nil {
                        fast[pdu.protocolName, default: 0] += 1
                        #expect(pdu.fields.isEmpty, "a fast-path PDU builds no tree")
                    }
                    seen.append(Seen(frame: ctx.frame, stream: ctx.stream, direction: direction, facts: pdu.summaryFacts,
                                     problems: pdu.problems.map { "\($0.code): \($0.description)" }))
                }
                if case .counted(let run) = event {
                    #expect(counted, "counted PDUs only when the pipeline is asked for them")
                    #expect(!run.pdus.isEmpty, "a run has PDUs")
                    runs += 1
                    for pdu in run.pdus {
                        fast[run.protocolName, default: 0] += 1
                        fast["counted " + run.protocolName, default: 0] += 1
                        seen.append(Seen(frame: run.context.frame, stream: run.context.stream, direction: run.direction,
                                         facts: pdu.facts, problems: []))
                    }
                }
                return true
            }
        } catch is CaptureError {
            // A capture cut short: what came before is compared all the same.
        }
        var out = ""
        table.finish(into: &out)
        return (seen, out, fast, runs)
    }

    static func captures() -> [String] {
        Repo.sampleCaptures().map { Repo.samples.appendingPathComponent($0).path } + Repo.suricataCaptures()
    }

    @Test("facts detail gives the tree's facts, problems and table, PDU by PDU", arguments: captures())
    func sameAsTree(capture: String) throws {
        let tree = try Self.run(capture, .tree)
        let facts = try Self.run(capture, .facts)
        #expect(tree.fast.isEmpty, "the tree detail never takes the fast path")
        #expect(!tree.seen.isEmpty, "the capture has PDUs to compare")
        #expect(facts.seen.count == tree.seen.count)
        for (a, b) in zip(tree.seen, facts.seen) where a != b {
            Issue.record("tree: \(a)\nfacts: \(b)")
            break
        }
        #expect(facts.table == tree.table)
    }

    @Test("the fast path is taken for the frequent MQTT and AMQP PDUs of the samples")
    func fastPathTaken() throws {
        var fast: [String: Int] = [:]
        var total = 0
        for capture in Repo.sampleCaptures() {
            let run = try Self.run(Repo.samples.appendingPathComponent(capture).path, .facts)
            fast.merge(run.fast, uniquingKeysWith: +)
            total += run.seen.count
        }
        // The samples hold hundreds of PUBLISHes, acknowledgements, deliveries, headers and bodies.
        #expect(fast["mqtt", default: 0] > 100)
        #expect(fast["amqp", default: 0] > 100)
        #expect(fast.values.reduce(0, +) < total, "connection set-up and problems still take the full decoder")
    }

    @Test("counted PDUs (what a table run asks for) give the boxes' facts and the same table, PDU by PDU",
          arguments: captures())
    func countedSameAsBoxes(capture: String) throws {
        let boxes = try Self.run(capture, .facts)
        let counted = try Self.run(capture, .facts, counted: true)
        #expect(boxes.runs == 0)
        #expect(counted.seen.count == boxes.seen.count)
        for (a, b) in zip(boxes.seen, counted.seen) where a != b {
            Issue.record("boxes: \(a)\ncounted: \(b)")
            break
        }
        #expect(counted.table == boxes.table)
        // Every PDU the fast paths read comes counted or as a box with facts, as without counting.
        #expect(counted.fast["mqtt", default: 0] == boxes.fast["mqtt", default: 0])
        #expect(counted.fast["amqp", default: 0] == boxes.fast["amqp", default: 0])
    }

    @Test("the samples' frequent MQTT PDUs and AMQP frames come counted, several to a run")
    func countedTaken() throws {
        var fast = 0, runs = 0, total = 0, amqp = 0
        for capture in Repo.sampleCaptures() {
            let run = try Self.run(Repo.samples.appendingPathComponent(capture).path, .facts, counted: true)
            fast += run.fast["counted mqtt", default: 0] + run.fast["counted amqp", default: 0]
            amqp += run.fast["counted amqp", default: 0]
            runs += run.runs
            total += run.seen.count
        }
        #expect(fast > 100)
        #expect(amqp > 100, "the AMQP samples' deliveries, headers, bodies and acknowledgements")
        #expect(runs > 0 && runs < fast, "a segment of several PDUs makes one run of them")
        #expect(fast < total)
    }

    @Test("a PDU limit (-c) cuts a run of counted PDUs where it cuts the boxes", arguments: [1, 7, 40, 41, 130, 257])
    func countedCutByLimit(limit: Int) throws {
        let capture = Repo.samples.appendingPathComponent("mqtt-burst.pcap").path
        let boxes = try Self.run(capture, .facts, maxPDUs: limit)
        let counted = try Self.run(capture, .facts, counted: true, maxPDUs: limit)
        #expect(boxes.seen.count == limit)
        #expect(counted.seen == boxes.seen)
        #expect(counted.table == boxes.table)
    }
}
