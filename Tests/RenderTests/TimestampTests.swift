import Dissection
import Testing
import TestSupport

@Suite("Timestamp")
struct TimestampTests {
    @Test("the UTC date to the second is the date with Z after it, in and beyond the four-digit years",
          arguments: [Int64(0), 1_795_357_127, 253_402_300_799, 253_402_300_800, -1, -62_167_219_200, -62_167_219_201])
    func utcSeconds(seconds: Int64) {
        let t = Timestamp(seconds: seconds, nanoseconds: 0, fractionalDigits: 0)
        #expect(t.iso8601SecondsUTC == t.iso8601Seconds + "Z")
        #expect(t.iso8601SecondsUTC.utf8.last == UInt8(ascii: "Z"))
    }

    @Test("nanoseconds since 1970, and microseconds between two times across a second, either way")
    func differences() {
        let a = Timestamp(seconds: 1_700_000_000, nanoseconds: 999_999_500), b = Timestamp(seconds: 1_700_000_001, nanoseconds: 1_500)
        #expect(a.nanosecondsSince1970 == 1_700_000_000_999_999_500)
        #expect(b.microseconds(since: a) == 2)
        #expect(a.microseconds(since: b) == -2)
        #expect(Timestamp(seconds: 0, nanoseconds: 0).microseconds(since: Timestamp(seconds: -3, nanoseconds: 0)) == 3_000_000)
    }

    @Test("known dates")
    func known() {
        #expect(Timestamp(seconds: 1_795_357_127, nanoseconds: 0, fractionalDigits: 0).iso8601SecondsUTC == "2026-11-22T14:18:47Z")
        #expect(Timestamp(seconds: 0, nanoseconds: 0, fractionalDigits: 0).iso8601SecondsUTC == "1970-01-01T00:00:00Z")
    }

    @Test("random times: the UTC form is the plain form with Z")
    func random() {
        var rng = SplitMix64(seed: 0x7155)
        for _ in 0..<5000 {
            let t = Timestamp(seconds: Int64(rng.next() % 400_000_000_000) - 100_000_000_000, nanoseconds: 0, fractionalDigits: 0)
            #expect(t.iso8601SecondsUTC == t.iso8601Seconds + "Z")
        }
    }

    /// The time of day worked out another way: the seconds of the day, then the fraction's
    /// leading digits, as decimal text.
    private static func reference(_ t: Timestamp) -> String {
        let day = Int(((t.seconds % 86_400) + 86_400) % 86_400)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        var text = two(day / 3600) + ":" + two(day / 60 % 60) + ":" + two(day % 60)
        let digits = t.fractionalDigits
        guard digits > 0 else { return text }
        var scale = 1
        for _ in 0..<digits { scale *= 10 }
        var v = Int(t.nanoseconds)
        for _ in digits..<9 { v /= 10 }
        let fraction = String(v % scale)
        text += "." + String(repeating: "0", count: digits - fraction.count) + fraction
        return text
    }

    @Test("known times of day", arguments: [(Int64(0), UInt32(0), 6, "00:00:00.000000"), (1_795_357_127, 227_840_000, 6, "14:18:47.227840"),
                                            (86_399, 999_999_999, 9, "23:59:59.999999999"), (-1, 5_000_000, 3, "23:59:59.005"),
                                            (3_600, 123, 0, "01:00:00")])
    func knownTimes(seconds: Int64, nanoseconds: UInt32, digits: Int, expected: String) {
        let t = Timestamp(seconds: seconds, nanoseconds: nanoseconds, fractionalDigits: digits)
        #expect(t.timeOfDay == expected)
        var sink = ByteSink()
        sink.appendTimeOfDay(t)
        #expect(sink.take() == expected)
    }

    @Test("the time of day, as a String and written into a sink, at every precision, before 1970 and with out-of-range nanoseconds")
    func timeOfDayAgainstReference() {
        var rng = SplitMix64(seed: 0x71DE)
        var sink = ByteSink()
        for round in 0..<20_000 {
            let seconds = Int64(bitPattern: rng.next()) % 10_000_000_000
            let nanoseconds = round % 7 == 0 ? UInt32(truncatingIfNeeded: rng.next()) : UInt32(rng.next() % 1_000_000_000)
            let t = Timestamp(seconds: seconds, nanoseconds: nanoseconds, fractionalDigits: round % 10)
            let expected = Self.reference(t)
            #expect(t.timeOfDay == expected, "\(seconds) \(nanoseconds) \(round % 10)")
            sink.literal("x")
            sink.appendTimeOfDay(t)
            #expect(sink.take() == "x" + expected)
        }
    }

    @Test("the epoch seconds JSON gives as ts", arguments: [
        (Int64(1_795_356_396), UInt32(141_530_000), 6, "1795356396.141530"), (0, 0, 6, "0.000000"), (5, 123, 0, "5"),
        (1_700_000_000, 999_999_999, 9, "1700000000.999999999"), (-2, 250_000_000, 3, "-1.750"), (-1, 0, 6, "-1.000000"),
        (-2, 400, 6, "-2.000000"), (-1, 999_000_000, 3, "-0.001"),
    ])
    func epochSeconds(seconds: Int64, nanoseconds: UInt32, digits: Int, expected: String) {
        var sink = ByteSink()
        sink.appendEpochSeconds(Timestamp(seconds: seconds, nanoseconds: nanoseconds, fractionalDigits: digits))
        #expect(sink.take() == expected)
    }

    /// The nanoseconds since 1970 a decimal `ts` says, read digit by digit.
    private static func nanoseconds(of ts: String) -> Int64? {
        let negative = ts.hasPrefix("-")
        let parts = ts.dropFirst(negative ? 1 : 0).split(separator: ".", omittingEmptySubsequences: false)
        guard let whole = Int64(parts[0]), parts.count <= 2 else { return nil }
        var fraction: Int64 = 0
        if parts.count == 2 {
            guard let f = Int64(parts[1]) else { return nil }
            fraction = f
            for _ in parts[1].count..<9 { fraction *= 10 }
        }
        let magnitude = whole * 1_000_000_000 + fraction
        return negative ? -magnitude : magnitude
    }

    @Test("ts is the time the ISO form shows, at every precision, before 1970 and with out-of-range nanoseconds")
    func epochSecondsAgainstTimeOfDay() {
        var rng = SplitMix64(seed: 0x75EC)
        var sink = ByteSink()
        for round in 0..<20_000 {
            let seconds = Int64(bitPattern: rng.next()) % 4_000_000_000  // nanoseconds since 1970 within Int64
            let nanoseconds = round % 7 == 0 ? UInt32(truncatingIfNeeded: rng.next()) : UInt32(rng.next() % 1_000_000_000)
            let digits = round % 10
            let t = Timestamp(seconds: seconds, nanoseconds: nanoseconds, fractionalDigits: digits)
            sink.appendEpochSeconds(t)
            let ts = sink.take()
            // The fraction the ISO form shows, as nanoseconds.
            var shown: Int64 = 0
            if digits > 0, let f = Int64(Self.reference(t).split(separator: ".")[1]) {
                shown = f
                for _ in digits..<9 { shown *= 10 }
            }
            #expect(Self.nanoseconds(of: ts) == seconds * 1_000_000_000 + shown, "\(seconds) \(nanoseconds) \(digits): \(ts)")
            // The capture's precision: as many digits as the ISO form, no point without any.
            let after = ts.split(separator: ".", omittingEmptySubsequences: false).dropFirst()
            #expect(after.count == (digits > 0 ? 1 : 0) && (after.first?.count ?? 0) == digits, "\(ts)")
        }
    }
}
