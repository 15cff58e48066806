import Dissection
import Testing

/// `RecentStrings` hands the MQTT facts fast path one String per topic seen lately: the String must
/// always hold the packet's bytes, whatever collides in its cache.
@Suite("Recent strings: topic names")
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
}
