@testable import Render
import Testing
import TestSupport

/// The table's line wrapping: an ASCII string wrapped over its bytes (`wrapASCII`) as by Characters.
@Suite("Table line wrapping")
struct WrapTests {
    @Test("ASCII strings wrap over their bytes as by Characters", arguments: [
        "", "a", ",", ", ,", "CONNECT 1, CONNACK 1, SUBSCRIBE 1, SUBACK 1, PUBLISH 5, PUBACK 4, DISCONNECT 1",
        "client RabbitMQ 3.12 (Erlang/OTP 25), user guest, vhost /, channels 3", ",,a,,b, ,c , d,",
        String(repeating: "basic.deliver 12345, ", count: 12),
    ])
    func fixed(s: String) {
        for (indent, width) in [(0, 80), (7, 80), (7, 20), (3, 5)] {
            #expect(wrapASCII(s, indent: indent, width: width) == wrapCharacters(s, indent: indent, width: width))
        }
    }

    @Test("5,000 random ASCII lists of parts wrap as by Characters; others are left to Characters")
    func random() {
        var generator = SplitMix64(seed: 80)
        let alphabet = Array("ab ,.".utf8)
        for _ in 0..<5_000 {
            let n = Int(generator.next() % 120)
            let s = String(decoding: (0..<n).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }, as: UTF8.self)
            let indent = Int(generator.next() % 10), width = Int(generator.next() % 40) + 1
            #expect(wrapASCII(s, indent: indent, width: width) == wrapCharacters(s, indent: indent, width: width), "\(s.debugDescription)")
        }
        #expect(wrapASCII("café, thé", indent: 7, width: 80) == nil)
    }
}
