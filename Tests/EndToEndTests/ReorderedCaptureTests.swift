import Capture
import Dissection
import Foundation
import Pipeline
import Render
import Testing

/// Captures out of causal order (a segment recorded after the other side's ACK of it, or after
/// the reply it caused) must give exactly the PDUs of the ordered original, with the default
/// limits: the samples of real brokers and clients, reordered by `CaptureMangler`.
@Suite struct ReorderedCaptureTests {
    /// Each PDU as its JSON object without the frame and time (the records moved), by
    /// connection and sender, in order; and the stream notes (gaps, conflicts) of the run.
    struct Dissected {
        var pdus: [String: [String]] = [:]
        var notes: [String] = []
        var count: Int { pdus.values.reduce(0) { $0 + $1.count } }
    }

    static func dissect(_ path: String) throws -> Dissected {
        var reader = try CaptureFileReader(path: path)
        defer { reader.close() }
        let pipeline = Pipeline(registry: FactsDetailTests.registry(.tree, for: path))
        var json = JSONRenderer(options: RenderOptions(showSecrets: false, color: false, showTree: true, maxTableRows: 1000))
        var out = Dissected()
        try pipeline.run(&reader) { event in
            switch event {
            case .pdu(let e):
                var line = ""
                json.render(event, into: &line)
                guard var object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
                    Issue.record("not a JSON object: \(line)")
                    return true
                }
                object["frame"] = nil
                object["time"] = nil
                object["ts"] = nil
                // A flow's and a ping's links name frames and times, which reordering changes; a
                // flow's state stays.
                if var mqtt = object["mqtt"] as? [String: Any] {
                    if var flow = mqtt["flow"] as? [String: Any] {
                        for key in ["publish_frame", "previous_frame", "latency_us", "reused_from"] { flow[key] = nil }
                        mqtt["flow"] = flow
                    }
                    mqtt["ping"] = nil
                    object["mqtt"] = mqtt
                }
                // So do an AMQP acknowledgement's and confirm's links; how many they cover stays.
                if var amqp = object["amqp"] as? [String: Any] {
                    for key in ["ack", "confirm"] {
                        guard var link = amqp[key] as? [String: Any] else { continue }
                        for frameKey in ["delivery_frame", "last_delivery_frame", "publish_frame", "last_publish_frame", "latency_us"] {
                            link[frameKey] = nil
                        }
                        amqp[key] = link
                    }
                    amqp["redelivery_of"] = nil
                    if var answers = amqp["answers"] as? [String: Any] {
                        answers["frame"] = nil
                        amqp["answers"] = answers
                    }
                    object["amqp"] = amqp
                }
                let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
                out.pdus["stream \(e.context.stream) from \(e.context.source)", default: []].append(String(decoding: data, as: UTF8.self))
            case .streamNote(let context, let problem):
                out.notes.append("stream \(context.stream) \(problem.code): \(problem.message)")
            default:
                break
            }
            return true
        }
        return out
    }

    enum Variant: String, CaseIterable, Sendable {
        /// Neighbouring data segments of one direction swapped, across the other side's packets.
        case reordered
        /// That, with retransmissions, overlapping re-segmentation and sequence numbers that wrap.
        case combined
    }

    static func mangle(_ sample: String, _ variant: Variant, seed: UInt64) throws -> (path: String, changes: Int) {
        var m = try CaptureMangler(path: Repo.samples.appendingPathComponent(sample).path, seed: seed)
        var changes = 0
        if variant == .combined { m.wrapSequenceNumbers() }
        changes += m.swapNeighbours(probability: 0.5)
        if variant == .combined {
            changes += m.retransmit(probability: 0.2)
            changes += m.resegment(probability: 0.2)
        }
        // The sample's name kept, so that its `.args` (ports to decode) still applies.
        let dir = Scratch.directory + "reordered-\(variant.rawValue)-\(seed)/"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = dir + sample
        try m.write(to: path)
        return (path, changes)
    }

    @Test("a reply recorded before its request keeps its own frame; the request is completed by its own")
    func framesOfHeldBackSegments() throws {
        let sample = "mqtt311-basic.pcap"
        var m = try CaptureMangler(path: Repo.samples.appendingPathComponent(sample).path, seed: 0)
        // Records 4, 5, 6 (frames): the client's CONNECT, the broker's ACK of it, its CONNACK.
        #expect(CaptureMangler.segment(m.records[3].data)?.payloadLength == 26)
        #expect(CaptureMangler.segment(m.records[5].data)?.payloadLength == 4)
        m.delay(3, after: 5)
        let dir = Scratch.directory + "late-connect/"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try m.write(to: dir + sample)
        let out = try runProgram(Repo.binary, ["--brief", "-c", "2", dir + sample])
        let lines = out.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(out.stdout)\(out.stderr)")
        #expect(lines.first?.hasPrefix("#6 ") == true && lines.first?.contains("CONNECT v3.1.1") == true, "\(lines)")
        #expect(lines.last?.hasPrefix("#5 ") == true && lines.last?.contains("CONNACK accepted") == true, "\(lines)")
        // The CONNACK's time is its own record's, earlier than the CONNECT's.
        let times = lines.map { $0.split(separator: " ")[1] }
        #expect(times.count == 2 && times[1] < times[0], "\(lines)")
    }

    @Test("a reordered sample gives the original's PDUs, in order in each direction, and no gap",
          arguments: Repo.sampleCaptures(), Variant.allCases)
    func sameAsOriginal(sample: String, variant: Variant) throws {
        let original = try Self.dissect(Repo.samples.appendingPathComponent(sample).path)
        #expect(original.count > 0)
        for seed: UInt64 in [1, 2, 3] {
            let (path, changes) = try Self.mangle(sample, variant, seed: seed)
            #expect(changes > 0, "the mangler changed nothing in \(sample)")
            let mangled = try Self.dissect(path)
            print("reorder \(sample) \(variant.rawValue) seed \(seed): \(changes) changes, PDUs \(mangled.count) of \(original.count)")
            #expect(mangled.notes.filter { $0.contains("gap") } == original.notes.filter { $0.contains("gap") },
                    "\(sample) \(variant) seed \(seed)")
            #expect(mangled.pdus.keys.sorted() == original.pdus.keys.sorted())
            for (key, pdus) in original.pdus {
                let got = mangled.pdus[key] ?? []
                if got != pdus {
                    let at = (0..<min(got.count, pdus.count)).first { got[$0] != pdus[$0] } ?? min(got.count, pdus.count)
                    Issue.record("""
                        \(sample) \(variant) seed \(seed), \(key): \(got.count) PDUs against \(pdus.count), first difference at \(at):
                        got      \(at < got.count ? got[at] : "nothing")
                        expected \(at < pdus.count ? pdus[at] : "nothing")
                        """)
                }
            }
        }
    }
}
