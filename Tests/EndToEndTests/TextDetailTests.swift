import Capture
import Dissection
import Foundation
import Pipeline
import Render
import Testing

/// `PDUDetail.text` and `.json` (what the text and JSON formats run with) must print exactly what
/// the field tree prints, on real and hostile captures, while the frequent PDUs skip their trees.
@Suite struct TextDetailTests {
    /// What `renderer` prints for the capture decoded with `detail`, and how many PDUs of each
    /// protocol came with a written tree (`written` picks the text or the JSON one).
    static func run<R: Renderer>(_ path: String, _ detail: PDUDetail, _ renderer: R,
                                 written: (DissectedPDU) -> [UInt8]) throws -> (output: String, fast: [String: Int]) {
        var reader = try CaptureFileReader(path: path)
        defer { reader.close() }
        let pipeline = Pipeline(registry: FactsDetailTests.registry(detail, for: path))
        var renderer = renderer
        var output = ""
        var fast: [String: Int] = [:]
        do {
            try pipeline.run(&reader) { event in
                renderer.render(event, into: &output)
                if case .pdu(let e) = event, case let pdu = e.pdu, !written(pdu).isEmpty {
                    fast[pdu.protocolName, default: 0] += 1
                    #expect(pdu.fields.isEmpty, "a fast-path PDU builds no field tree")
                }
                return true
            }
        } catch is CaptureError {
            // A capture cut short: what came before is compared all the same.
        }
        return (output, fast)
    }

    static func text(_ path: String, _ detail: PDUDetail, _ options: RenderOptions) throws -> (output: String, fast: [String: Int]) {
        try run(path, detail, TextRenderer(options: options), written: \.textTree)
    }

    static func json(_ path: String, _ detail: PDUDetail) throws -> (output: String, fast: [String: Int]) {
        try run(path, detail, JSONRenderer(options: RenderOptions()), written: \.jsonTree)
    }

    /// Records the first line where two outputs differ.
    static func expectSame(_ tree: String, _ fast: String) {
        guard fast != tree else { return }
        let a = tree.split(separator: "\n", omittingEmptySubsequences: false)
        let b = fast.split(separator: "\n", omittingEmptySubsequences: false)
        let at = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
        Issue.record("first difference at line \(at + 1):\ntree: \(at < a.count ? a[at] : "(end)")\nfast: \(at < b.count ? b[at] : "(end)")")
    }

    @Test("text detail prints what the tree prints", arguments: FactsDetailTests.captures())
    func sameAsTree(capture: String) throws {
        for options in [RenderOptions(), RenderOptions(showSecrets: true, hexPreviewBytes: 4)] {
            let tree = try Self.text(capture, .tree, options)
            let text = try Self.text(capture, .text(options.textTreeStyle), options)
            #expect(tree.fast.isEmpty, "the tree detail never takes the fast path")
            #expect(!tree.output.isEmpty)
            Self.expectSame(tree.output, text.output)
        }
    }

    @Test("JSON detail prints what the tree prints", arguments: FactsDetailTests.captures())
    func jsonSameAsTree(capture: String) throws {
        let tree = try Self.json(capture, .tree)
        let json = try Self.json(capture, .json)
        #expect(tree.fast.isEmpty, "the tree detail never takes the fast path")
        #expect(!tree.output.isEmpty)
        Self.expectSame(tree.output, json.output)
    }
}
