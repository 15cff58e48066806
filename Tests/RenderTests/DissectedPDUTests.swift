@testable import Dissection
import Testing

@Suite("Dissected PDU values")
struct DissectedPDUTests {
    private static func sample() -> DissectedPDU {
        DissectedPDU(protocolName: "mqtt", summary: "PUBLISH QoS 0 a/b (1 bytes)",
                     fields: [Field("topic", "Topic", .string("a/b"))],
                     problems: [Problem(.note, "n", "a note")], wireLength: 8, facts: PDUFacts(kind: "PUBLISH"))
    }

    @Test("a copy is a value: writing any part of one leaves the other as it was")
    func copiesAreIndependent() {
        let original = DissectedPDUTests.sample()
        var changed = original
        changed.protocolName = "amqp"
        changed.summary += " [truncated]"
        changed.fields.append(Field("payload", "Message", .int(1)))
        changed.fields[0].value = .string("c/d")
        changed.problems.removeAll()
        changed.wireLength = 9
        changed.facts?.topic = "c/d"
        #expect(original.protocolName == "mqtt")
        #expect(original.summary == "PUBLISH QoS 0 a/b (1 bytes)")
        #expect(original.fields == [Field("topic", "Topic", .string("a/b"))])
        #expect(original.problems.map(\.code.rawValue) == ["n"])
        #expect(original.wireLength == 8)
        #expect(original.facts?.topic == nil)
        #expect(changed.protocolName == "amqp")
        #expect(changed.summary == "PUBLISH QoS 0 a/b (1 bytes) [truncated]")
        #expect(changed.fields.map(\.key) == ["topic", "payload"])
        #expect(changed.field("topic")?.value == .string("c/d"))
        #expect(changed.problems.isEmpty)
        #expect(changed.wireLength == 9)
        #expect(changed.facts?.topic == "c/d")
    }

    @Test("copies written on several threads at once stay whole")
    func copiesOnThreads() async {
        let shared = DissectedPDUTests.sample()
        let summaries = await withTaskGroup(of: String.self) { group in
            for i in 0..<8 {
                group.addTask {
                    var mine = shared
                    for j in 0..<2_000 {
                        mine.summary = "task \(i) step \(j)"
                        mine.fields.append(Field("step", "Step", .int(j)))
                    }
                    return "\(mine.summary) \(mine.fields.count)"
                }
            }
            var all: [String] = []
            for await s in group { all.append(s) }
            return all.sorted()
        }
        #expect(summaries == (0..<8).map { "task \($0) step 1999 2001" })
        #expect(shared.summary == "PUBLISH QoS 0 a/b (1 bytes)" && shared.fields.count == 1)
    }

    private static func written(_ format: DissectedPDU.WrittenTree, summary: String = "PUBACK id=7",
                                tree: String = "    Message Identifier: 7\n") -> DissectedPDU {
        Array(summary.utf8).withUnsafeBufferPointer { s in
            Array(tree.utf8).withUnsafeBufferPointer { t in
                DissectedPDU(protocolName: "mqtt", summaryBytes: s, writtenTree: t, format: format, wireLength: 4)
            }
        }
    }

    private static func bytes(_ body: ((UnsafeBufferPointer<UInt8>) -> Void) -> Void) -> String {
        var out = ""
        body { out = String(decoding: $0, as: UTF8.self) }
        return out
    }

    @Test("a written PDU keeps its summary and tree as bytes, and gives them as a String and an array too")
    func writtenParts() {
        let text = DissectedPDUTests.written(.text)
        #expect(text.summary == "PUBACK id=7")
        #expect(text.textTree == Array("    Message Identifier: 7\n".utf8))
        #expect(text.jsonTree.isEmpty && text.fields.isEmpty && text.problems.isEmpty)
        #expect(text.hasTextTree && !text.hasJSONTree)
        #expect(DissectedPDUTests.bytes { f in text.withSummaryBytes { f($0) } } == "PUBACK id=7")
        #expect(DissectedPDUTests.bytes { f in text.withTextTreeBytes { f($0) } } == "    Message Identifier: 7\n")
        let json = DissectedPDUTests.written(.json, tree: "{\"packet_id\":7}")
        #expect(json.jsonTree == Array("{\"packet_id\":7}".utf8) && json.textTree.isEmpty)
        #expect(json.hasJSONTree && !json.hasTextTree)
        #expect(DissectedPDUTests.bytes { f in json.withJSONTreeBytes { f($0) } } == "{\"packet_id\":7}")
        // A summary given as a String, and no summary at all.
        let named = Array("    Topic: a\n".utf8).withUnsafeBufferPointer {
            DissectedPDU(protocolName: "amqp", summary: "body 3 bytes", writtenTree: $0, format: .text, wireLength: 3)
        }
        #expect(named.summary == "body 3 bytes" && named.textTree == Array("    Topic: a\n".utf8))
        #expect(DissectedPDUTests.bytes { f in named.withSummaryBytes { f($0) } } == "body 3 bytes")
        let bare = DissectedPDUTests.written(.text, summary: "", tree: "")
        #expect(bare.summary == "" && bare.textTree.isEmpty && !bare.hasTextTree)
    }

    @Test("copies of a written PDU are values: changing the summary, the tree or another part of one leaves the other")
    func writtenCopies() {
        let original = DissectedPDUTests.written(.text)
        var a = original
        a.summary += " [1 problem]"
        a.textTree.append(contentsOf: Array("    Queue: q\n".utf8))
        var b = original
        b.problems.append(Problem(.note, "n", "a note")) // copies the box, tail included
        var c = DissectedPDUTests.written(.json, tree: "{\"packet_id\":7}")
        let cOriginal = c
        c.jsonTree.removeLast()
        c.jsonTree.append(contentsOf: Array(",\"queue\":\"q\"}".utf8))
        #expect(original.summary == "PUBACK id=7" && original.textTree == Array("    Message Identifier: 7\n".utf8))
        #expect(a.summary == "PUBACK id=7 [1 problem]")
        #expect(a.textTree == Array("    Message Identifier: 7\n    Queue: q\n".utf8) && a.hasTextTree)
        #expect(b.summary == "PUBACK id=7" && b.textTree == original.textTree && b.problems.count == 1)
        #expect(original.problems.isEmpty)
        #expect(c.jsonTree == Array("{\"packet_id\":7,\"queue\":\"q\"}".utf8))
        #expect(cOriginal.jsonTree == Array("{\"packet_id\":7}".utf8))
    }

    @Test("fields a connection adds go after a written tree's lines, or before its closing brace")
    func appendToWritten() {
        var scratch = ByteSink()
        var text = DissectedPDUTests.written(.text)
        text.appendFields([Field("queue", "Queue", .string("q"))], style: TextTree.Style(), scratch: &scratch)
        #expect(text.textTree == Array("    Message Identifier: 7\n    Queue: q\n".utf8))
        var json = DissectedPDUTests.written(.json, tree: "{\"packet_id\":7}")
        json.appendFields([Field("queue", "Queue", .string("q"))], style: TextTree.Style(), scratch: &scratch)
        #expect(json.jsonTree == Array("{\"packet_id\":7,\"queue\":\"q\"}".utf8))
        #expect(json.fields.isEmpty && text.fields.isEmpty)
    }

    @Test("lines added to a written text tree go after its lines, in its own copy only")
    func appendLines() {
        let original = DissectedPDUTests.written(.text)
        var grown = original
        Array("    Message\n".utf8).withUnsafeBufferPointer { grown.appendTextLines($0) }
        Array("        Body size: 3\n".utf8).withUnsafeBufferPointer { grown.appendTextLines($0) }
        #expect(grown.textTree == Array("    Message Identifier: 7\n    Message\n        Body size: 3\n".utf8))
        #expect(grown.summary == "PUBACK id=7")
        #expect(original.textTree == Array("    Message Identifier: 7\n".utf8))
        // A tree held as an array (made by the full decoder's path) grows the same way.
        var array = DissectedPDU(protocolName: "mqtt", summary: "s", fields: [], wireLength: 1, textTree: Array("    A: 1\n".utf8))
        Array("    B: 2\n".utf8).withUnsafeBufferPointer { array.appendTextLines($0) }
        #expect(array.textTree == Array("    A: 1\n    B: 2\n".utf8))
    }

    @Test("a PDU's identity, message and close read back as set, cleared or never set, and compare by value")
    func factsExtras() {
        var facts = PDUFacts(kind: "basic.deliver")
        #expect(facts.identity == nil && facts.message == nil && facts.close == nil)
        var identity = PDUFacts.ClientIdentity()
        identity.saslUser = "guest"
        facts.identity = identity
        facts.message = PDUFacts.MessageFacts(method: "basic.publish", exchange: "x", routingKey: "k", bodySize: 3)
        #expect(facts.identity?.saslUser == "guest" && facts.message?.exchange == "x" && facts.close == nil)
        let copy = facts
        facts.message = nil
        facts.close = PDUFacts.CloseFacts(replyCode: 406, replyCodeName: "PRECONDITION_FAILED", replyText: "t", failedMethod: nil)
        #expect(facts.message == nil && facts.close?.replyCode == 406 && facts.identity?.saslUser == "guest")
        #expect(copy.message?.routingKey == "k" && copy.close == nil)
        facts.close = nil
        facts.identity = nil
        #expect(facts == PDUFacts(kind: "basic.deliver"))
        #expect(copy != facts)
    }

    /// A written PDU with `tag` in its summary and tree.
    private static func written(_ tag: String, format: DissectedPDU.WrittenTree = .text) -> DissectedPDU {
        let summary = Array("PUBACK id=\(tag)".utf8), tree = Array("    Message Identifier: \(tag)\n".utf8)
        return summary.withUnsafeBufferPointer { s in
            tree.withUnsafeBufferPointer { t in
                DissectedPDU(protocolName: "mqtt", summaryBytes: s, writtenTree: t, format: format, wireLength: 4)
            }
        }
    }

    @Test("boxes of PDUs let go are reused for new ones, which start empty; a PDU still held keeps its own")
    func recycledBoxes() {
        // Whatever an earlier test on this thread left in the pool is taken first.
        while PDUPool.take() != nil {}
        var batch = (0..<5).map { DissectedPDUTests.written("old-\($0)") }
        batch[0].problems.append(Problem(.error, "e", "a problem"))
        batch[1].facts = PDUFacts(kind: "PUBACK")
        batch[2].fields.append(Field("x", "X", .int(1)))
        batch[3].appendTextLines(UnsafeBufferPointer(start: nil, count: 0))
        batch[3].appendFields([Field("queue", "Queue", .string("q"))], style: TextTree.Style(), scratch: &Self.scratch)
        let held = batch[4]
        DissectedPDU.recycle(&batch)
        #expect(batch.isEmpty)
        #expect(PDUPool.current.boxes.count == 4, "the held PDU's box stays with it")

        let fresh = (0..<6).map { DissectedPDUTests.written("new-\($0)", format: $0 % 2 == 0 ? .text : .json) }
        #expect(PDUPool.current.boxes.isEmpty)
        for (i, pdu) in fresh.enumerated() {
            #expect(pdu.summary == "PUBACK id=new-\(i)")
            #expect(pdu.problems.isEmpty && pdu.facts == nil && pdu.fields.isEmpty)
            if i % 2 == 0 {
                #expect(String(decoding: pdu.textTree, as: UTF8.self) == "    Message Identifier: new-\(i)\n")
                #expect(!pdu.hasJSONTree)
            } else {
                #expect(String(decoding: pdu.jsonTree, as: UTF8.self) == "    Message Identifier: new-\(i)\n")
                #expect(!pdu.hasTextTree)
            }
        }
        #expect(held.summary == "PUBACK id=old-4")
        #expect(String(decoding: held.textTree, as: UTF8.self) == "    Message Identifier: old-4\n")

        // Lines added to a reused box (whose buffer may be larger than its bytes) follow its own tree.
        var again = fresh
        DissectedPDU.recycle(&again)
        var grown = DissectedPDUTests.written("g")
        let lines = Array("    Confirms: confirms publish #1\n".utf8)
        lines.withUnsafeBufferPointer { grown.appendTextLines($0) }
        #expect(String(decoding: grown.textTree, as: UTF8.self) == "    Message Identifier: g\n    Confirms: confirms publish #1\n")
        #expect(grown.summary == "PUBACK id=g")
    }

    @Test("a facts PDU made in a reused box has its kind and nothing else, whatever the box held; facts held elsewhere are left alone")
    func reusedFactsBox() {
        while PDUPool.take() != nil {}
        func everything(_ kind: String) -> DissectedPDU {
            var pdu = DissectedPDU(protocolName: "amqp", summary: "s", wireLength: 9, kind: kind)
            pdu.facts!.setPublish(topic: "a/b", payloadLength: 3, qos: 2, retained: true)
            pdu.facts!.clientID = "c"
            pdu.facts!.connectVersion = "5.0"
            pdu.facts!.version = "0-9-1"
            pdu.facts!.channel = 7
            pdu.facts!.queue = "q"
            pdu.facts!.ackedCount = 4
            var identity = PDUFacts.ClientIdentity()
            identity.vhost = "/"
            pdu.facts!.identity = identity
            pdu.facts!.message = PDUFacts.MessageFacts(method: "basic.publish", exchange: "x", routingKey: "k", bodySize: 1)
            pdu.facts!.close = PDUFacts.CloseFacts(replyCode: 406, replyCodeName: nil, replyText: "t", failedMethod: nil)
            pdu.problems.append(Problem(.error, "e", "a problem"))
            return pdu
        }
        var old = [everything("connection.close"), everything("channel.close")]
        let heldFacts = old[1].facts!
        DissectedPDU.recycle(&old)
        #expect(PDUPool.current.boxes.count == 2)
        let fresh = (0..<2).map { _ in DissectedPDU(protocolName: "mqtt", summary: "PUBACK", wireLength: 4, kind: "PUBACK") }
        #expect(PDUPool.current.boxes.isEmpty, "both boxes were reused")
        for pdu in fresh {
            #expect(pdu.facts == PDUFacts(kind: "PUBACK"))
            #expect(pdu.protocolName == "mqtt" && pdu.summary == "PUBACK" && pdu.wireLength == 4)
            #expect(pdu.problems.isEmpty && pdu.fields.isEmpty && !pdu.hasTextTree && !pdu.hasJSONTree)
        }
        #expect(heldFacts.kind == "channel.close" && heldFacts.queue == "q" && heldFacts.close?.replyCode == 406)
        #expect(heldFacts.topic == "a/b" && heldFacts.identity?.vhost == "/")
    }

    @Test("a facts PDU with shared facts, in a reused box: the facts read back, and a change to them stays in its own copy")
    func sharedFactsBox() {
        while PDUPool.take() != nil {}
        var old = [DissectedPDU(protocolName: "amqp", summary: "s", wireLength: 9, kind: "basic.ack")]
        old[0].facts!.queue = "q"
        old[0].problems.append(Problem(.error, "e", "a problem"))
        DissectedPDU.recycle(&old)
        let shared = PDUFacts(kind: "PUBACK")
        var pdu = DissectedPDU(protocolName: "mqtt", summary: "PUBACK", wireLength: 4, sharedFacts: shared)
        #expect(PDUPool.current.boxes.isEmpty, "the box was reused")
        #expect(pdu.facts == shared && pdu.facts?.queue == nil && pdu.problems.isEmpty)
        #expect(pdu.protocolName == "mqtt" && pdu.summary == "PUBACK" && pdu.wireLength == 4)
        pdu.facts!.channel = 3
        #expect(shared.channel == nil && pdu.facts?.channel == 3)
    }

    nonisolated(unsafe) private static var scratch = ByteSink()
}
