import Dissection
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
        #expect(original.problems.map(\.code) == ["n"])
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
}
