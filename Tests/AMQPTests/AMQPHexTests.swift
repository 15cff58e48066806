@testable import AMQP
import Dissection
import Testing
import TestSupport

@Suite("AMQP hex")
struct AMQPHexTests {
    @Test("known values", arguments: [(UInt64(0x9F), 2, "0x9F"), (0xBCC0, 4, "0xBCC0"), (0x3C, 4, "0x003C"), (0xABC, 1, "0xC"),
                                       (UInt64.max, 16, "0xFFFFFFFFFFFFFFFF"), (0, 0, "0x0"), (5, 20, "0x0000000000000005")])
    func known(value: UInt64, digits: Int, expected: String) {
        #expect(AMQPHex.string(value, digits: digits) == expected)
        var sink = ByteSink()
        AMQPHex.append(value, digits: digits, into: &sink)
        #expect(sink.take() == expected)
    }

    /// The digits as the standard library writes them: the low `digits` hex digits, zero-padded.
    private static func reference(_ value: UInt64, digits: Int) -> String {
        let count = min(max(digits, 1), 16)
        let masked = count == 16 ? value : value & (1 << UInt64(4 * count) - 1)
        let hex = String(masked, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: count - hex.count) + hex
    }

    @Test("random values and widths: the string and the sink both give the standard library's digits")
    func againstReference() {
        var rng = SplitMix64(seed: 0x4E7)
        var sink = ByteSink()
        for _ in 0..<5000 {
            let value = rng.next() >> (rng.next() % 64)
            let digits = Int(rng.next() % 18)
            let expected = Self.reference(value, digits: digits)
            #expect(AMQPHex.string(value, digits: digits) == expected)
            sink.literal("x")
            AMQPHex.append(value, digits: digits, into: &sink)
            #expect(sink.take() == "x" + expected, "\(value) \(digits)")
        }
    }
}
