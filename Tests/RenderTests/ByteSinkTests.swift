import Dissection
import Testing
import TestSupport

@Suite("Byte sink")
struct ByteSinkTests {
    /// Distinct bytes, so a byte copied from the wrong place or twice is seen.
    private static func pattern(_ n: Int, seed: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 * 7 + seed) } }

    @Test("writes of every length from 0 to 40, at every starting offset up to 16, keep each byte where it belongs")
    func appendsEveryLength() {
        for lead in 0...16 {
            for n in 0...40 {
                var sink = ByteSink(capacity: 8) // small: the writes make it grow too
                var expected = ByteSinkTests.pattern(lead, seed: 200)
                expected.withUnsafeBufferPointer { sink.append(bytes: $0) }
                let bytes = ByteSinkTests.pattern(n, seed: n)
                bytes.withUnsafeBufferPointer { sink.append(bytes: $0) }
                expected += bytes
                bytes.withUnsafeBufferPointer { sink.append(quoted: $0, then: UInt8(ascii: ":")) }
                expected += [0x22] + bytes + [0x22, UInt8(ascii: ":")]
                bytes.withUnsafeBufferPointer { sink.append(quoted: $0) }
                expected += [0x22] + bytes + [0x22]
                #expect(Array(sink.bytes) == expected, "\(n) bytes after \(lead)")
            }
        }
    }

    @Test("in-place writes: what the body stores goes after what was written, as many bytes as it says, growing the buffer first")
    func appendsInPlace() {
        var sink = ByteSink(capacity: 8)
        let lead = ByteSinkTests.pattern(6, seed: 3)
        lead.withUnsafeBufferPointer { sink.append(bytes: $0) }
        for round in 0..<50 {
            sink.appendInPlace(maximum: 32) { p in
                p.storeBytes(of: UInt8(round), as: UInt8.self)
                p.storeBytes(of: UInt64(0x0102_0304_0506_0708) &* UInt64(round + 1), toByteOffset: 1, as: UInt64.self)
                return round % 2 == 0 ? 9 : 1 // stored 9, kept all or only the first
            }
        }
        var expected = lead
        for round in 0..<50 {
            expected.append(UInt8(round))
            if round % 2 == 0 {
                withUnsafeBytes(of: UInt64(0x0102_0304_0506_0708) &* UInt64(round + 1)) { expected += $0 }
            }
        }
        #expect(Array(sink.bytes) == expected)
        #expect(sink.capacity >= expected.count)
    }

    @Test("spaces: as many as asked for, after what was written, none for zero or less")
    func spaces() {
        var sink = ByteSink(capacity: 8)
        sink.literal("a")
        for n in [0, 4, -3, 1, 40] { sink.append(spaces: n); sink.literal("|") }
        #expect(sink.take() == "a|    ||" + " |" + String(repeating: " ", count: 40) + "|")
    }

    @Test("literals of one and of many characters are written as their UTF-8 bytes")
    func literals() {
        var sink = ByteSink(capacity: 4)
        sink.literal("{")
        sink.literal(",\"problems\":[")
        sink.literal("é")
        sink.literal("")
        sink.literal("a literal longer than sixteen bytes, to make the sink grow")
        #expect(sink.take() == "{,\"problems\":[éa literal longer than sixteen bytes, to make the sink grow")
    }

    @Test("integers are written as their decimal digits",
          arguments: [0, 7, 9, 10, 11, 99, 100, 101, 109, 110, 999, 1000, 1001, 10_000, 99_999, 100_000, 123_456_789,
                      -1, -9, -10, -42, -100, -1_000_000, Int.max, Int.min, Int.max / 10, Int.min + 1])
    func integers(n: Int) {
        var sink = ByteSink()
        sink.append(n)
        #expect(sink.take() == String(n))
    }

    @Test("random integers of every length are written as their decimal digits")
    func randomIntegers() {
        var rng = SplitMix64(seed: 0xD161)
        for _ in 0..<20_000 {
            let shift = Int(rng.next() % 64)
            let n = Int(truncatingIfNeeded: rng.next() >> UInt64(shift))
            var sink = ByteSink(capacity: 8)
            sink.literal("x")
            sink.append(n)
            #expect(String(decoding: sink.bytes, as: UTF8.self) == "x" + String(n))
        }
    }

    @Test("hex: two lower-case digits per byte, as Preview.hex writes them")
    func hex() {
        let bytes: [UInt8] = (0...255).map { UInt8($0) }
        for n in [0, 1, 7, 8, 255, 256] {
            var sink = ByteSink(capacity: 8)
            sink.literal("x")
            bytes.prefix(n).withUnsafeBufferPointer { sink.appendHex($0) }
            #expect(String(decoding: sink.bytes, as: UTF8.self) == "x" + Preview.hex(bytes.prefix(n)))
        }
    }

    @Test("fractions keep the capture's digits", arguments: [(3, 123_000_000 as UInt32, ".123"), (6, 5_000, ".000005"), (9, 7, ".000000007"), (0, 999, "")])
    func fractions(digits: Int, nanoseconds: UInt32, expected: String) {
        var sink = ByteSink()
        sink.appendFraction(Timestamp(seconds: 0, nanoseconds: nanoseconds, fractionalDigits: digits))
        #expect(sink.take() == expected)
    }

    /// Latency words at each rounding's edges, as the interpolated version wrote them (its
    /// outputs, taken before it was replaced): two decimals under 10, one under 100, none up to a
    /// second, then seconds the same way.
    @Test("latency words round at each edge as before", arguments: [
        (-5, "-5 µs"), (0, "0 µs"), (999, "999 µs"), (1000, "1.00 ms"), (1001, "1.00 ms"), (1010, "1.01 ms"),
        (1050, "1.05 ms"), (9999, "10.00 ms"), (10_000, "10.0 ms"), (12_345, "12.3 ms"), (99_960, "100.0 ms"),
        (100_000, "100 ms"), (999_999, "1000 ms"), (1_000_000, "1.00 s"), (1_050_000, "1.05 s"), (9_999_999, "10.00 s"),
        (10_000_000, "10.0 s"), (123_456_789, "123.5 s"),
    ])
    func latencyWords(microseconds: Int, words: String) {
        #expect(latencyText(microseconds: microseconds) == words)
        var sink = ByteSink(capacity: 8)
        sink.literal("in ")
        sink.appendLatency(microseconds: microseconds)
        #expect(sink.take() == "in " + words)
    }
}
