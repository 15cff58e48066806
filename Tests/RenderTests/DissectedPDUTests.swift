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

    /// A PDU with `tag` in its summary, as the facts view makes one (from the pool when it has a box).
    private static func made(_ tag: String) -> DissectedPDU {
        DissectedPDU(protocolName: "mqtt", summary: "PUBACK id=\(tag)", wireLength: 4, kind: "PUBACK")
    }

    @Test("boxes of PDUs let go are reused for new ones, which start empty; a PDU still held keeps its own")
    func recycledBoxes() {
        // Whatever an earlier test on this thread left in the pool is taken first.
        while PDUPool.take() != nil {}
        var batch = (0..<5).map { DissectedPDUTests.made("old-\($0)") }
        batch[0].problems.append(Problem(.error, "e", "a problem"))
        batch[1].facts?.queue = "q"
        batch[2].fields.append(Field("x", "X", .int(1)))
        batch[3].annotations.append("acknowledged by #9")
        let held = batch[4]
        DissectedPDU.recycle(&batch)
        #expect(batch.isEmpty)
        #expect(PDUPool.current.boxes.count == 4, "the held PDU's box stays with it")

        let fresh = (0..<6).map { DissectedPDUTests.made("new-\($0)") }
        #expect(PDUPool.current.boxes.isEmpty)
        for (i, pdu) in fresh.enumerated() {
            #expect(pdu.summary == "PUBACK id=new-\(i)")
            #expect(pdu.problems.isEmpty && pdu.fields.isEmpty && pdu.annotations.isEmpty)
            #expect(pdu.facts == PDUFacts(kind: "PUBACK"))
        }
        #expect(held.summary == "PUBACK id=old-4")
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
            #expect(pdu.problems.isEmpty && pdu.fields.isEmpty)
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
}
