import Capture
import Dissection
import Foundation
import Pipeline
import Render
import Testing

/// `PDUDetail.text` and `.json` (what the text and JSON formats run with) must print exactly what
/// the field tree prints, on real and hostile captures.
@Suite struct TextDetailTests {
    /// What `renderer` prints for the capture decoded with `detail`.
    static func run<R: Renderer>(_ path: String, _ detail: PDUDetail, _ renderer: R) throws -> String {
        var reader = try CaptureFileReader(path: path)
        defer { reader.close() }
        let pipeline = Pipeline(registry: FactsDetailTests.registry(detail, for: path))
        var renderer = renderer
        var output = ""
        do {
            try pipeline.run(&reader) { event in
                renderer.render(event, into: &output)
                return true
            }
        } catch is CaptureError {
            // A capture cut short: what came before is compared all the same.
        }
        return output
    }

    static func text(_ path: String, _ detail: PDUDetail, _ options: RenderOptions) throws -> String {
        try run(path, detail, TextRenderer(options: options))
    }

    static func json(_ path: String, _ detail: PDUDetail) throws -> String {
        try run(path, detail, JSONRenderer(options: RenderOptions()))
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
            let text = try Self.text(capture, .text, options)
            #expect(!tree.isEmpty)
            Self.expectSame(tree, text)
        }
    }

    @Test("JSON detail prints what the tree prints", arguments: FactsDetailTests.captures())
    func jsonSameAsTree(capture: String) throws {
        let tree = try Self.json(capture, .tree)
        let json = try Self.json(capture, .json)
        #expect(!tree.isEmpty)
        Self.expectSame(tree, json)
    }
}
