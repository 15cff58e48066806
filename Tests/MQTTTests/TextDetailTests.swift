import Dissection
@testable import MQTT
import Testing
import TestSupport

/// The fast path of `PDUDetail.text` writes the frequent packets' text tree and summary without
/// building fields: it must vouch only for packets the full decoder finds nothing wrong with,
/// and then give exactly the bytes the full decoder's tree prints as.
@Suite("MQTT text detail")
struct MQTTTextDetailTests {
    /// The facts tests' seeds, and payloads that exercise the written previews: text to escape,
    /// multi-byte UTF-8 across the preview limit, binary, empty; more 5.0 acknowledgements.
    static let seeds: [(MQTTVersion, [UInt8])] = MQTTFactsDetailTests.seeds + [
        (.v5, packet(0x3D, str("a/b") + [0x00, 0x09, 0x00] + Array("dup and retain".utf8))),
        (.v3_1_1, packet(0x30, str("q") + Array("say \"hi\"\n\tback\\slash".utf8))),
        (.v3_1_1, packet(0x32, str("u/v") + [0x00, 0x07] + Array(String(repeating: "é€😀", count: 8).utf8))),
        (.v3_1_1, packet(0x30, str("bin") + [0x00, 0xFF, 0x10, 0x80, 0x7F, 0x01, 0x02, 0x03])),
        (.v3_1_1, packet(0x30, str("empty"))),
        (.v5, [0x50, 0x02, 0x12, 0x34]), (.v5, [0x62, 0x02, 0x00, 0x05]), (.v5, [0x70, 0x02, 0x01, 0x00]), (.v5, [0xC0, 0x00]),
    ]

    /// The full decoder's tree and summary, as the text format prints them.
    static func printed(_ pdu: DissectedPDU, _ style: TextTree.Style) -> (tree: [UInt8], summary: String) {
        var sink = ByteSink()
        TextTree.write(pdu.fields, depth: 1, style: style, into: &sink)
        return (Array(sink.bytes), pdu.summary)
    }

    @Test("fixtures and thousands of mutations: vouched-for packets decode cleanly and print the same",
          arguments: [(256, 64), (5, 3), (0, 0)])
    func sameAsTree(previewLimit: Int, hexLimit: Int) {
        var options = MQTTOptions()
        options.payloadPreviewBytes = previewLimit
        let style = TextTree.Style(hexPreviewBytes: hexLimit)
        var vouched = 0, declined = 0
        var tree = ByteSink(), line = ByteSink()
        for (bytes, version, frame, full) in mutatedFrames(Self.seeds, rounds: 800, seed: 0x7E47 &+ UInt64(previewLimit), options: options) {
            guard let fast = MQTTDecoder.textTree(of: frame, version: version, style: style, options: options,
                                                  tree: &tree, line: &line) else {
                declined += 1
                continue
            }
            vouched += 1
            let expected = Self.printed(full, style)
            #expect(full.problems.isEmpty, "\(bytes): \(full.problems.map(\.code))")
            #expect(fast.fields.isEmpty && fast.jsonTree.isEmpty)
            #expect(fast.summary == expected.summary, "\(bytes)")
            let same = fast.textTree == expected.tree
            #expect(same, "\(bytes)\nfast:\n\(String(decoding: fast.textTree, as: UTF8.self))\ntree:\n\(String(decoding: expected.tree, as: UTF8.self))")
            #expect(fast.wireLength == full.wireLength)
        }
        #expect(vouched > 1000)
        #expect(declined > 1000)
    }

    @Test("JSON: fixtures and thousands of mutations: vouched-for packets decode cleanly and print the same object",
          arguments: [256, 5, 0])
    func jsonSameAsTree(previewLimit: Int) {
        var options = MQTTOptions()
        options.payloadPreviewBytes = previewLimit
        var vouched = 0, declined = 0
        var tree = ByteSink(), line = ByteSink()
        for (bytes, version, frame, full) in mutatedFrames(Self.seeds, rounds: 800, seed: 0x750 &+ UInt64(previewLimit), options: options) {
            guard let fast = MQTTDecoder.jsonTree(of: frame, version: version, options: options, tree: &tree, line: &line) else {
                declined += 1
                continue
            }
            vouched += 1
            var sink = ByteSink()
            JSONTree.writeObject(full.fields, showSecrets: false, into: &sink)
            let expected = Array(sink.bytes)
            #expect(full.problems.isEmpty, "\(bytes): \(full.problems.map(\.code))")
            #expect(fast.fields.isEmpty && fast.textTree.isEmpty)
            #expect(fast.summary == full.summary, "\(bytes)")
            let same = fast.jsonTree == expected
            #expect(same, "\(bytes)\nfast: \(String(decoding: fast.jsonTree, as: UTF8.self))\ntree: \(String(decoding: expected, as: UTF8.self))")
            #expect(fast.wireLength == full.wireLength)
        }
        #expect(vouched > 1000)
        #expect(declined > 1000)
    }

    @Test("a PUBLISH with a topic alias, a cut frame or a non-ASCII topic takes the full decoder")
    func declines() {
        var tree = ByteSink(), line = ByteSink()
        func fast(_ frame: MQTTFrame, _ version: MQTTVersion) -> DissectedPDU? {
            MQTTDecoder.textTree(of: frame, version: version, style: TextTree.Style(), options: MQTTOptions(), tree: &tree, line: &line)
        }
        let alias = packet(0x30, str("t") + props([0x23, 0x00, 0x01]) + [0x41])
        #expect(fast(MQTTFrame(bytes: alias, wireLength: alias.count), .v5) == nil)
        let cut = Fixture.publish311QoS1
        #expect(fast(MQTTFrame(bytes: Array(cut.dropLast()), wireLength: cut.count, missingBytes: 1), .v3_1_1) == nil)
        let accented = packet(0x30, str("café") + [0x41])
        #expect(fast(MQTTFrame(bytes: accented, wireLength: accented.count), .v3_1_1) == nil)
        #expect(fast(MQTTFrame(bytes: cut, wireLength: cut.count), .v3_1_1) != nil, "the whole packet is taken")
    }

    @Test("a connection with text detail writes trees for PUBLISH and its acknowledgements, fields for the rest")
    func connection() {
        var options = MQTTOptions()
        options.detail = .text(TextTree.Style())
        let stream = Fixture.connect311 + Fixture.publish311QoS1 + Fixture.pubrel311 + Fixture.disconnect311
        let pdus = MQTTDecoder.decodeAll(stream, options: options)
        #expect(pdus.map { $0.textTree.isEmpty } == [true, false, false, true])
        #expect(pdus.map { $0.fields.isEmpty } == [false, true, true, false])
    }
}
