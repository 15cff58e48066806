@testable import AMQP
import Dissection
import Testing
import TestSupport

/// The fast path of `PDUDetail.text` writes frequent frames' text trees without fields: it must
/// vouch only for frames the full decoder finds nothing wrong with, give exactly the bytes the
/// full decoder's tree prints as, and hand the connection the same method and header values.
@Suite("AMQP text detail")
struct AMQPTextDetailTests {
    static let headers = Wire.table([("seq", [UInt8(ascii: "I")] + Wire.u32(7)), ("kind", [UInt8(ascii: "S")] + Wire.longstr("c")),
                                     ("big", [UInt8(ascii: "t"), 0])])
    static let seeds: [[UInt8]] = [
        Wire.publish(channel: 1, exchange: "bench.direct", routingKey: "bench.q2"),
        Wire.publish(channel: 3, exchange: "", routingKey: "q", mandatory: true),
        // basic.deliver: consumer-tag, delivery-tag, redelivered, exchange, routing-key.
        Wire.method(60, 60, channel: 1, Wire.shortstr("ctag-1") + Wire.u64(42) + [1] + Wire.shortstr("ex") + Wire.shortstr("rk")),
        Wire.method(60, 80, channel: 1, Wire.u64(9) + [1]),                       // basic.ack, multiple
        Wire.method(60, 120, channel: 2, Wire.u64(UInt64(Int.max)) + [3]),        // basic.nack at the clamp
        Wire.method(60, 90, channel: 2, Wire.u64(5) + [0]),                       // basic.reject
        // basic.get-ok: delivery-tag, redelivered, exchange, routing-key, message-count.
        Wire.method(60, 71, channel: 1, Wire.u64(1) + [0] + Wire.shortstr("") + Wire.shortstr("q") + Wire.u32(12)),
        // Content headers: content-type, headers, delivery-mode, priority, correlation-id, message-id, timestamp.
        Wire.contentHeader(channel: 1, bodySize: 131, flags: 0xBCC0,
                           properties: Wire.shortstr("text/plain") + headers + [1, 2] + Wire.shortstr("c-2-2")
                               + Wire.shortstr("m-2") + Wire.u64(1_795_357_127)),
        Wire.contentHeader(channel: 1, bodySize: 0),
        // content-type with a space, reply-to of 50 characters, expiration empty, type.
        Wire.contentHeader(channel: 2, bodySize: 3, flags: 0x8000 | 0x0200 | 0x0100 | 0x0020,
                           properties: Wire.shortstr("text/plain; charset=utf-8") + Wire.shortstr(String(repeating: "r", count: 50))
                               + Wire.shortstr("") + Wire.shortstr("kind")),
        // Headers of every scalar type, an empty table, and a float (the full decoder's).
        Wire.contentHeader(channel: 1, bodySize: 1, flags: 0x2000, properties: Wire.table([
            ("b", [UInt8(ascii: "b"), 0xFE]), ("B", [UInt8(ascii: "B"), 0xFE]), ("s", [UInt8(ascii: "s")] + Wire.u16(0xFFFE)),
            ("U", [UInt8(ascii: "U")] + Wire.u16(7)), ("u", [UInt8(ascii: "u")] + Wire.u16(0xFFFE)),
            ("i", [UInt8(ascii: "i")] + Wire.u32(0xFFFF_FFFE)), ("l", [UInt8(ascii: "l")] + Wire.u64(UInt64.max)),
            ("L", [UInt8(ascii: "L")] + Wire.u64(12)), ("", [UInt8(ascii: "t"), 1]),
            ("long", [UInt8(ascii: "S")] + Wire.longstr(String(repeating: "v", count: 1100))),
        ])),
        Wire.contentHeader(channel: 1, bodySize: 1, flags: 0x2000, properties: Wire.table([])),
        Wire.contentHeader(channel: 1, bodySize: 1, flags: 0x2000, properties: Wire.table([("f", [UInt8(ascii: "f")] + Wire.u32(0x3F80_0000))])),
        // A non-ASCII message-id: the full decoder's.
        Wire.contentHeader(channel: 2, bodySize: 3, flags: 0x0080, properties: Wire.shortstr("mé")),
        Wire.contentHeader(channel: 4, bodySize: 1 << 40, flags: 0x1002, properties: [2] + Wire.shortstr("app")),
        Wire.body(channel: 1, "order 2 from publisher 2; \"quoted\"\nnext line"),
        Wire.frame(3, channel: 1, [0x00, 0xFF, 0x10, 0x80, 0x01]),
        Wire.frame(3, channel: 1, Array(String(repeating: "é€😀", count: 30).utf8)),
        Wire.body(channel: 1, ""),
    ]

    static func values(_ v: AMQPArgumentValues) -> [String] { v.entries.map { "\($0.spec.name)=\($0.value)" } }

    /// Each seed whole, then 599 times with one payload byte changed (the 7-byte header is left
    /// alone: the framer decides what a frame is), framed, with the full decoder's result.
    static func mutations(seed: UInt64, options: AMQPOptions) -> [(bytes: [UInt8], frame: AMQPRawFrame, full: AMQPFrameDecoder.Decoded)] {
        var rng = SplitMix64(seed: seed)
        let decoder = AMQPFrameDecoder(options: options)
        var out: [(bytes: [UInt8], frame: AMQPRawFrame, full: AMQPFrameDecoder.Decoded)] = []
        for seed in Self.seeds {
            for round in 0..<600 {
                var bytes = seed
                if round > 0, bytes.count > 8 {
                    let at = 7 + Int(rng.next() % UInt64(bytes.count - 7))
                    bytes[at] = rng.next() % 3 == 0 ? bytes[at] ^ (1 << UInt8(rng.next() % 8)) : UInt8(truncatingIfNeeded: rng.next())
                }
                var framer = AMQPFramer(options: options, atStreamStart: false)
                framer.append(bytes[...])
                guard case .unit(.frame(let framed)) = framer.next(), framed.problems.isEmpty else { continue }
                let frame = framed.frame
                var strings = RecentStrings()
                out.append((bytes, frame, decoder.decode(frame, problems: [], strings: &strings)))
            }
        }
        return out
    }

    /// What a fast path hands the connection must be what the full decoder hands it.
    static func expectSameState(_ fast: AMQPFrameDecoder.Decoded, _ full: AMQPFrameDecoder.Decoded) {
        #expect(fast.method?.id == full.method?.id)
        #expect(values(fast.method?.values ?? AMQPArgumentValues()) == values(full.method?.values ?? AMQPArgumentValues()))
        #expect(fast.header?.classID == full.header?.classID)
        #expect(fast.header?.bodySize == full.header?.bodySize)
        #expect(fast.header?.propertySummary == full.header?.propertySummary)
    }

    /// Runs a written fast path (`written`, through reused tree and line buffers) over the
    /// mutations: every frame it vouches for must decode cleanly in full, with the full decoder's
    /// summary, print exactly as `print` prints the full decoder's fields (the written tree is
    /// `tree`, the other format's `other` stays empty), and hand the connection the same state.
    static func expectSameAsTree(seed: UInt64, options: AMQPOptions,
                                 written: (AMQPFrameDecoder, AMQPRawFrame, inout ByteSink, inout ByteSink) -> AMQPFrameDecoder.Decoded?,
                                 print: ([Field], inout ByteSink) -> Void,
                                 tree: (DissectedPDU) -> [UInt8], other: (DissectedPDU) -> [UInt8]) {
        let decoder = AMQPFrameDecoder(options: options)
        var treeSink = ByteSink(), line = ByteSink()
        var vouched = 0, declined = 0
        for (bytes, frame, full) in Self.mutations(seed: seed, options: options) {
            guard let fast = written(decoder, frame, &treeSink, &line) else {
                declined += 1
                continue
            }
            vouched += 1
            var sink = ByteSink()
            print(full.pdu.fields, &sink)
            let expected = Array(sink.bytes)
            #expect(full.pdu.problems.isEmpty, "\(bytes): \(full.pdu.problems.map(\.code.rawValue))")
            #expect(fast.pdu.fields.isEmpty && other(fast.pdu).isEmpty)
            #expect(fast.pdu.summary == full.pdu.summary, "\(bytes)")
            let got = tree(fast.pdu)
            #expect(got == expected, "\(bytes)\nfast:\n\(String(decoding: got, as: UTF8.self))\ntree:\n\(String(decoding: expected, as: UTF8.self))")
            Self.expectSameState(fast, full)
        }
        #expect(vouched > 1000)
        #expect(declined > 1000)
    }

    @Test("fixtures and thousands of mutations: vouched-for frames decode cleanly and print the same",
          arguments: [(256, 64), (5, 3)])
    func sameAsTree(previewLimit: Int, hexLimit: Int) {
        var options = AMQPOptions()
        options.bodyPreviewBytes = previewLimit
        let style = TextTree.Style(hexPreviewBytes: hexLimit)
        Self.expectSameAsTree(seed: 0xA3C7 &+ UInt64(previewLimit), options: options,
                              written: { $0.decodeText($1, style: style, tree: &$2, line: &$3) },
                              print: { TextTree.write($0, depth: 1, style: style, into: &$1) },
                              tree: \.textTree, other: \.jsonTree)
    }

    @Test("JSON: fixtures and thousands of mutations: vouched-for frames decode cleanly and print the same object",
          arguments: [256, 5])
    func jsonSameAsTree(previewLimit: Int) {
        var options = AMQPOptions()
        options.bodyPreviewBytes = previewLimit
        Self.expectSameAsTree(seed: 0x15A3 &+ UInt64(previewLimit), options: options,
                              written: { $0.decodeJSON($1, tree: &$2, line: &$3) },
                              print: { JSONTree.writeObject($0, showSecrets: false, into: &$1) },
                              tree: \.jsonTree, other: \.textTree)
    }

    /// A connection that opens a channel in confirm mode and publishes one message: what a
    /// connection adds to written trees (a confirm number, the completed message).
    static let confirmedPublish = Wire.protocolHeader
        + Wire.method(20, 10, channel: 1, Wire.shortstr(""))                   // channel.open
        + Wire.method(85, 10, channel: 1, [0])                                 // confirm.select
        + Wire.publish(channel: 1, exchange: "x", routingKey: "k")
        + Wire.contentHeader(channel: 1, bodySize: 5)
        + Wire.body(channel: 1, "hello")

    @Test("JSON: a connection adds its members before the object's closing brace")
    func jsonConnection() {
        var options = AMQPOptions()
        options.detail = .json
        let pdus = dissect(Self.confirmedPublish, options: options)
        #expect(pdus.map { $0.jsonTree.isEmpty } == [true, true, true, false, false, false])
        #expect(String(decoding: pdus[3].jsonTree, as: UTF8.self).hasSuffix(",\"immediate\":false},\"publish_seq\":1}"))
        #expect(String(decoding: pdus[5].jsonTree, as: UTF8.self).hasSuffix(
            ",\"message\":{\"method\":\"basic.publish\",\"exchange\":\"x\",\"routing_key\":\"k\",\"body_size\":5,\"body\":\"hello\",\"body_frames\":1}}"))
    }

    @Test("without text lines (AMQPOptions.textLines off) every frame goes to the full decoder, which drops them")
    func noTextLines() {
        let decoder = AMQPFrameDecoder(options: AMQPOptions())
        var tree = ByteSink(), line = ByteSink()
        var framer = AMQPFramer(atStreamStart: false)
        framer.append(Wire.publish(channel: 1, exchange: "x", routingKey: "k")[...])
        guard case .unit(.frame(let framed)) = framer.next(), case let frame = framed.frame else {
            Issue.record("the fixture frames")
            return
        }
        #expect(decoder.decodeText(frame, style: TextTree.Style(), tree: &tree, line: &line, textLines: true) != nil)
        #expect(decoder.decodeText(frame, style: TextTree.Style(), tree: &tree, line: &line, textLines: false) == nil)
        var withoutLines = AMQPOptions()
        withoutLines.textLines = false
        #expect(AMQPFrameDecoder(options: withoutLines).decodeText(frame, style: TextTree.Style(), tree: &tree, line: &line) == nil)
    }

    @Test("a completed message writes the lines its field prints as",
          arguments: [(256, 64), (3, 2), (0, 0)])
    func messageLines(previewLimit: Int, hexLimit: Int) {
        let style = TextTree.Style(hexPreviewBytes: hexLimit)
        let decoder = AMQPFrameDecoder(options: AMQPOptions())
        func frame(_ bytes: [UInt8]) -> AMQPRawFrame? {
            var framer = AMQPFramer(atStreamStart: false)
            framer.append(bytes[...])
            guard case .unit(.frame(let framed)) = framer.next(), case let frame = framed.frame else { return nil }
            return frame
        }
        let methods = [
            Wire.method(60, 60, channel: 1, Wire.shortstr("ctag-1") + Wire.u64(42) + [1] + Wire.shortstr("") + Wire.shortstr("rk")),
            Wire.publish(channel: 1, exchange: "x", routingKey: "k"),
            Wire.method(60, 71, channel: 1, Wire.u64(1) + [0] + Wire.shortstr("ex") + Wire.shortstr("q") + Wire.u32(12)),
        ]
        let bodies: [[[UInt8]]] = [[], [Wire.body(channel: 1, "hello")], [Wire.body(channel: 1, "é€"), Wire.frame(3, channel: 1, [0, 1, 0xFF])]]
        var checked = 0
        for method in methods {
            var strings = RecentStrings()
            guard let methodFrame = frame(method), let decoded = decoder.decode(methodFrame, problems: [], strings: &strings).method,
                  let spec = decoded.spec else { Issue.record("fixture does not decode"); continue }
            for (i, parts) in bodies.enumerated() {
                var message = AMQPMessageAssembly(method: spec, values: decoded.values, previewLimit: previewLimit)
                message.propertySummary = i == 1 ? "" : "content-type=text/plain delivery-mode=2"
                message.bodySize = UInt64(parts.reduce(0) { $0 + $1.count - 8 }) + (i == 0 ? 0 : 1)
                message.stage = .awaitingBody
                for part in parts { if let f = frame(part) { message.add(body: f) } }
                message.previewMissing = i == 2
                var expected = ByteSink(), written = ByteSink()
                TextTree.write([message.field(options: AMQPOptions())], depth: 1, style: style, into: &expected)
                message.writeText(into: &written, style: style)
                #expect(Array(written.bytes) == Array(expected.bytes),
                        "\(String(decoding: written.bytes, as: UTF8.self))\n---\n\(String(decoding: expected.bytes, as: UTF8.self))")
                checked += 1
            }
        }
        #expect(checked == 9)
    }

    @Test("a connection with text detail writes trees for publishes, headers and bodies, and adds what it tracks as lines")
    func connection() {
        var options = AMQPOptions()
        options.detail = .text(TextTree.Style())
        let pdus = dissect(Self.confirmedPublish, options: options)
        #expect(pdus.map { $0.textTree.isEmpty } == [true, true, true, false, false, false])
        let publish = String(decoding: pdus[3].textTree, as: UTF8.self)
        #expect(publish.hasSuffix("    Frame-End: 0xCE\n    Publish sequence number (confirm mode): 1\n"))
        let body = String(decoding: pdus[5].textTree, as: UTF8.self)
        #expect(body.contains("    Message\n        Method: basic.publish\n"))
        #expect(body.contains("        Body: \"hello\" (5 bytes)\n"))
    }
}
