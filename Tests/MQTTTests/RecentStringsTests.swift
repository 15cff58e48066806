import Dissection
import Testing

/// `RecentStrings` hands the facts fast paths one String per name seen lately (an MQTT topic, an
/// AMQP exchange, routing key or consumer tag): the String must always hold the packet's bytes,
/// whatever collides in its cache.
@Suite("Recent strings")
struct RecentStringsTests {
    static func bits(_ s: String) -> (UInt64, UInt64) { unsafeBitCast(s, to: (UInt64, UInt64).self) }

    @Test("a topic seen before gets the same String; topics alike at both ends and of one length, short and empty ones, get their own bytes")
    func names() {
        var names = RecentStrings()
        // Same length, same first and last eight bytes: the same slot, told apart by their bytes.
        let topics = ["sensors/a/kitchen/temp/01", "sensors/b/kitchen/temp/01", "sensors/c/kitchen/temp/01",
                      "short", "s", "", "bench/bench-pub-0/10", "bench/bench-pub-1/10"]
        for _ in 0..<3 {
            for topic in topics {
                let made = Array(topic.utf8).withUnsafeBufferPointer { names.text($0) }
                #expect(made == topic)
                #expect(Array(made.utf8) == Array(topic.utf8))
            }
        }
        // More topics than slots, over and over (the slots grow, names are replaced): always the bytes.
        for round in 0..<3 {
            for i in 0..<1_000 {
                let topic = "fleet/vehicle-\(i * 7919 % 1_000)/telemetry/\(round)"
                let made = Array(topic.utf8).withUnsafeBufferPointer { names.text($0) }
                if made != topic { Issue.record("\(made) for \(topic)"); return }
            }
        }
        // Seen twice in a row, a long topic is the very String made the first time.
        let a = Array("bench/bench-pub-5/15".utf8).withUnsafeBufferPointer { names.text($0) }
        let b = Array("bench/bench-pub-5/15".utf8).withUnsafeBufferPointer { names.text($0) }
        #expect(Self.bits(a) == Self.bits(b))
    }

    @Test("a String that is not its bytes' own UTF-8 (an escaped one) is not kept, so it pushes out none that is")
    func escapedNotKept() {
        var strings = RecentStrings()
        let topic = Array("bench/bench-pub-5/telemetry/15".utf8)
        let kept = topic.withUnsafeBufferPointer { strings.text($0) }
        for i in 0..<1_000 {
            let bytes: [UInt8] = [0x01, UInt8(truncatingIfNeeded: i), UInt8(truncatingIfNeeded: i >> 8)] + Array("binary".utf8)
            let made = bytes.withUnsafeBufferPointer { strings.string($0) { _ in "escaped \(i)" } }
            if made != "escaped \(i)" { Issue.record("\(made) for \(bytes)"); return }
        }
        let again = topic.withUnsafeBufferPointer { strings.text($0) }
        #expect(Self.bits(kept) == Self.bits(again))
    }
}
