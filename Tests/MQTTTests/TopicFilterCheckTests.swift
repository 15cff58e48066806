import Testing
@testable import MQTT
@testable import MQTTViews
import TestSupport

/// The byte-wise check of an ASCII topic filter (`PacketParser.misplacedWildcard(inASCII:)`) against
/// the Character-wise rules it stands in for (MQTT 5.0 / 3.1.1 §4.7.1).
@Suite("Topic filter check")
struct TopicFilterCheckTests {
    /// The Character-wise rules: the first wildcard out of place, level by level.
    static func reference(_ filter: String) -> UInt8? {
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (i, level) in levels.enumerated() {
            if level.contains("#"), level != "#" || i != levels.count - 1 { return UInt8(ascii: "#") }
            if level.contains("+"), level != "+" { return UInt8(ascii: "+") }
        }
        return nil
    }

    @Test("finds the same wildcard out of place as the Character-wise rules", arguments: [
        "a", "/", "//", "#", "+", "a/#", "a/#/b", "#/", "/#", "+/+", "a+/b", "a/+b", "+#", "#+", "a/b#", "sport/+/player1",
        "sport/tennis/#", "sport#", "sport/tennis#", "+/tennis/#", "/+", "+/", "a//#", "##", "++",
    ])
    func fixed(filter: String) {
        #expect(PacketParser.misplacedWildcard(inASCII: filter) == .some(Self.reference(filter)), "\(filter)")
    }

    @Test("agrees with the Character-wise rules on 20,000 random ASCII filters, and leaves others to them")
    func random() {
        var generator = SplitMix64(seed: 47)
        let ascii: [Character] = ["a", "b", "/", "#", "+", " ", "\r", "\n"]
        for _ in 0..<20_000 {
            let n = Int(generator.next() % 8) + 1
            let filter = String((0..<n).map { _ in ascii[Int(generator.next() % UInt64(ascii.count))] })
            #expect(PacketParser.misplacedWildcard(inASCII: filter) == .some(Self.reference(filter)), "\(filter.debugDescription)")
        }
        // A combining mark after `/`, `#` or `+` makes one Character of both: not taken here.
        for filter in ["a+/\u{301}#", "#\u{301}", "+\u{301}/a", "é/#"] {
            #expect(PacketParser.misplacedWildcard(inASCII: filter) == nil, "\(filter.debugDescription)")
        }
    }
}
