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

    @Test("the time of day written into a sink is timeOfDay's, at every precision, before 1970 and with odd nanoseconds")
    func timeOfDayInPlace() {
        var rng = SplitMix64(seed: 0x71DE)
        var sink = ByteSink()
        for round in 0..<20_000 {
            let seconds = Int64(bitPattern: rng.next()) % 10_000_000_000
            let nanoseconds = round % 7 == 0 ? UInt32(truncatingIfNeeded: rng.next()) : UInt32(rng.next() % 1_000_000_000)
            let t = Timestamp(seconds: seconds, nanoseconds: nanoseconds, fractionalDigits: round % 10)
            sink.literal("x")
            sink.appendTimeOfDay(t)
            #expect(sink.take() == "x" + t.timeOfDay, "\(seconds) \(nanoseconds) \(round % 10)")
        }
    }
}
