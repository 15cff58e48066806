@testable import AMQP
@testable import AMQPViews
import Dissection
import Render
import Testing
import TestSupport

/// AMQP has one decoder: each frame is read into its typed values (`AMQPDecodedFrame`) once,
/// and the field tree and what a table counts are two views of them. These hold the views to
/// each other: the counted view of a frame must carry the facts `PDUFacts(deriving:)` reads
/// off its tree, and only a frame with no problem is counted.
@Suite("AMQP views: counted against tree")
struct AMQPViewTests {
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

    /// Each seed whole, then 599 times with one payload byte changed (the 7-byte header is left
    /// alone: the framer decides what a frame is), framed and decoded.
    static func mutations(seed: UInt64, options: AMQPOptions) -> [(bytes: [UInt8], decoded: AMQPDecodedFrame)] {
        var rng = SplitMix64(seed: seed)
        var decoder = AMQPFrameDecoder(options: options)
        var out: [(bytes: [UInt8], decoded: AMQPDecodedFrame)] = []
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
                out.append((bytes, decoder.decode(framed.frame, problems: [])))
            }
        }
        return out
    }

    @Test("fixtures and thousands of mutations: a clean frame is counted with its tree's facts, a frame with a problem is not")
    func countedAgainstTree() {
        var options = AMQPOptions()
        options.summaryDetail = false
        options.textLines = false
        var counted = 0, withProblems = 0, headers = 0
        for (bytes, decoded) in Self.mutations(seed: 0xFAC7, options: options) {
            let tree = decoded.dissected(options: options, requests: [:])
            let view = decoded.counted(AMQPFrameNote())
            guard decoded.problems.isEmpty else {
                withProblems += 1
                #expect(view == nil, "\(bytes): \(decoded.problems.map(\.code.rawValue))")
                #expect(!tree.problems.isEmpty)
                continue
            }
            guard let view else {
                Issue.record("\(bytes): a clean \(tree.summary) is not counted")
                continue
            }
            counted += 1
            if decoded.frame.type == .header { headers += 1 }
            #expect(view.facts == PDUFacts(deriving: tree), "\(bytes)")
            #expect(view.wireLength == tree.wireLength)
        }
        #expect(counted > 1000)
        #expect(withProblems > 1000)
        #expect(headers > 500)
    }

    @Test("fixtures and thousands of mutations: without text lines the tree carries no line and no text-only field, and JSON writes the same bytes")
    func textLinesOnlyForText() {
        var with = AMQPOptions(), without = AMQPOptions()
        with.detail = .text
        without.detail = .json
        without.textLines = false
        func json(_ fields: [Field]) -> [UInt8] {
            var sink = ByteSink()
            JSONTree.writeObject(fields, showSecrets: false, into: &sink)
            return Array(sink.bytes)
        }
        func lines(_ fields: [Field]) -> Int { fields.reduce(0) { $0 + ($1.line == nil ? 0 : 1) + lines($1.children) } }
        func withLines(_ fields: [Field]) -> [String] { fields.flatMap { ($0.line == nil ? [] : [$0.key]) + withLines($0.children) } }
        func textOnly(_ fields: [Field]) -> Int { fields.reduce(0) { $0 + ($1.textOnly ? 1 : 0) + textOnly($1.children) } }
        var compared = 0, linesLeftOut = 0
        for (bytes, decoded) in Self.mutations(seed: 0x7E87, options: with) {
            let text = decoded.dissected(options: with, requests: [:]).fields
            let plain = decoded.dissected(options: without, requests: [:]).fields
            #expect(json(plain) == json(text), "\(bytes)")
            #expect(lines(plain) == 0, "\(bytes): \(withLines(plain))")
            #expect(textOnly(plain) == 0, "\(bytes)")
            compared += 1
            linesLeftOut += lines(text)
        }
        #expect(compared > 5000)
        #expect(linesLeftOut > compared)
    }

    @Test("the facts a tree carries beyond a counted PDU's (a client's identity, a close's reply) keep their frames out of the counted view")
    func identityAndClosesAreNotCounted() {
        let options = AMQPOptions()
        var decoder = AMQPFrameDecoder(options: options)
        let frames: [[UInt8]] = [
            Wire.method(10, 40, channel: 0, Wire.shortstr("/") + Wire.shortstr("") + [0]),                  // connection.open
            Wire.method(20, 40, channel: 1, Wire.u16(404) + Wire.shortstr("NOT_FOUND - no queue 'q'")
                        + Wire.u16(50) + Wire.u16(10)),                                                   // channel.close
        ]
        for bytes in frames {
            var framer = AMQPFramer(options: options, atStreamStart: false)
            framer.append(bytes[...])
            guard case .unit(.frame(let framed)) = framer.next() else {
                Issue.record("not framed: \(bytes)")
                continue
            }
            let decoded = decoder.decode(framed.frame, problems: [])
            #expect(decoded.problems.isEmpty)
            #expect(decoded.counted(AMQPFrameNote()) == nil)
            let facts = PDUFacts(deriving: decoded.dissected(options: options, requests: [:]))
            #expect(facts.identity != nil || facts.close != nil)
        }
    }

    @Test("a consumer and a confirm-mode publisher: the clean frames come counted, with the tree's facts; problems come as trees")
    func countedSameAsTree() {
        let consumer: [(Direction, [UInt8])] = [
            (.toServer, Wire.protocolHeader),
            (.toServer, Wire.method(20, 10, channel: 1, Wire.shortstr(""))),                  // channel.open
            (.toClient, Wire.method(20, 11, channel: 1, Wire.longstr(""))),                   // channel.open-ok
            (.toServer, Wire.method(85, 10, channel: 1, [0])),                                // confirm.select
            (.toServer, Wire.method(60, 20, channel: 1, Wire.u16(0) + Wire.shortstr("q") + Wire.shortstr("ctag")
                                    + [0] + Wire.table([]))),                                 // basic.consume
            (.toClient, Wire.method(60, 21, channel: 1, Wire.shortstr("ctag"))),              // basic.consume-ok
            (.toClient, Wire.method(60, 60, channel: 1, Wire.shortstr("ctag") + Wire.u64(1) + [0]
                                    + Wire.shortstr("ex") + Wire.shortstr("rk"))              // basic.deliver
                + Wire.contentHeader(channel: 1, bodySize: 5) + Wire.body(channel: 1, "he") + Wire.body(channel: 1, "llo")),
            (.toClient, Wire.method(60, 60, channel: 1, Wire.shortstr("ctag") + Wire.u64(2) + [0]
                                    + Wire.shortstr("ex") + Wire.shortstr("rk"))
                + Wire.contentHeader(channel: 1, bodySize: 0)),                                 // an empty message: the header completes it
            (.toServer, Wire.method(60, 80, channel: 1, Wire.u64(1) + [0])),                  // basic.ack of the first
            (.toServer, Wire.method(60, 80, channel: 1, Wire.u64(9) + [0x04])),               // reserved bit: a problem
            (.toServer, Wire.method(60, 120, channel: 1, Wire.u64(2) + [3])),                 // basic.nack, multiple
            (.toServer, Wire.publish(channel: 1, exchange: "ex", routingKey: "rk")
                + Wire.contentHeader(channel: 1, bodySize: 2) + Wire.body(channel: 1, "abc")), // body overrun: a problem
            (.toServer, Wire.publish(channel: 2, exchange: "ex", routingKey: "rk")),          // channel 2 not open: a problem
            (.toServer, Wire.heartbeat),
            (.toClient, Wire.method(60, 80, channel: 1, Wire.u64(1) + [0])),                  // the broker's confirm
        ]
        let tree = Self.run(consumer, detail: .tree)
        let facts = Self.run(consumer, detail: .facts)
        #expect(tree.counted == 0)
        #expect(facts.seen.count == tree.seen.count)
        for (i, (a, b)) in zip(tree.seen, facts.seen).enumerated() {
            #expect(a == b, "PDU \(i): tree \(a.facts.kind) \(a.problems), facts \(b.facts.kind) \(b.problems)")
        }
        // Every frame but the protocol header and the three with a problem; with the analysis,
        // not the two deliveries either, which carry the broker model's event on a box.
        #expect(facts.counted == tree.seen.count - 4 - 2)
        let factsAlone = Self.run(consumer, detail: .facts, analysis: false)
        #expect(factsAlone.seen == facts.seen)
        #expect(factsAlone.counted == tree.seen.count - 4)
        #expect(facts.messages == 2, "the last body frame and the empty message's header carry their messages")
        #expect(tree.seen.contains { $0.problems.contains("reserved-bits") })
        #expect(tree.seen.contains { $0.problems.contains("body-overrun") })
        #expect(tree.seen.contains { $0.problems.contains("channel-not-open") })
        #expect(facts.seen.contains { $0.facts.message?.routingKey == "rk" && $0.facts.message?.bodySize == 5 })
        #expect(facts.seen.contains { $0.facts.queue == "q" && $0.facts.kind == "basic.ack" })
        #expect(facts.seen.contains { $0.facts.ackedCount == 1 && $0.facts.queue == "q" && $0.facts.kind == "basic.nack" })
    }

    /// One connection's frames, each direction in order, dissected with `detail`: into a batch
    /// (counted where the counted path takes them), and their facts and problems in order.
    struct Seen: Equatable {
        var facts: PDUFacts
        var problems: [String]
        init(_ pdu: DissectedPDU) { (facts, problems) = (pdu.summaryFacts, pdu.problems.map(\.code.rawValue)) }
        init(_ pdu: CountedPDU) { (facts, problems) = (pdu.facts, []) }
    }

    static func run(_ frames: [(Direction, [UInt8])], detail: PDUDetail, analysis: Bool = true) -> (seen: [Seen], counted: Int, messages: Int) {
        var options = AMQPOptions()
        options.detail = detail
        options.analysis = analysis
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672), options: options)
        var seen: [Seen] = [], counted = 0, messages = 0
        for (direction, bytes) in frames {
            var batch = PDUBatch()
            _ = d.receive(bytes[...], from: direction, into: &batch, limit: .max)
            var k = 0
            for (i, pdu) in batch.counted.enumerated() {
                while k < batch.full.count, batch.boxPlaces[k] == i {
                    seen.append(Seen(batch.full[k]))
                    k += 1
                }
                counted += 1
                if pdu.message != nil { messages += 1 }
                seen.append(Seen(pdu))
            }
            for box in batch.full[k...] { seen.append(Seen(box)) }
        }
        return (seen, counted, messages)
    }
}
