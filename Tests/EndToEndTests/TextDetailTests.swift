import Capture
import Dissection
import Foundation
import Pipeline
import Render
import Testing

/// `PDUDetail.text` (what the text format runs with) must print exactly what the field tree
/// prints, on real and hostile captures, while the frequent PDUs skip their trees.
@Suite struct TextDetailTests {
    /// The text output, and how many PDUs of each protocol came with a written tree.
    static func run(_ path: String, _ detail: PDUDetail, options: RenderOptions) throws -> (text: String, fast: [String: Int]) {
        var reader = try CaptureFileReader(path: path)
        defer { reader.close() }
        let pipeline = Pipeline(registry: FactsDetailTests.registry(detail, for: path))
        var renderer = TextRenderer(options: options)
        var text = ""
        var fast: [String: Int] = [:]
        do {
            try pipeline.run(&reader) { event in
                renderer.render(event, into: &text)
                if case .pdu(_, _, let pdu) = event, !pdu.textTree.isEmpty {
                    fast[pdu.protocolName, default: 0] += 1
                    #expect(pdu.fields.isEmpty, "a fast-path PDU builds no field tree")
                }
                return true
            }
        } catch is CaptureError {
            // A capture cut short: what came before is compared all the same.
        }
        return (text, fast)
    }

    @Test("text detail prints what the tree prints", arguments: FactsDetailTests.captures())
    func sameAsTree(capture: String) throws {
        for options in [RenderOptions(), RenderOptions(showSecrets: true, hexPreviewBytes: 4)] {
            let tree = try Self.run(capture, .tree, options: options)
            let text = try Self.run(capture, .text(options.textTreeStyle), options: options)
            #expect(tree.fast.isEmpty, "the tree detail never takes the fast path")
            #expect(!tree.text.isEmpty)
            if text.text != tree.text {
                let a = tree.text.split(separator: "\n", omittingEmptySubsequences: false)
                let b = text.text.split(separator: "\n", omittingEmptySubsequences: false)
                let at = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
                Issue.record("first difference at line \(at + 1):\ntree: \(at < a.count ? a[at] : "(end)")\ntext: \(at < b.count ? b[at] : "(end)")")
            }
        }
    }

    /// The JSON output, and how many PDUs of each protocol came with a written object.
    static func runJSON(_ path: String, _ detail: PDUDetail) throws -> (json: String, fast: [String: Int]) {
        var reader = try CaptureFileReader(path: path)
        defer { reader.close() }
        let pipeline = Pipeline(registry: FactsDetailTests.registry(detail, for: path))
        var renderer = JSONRenderer(options: RenderOptions())
        var json = ""
        var fast: [String: Int] = [:]
        do {
            try pipeline.run(&reader) { event in
                renderer.render(event, into: &json)
                if case .pdu(_, _, let pdu) = event, !pdu.jsonTree.isEmpty {
                    fast[pdu.protocolName, default: 0] += 1
                    #expect(pdu.fields.isEmpty, "a fast-path PDU builds no field tree")
                }
                return true
            }
        } catch is CaptureError {
            // A capture cut short: what came before is compared all the same.
        }
        return (json, fast)
    }

    @Test("JSON detail prints what the tree prints", arguments: FactsDetailTests.captures())
    func jsonSameAsTree(capture: String) throws {
        let tree = try Self.runJSON(capture, .tree)
        let json = try Self.runJSON(capture, .json)
        #expect(tree.fast.isEmpty, "the tree detail never takes the fast path")
        #expect(!tree.json.isEmpty)
        if json.json != tree.json {
            let a = tree.json.split(separator: "\n", omittingEmptySubsequences: false)
            let b = json.json.split(separator: "\n", omittingEmptySubsequences: false)
            let at = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
            Issue.record("first difference at line \(at + 1):\ntree: \(at < a.count ? a[at] : "(end)")\njson: \(at < b.count ? b[at] : "(end)")")
        }
    }

    @Test("the JSON fast path is taken for the frequent MQTT and AMQP PDUs of the samples")
    func jsonFastPathTaken() throws {
        var fast: [String: Int] = [:]
        for capture in Repo.sampleCaptures() {
            fast.merge(try Self.runJSON(Repo.samples.appendingPathComponent(capture).path, .json).fast, uniquingKeysWith: +)
        }
        #expect(fast["mqtt", default: 0] > 100)
        #expect(fast["amqp", default: 0] > 100)
    }

    @Test("the text fast path is taken for the frequent MQTT and AMQP PDUs of the samples")
    func fastPathTaken() throws {
        var fast: [String: Int] = [:]
        for capture in Repo.sampleCaptures() {
            let run = try Self.run(Repo.samples.appendingPathComponent(capture).path, .text(TextTree.Style()), options: RenderOptions())
            fast.merge(run.fast, uniquingKeysWith: +)
        }
        // The samples hold hundreds of PUBLISHes, acknowledgements, deliveries, headers and bodies.
        #expect(fast["mqtt", default: 0] > 100)
        #expect(fast["amqp", default: 0] > 100)
    }
}
