/// A capture time, with the precision the capture recorded.
public struct Timestamp: Sendable, Equatable, Comparable {
    public var seconds: Int64
    public var nanoseconds: UInt32
    /// Digits printed after the decimal point (0…9): the capture's precision, e.g. 3 for a
    /// pcapng interface with millisecond timestamps, 6 for microseconds, 9 for nanoseconds.
    public let fractionalDigits: Int

    public init(seconds: Int64, nanoseconds: UInt32, nanosecondPrecision: Bool = false) {
        self.init(seconds: seconds, nanoseconds: nanoseconds, fractionalDigits: nanosecondPrecision ? 9 : 6)
    }

    /// A time printed with `fractionalDigits` digits after the point (clamped to 0…9).
    public init(seconds: Int64, nanoseconds: UInt32, fractionalDigits: Int) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
        self.fractionalDigits = min(max(fractionalDigits, 0), 9)
    }

    public var timeInterval: Double { Double(seconds) + Double(nanoseconds) / 1e9 }

    /// The time as nanoseconds since 1970 (what the analyses keep of a time: one word).
    @inlinable public var nanosecondsSince1970: Int64 { seconds &* 1_000_000_000 &+ Int64(nanoseconds) }

    /// Microseconds from `earlier` to this time (negative when this is earlier).
    public func microseconds(since earlier: Timestamp) -> Int {
        Int((nanosecondsSince1970 &- earlier.nanosecondsSince1970) / 1000)
    }

    public static func < (l: Timestamp, r: Timestamp) -> Bool {
        (l.seconds, l.nanoseconds) < (r.seconds, r.nanoseconds)
    }

    /// ISO 8601 in UTC with `fractionalDigits` fractional digits, e.g. `2026-11-22T04:06:21.123456Z`.
    public var iso8601: String { iso8601Seconds + fraction + "Z" }

    /// The date and time to the second, `2026-11-22T04:06:21`: what `iso8601` puts before the
    /// fraction. Renderers cache it per second and add the fraction with `ByteSink.appendFraction`.
    public var iso8601Seconds: String { iso8601Seconds(utc: false) }

    /// `iso8601Seconds` with the `Z` of UTC after it, made as one string.
    public var iso8601SecondsUTC: String { iso8601Seconds(utc: true) }

    private func iso8601Seconds(utc: Bool) -> String {
        // One writer of the digits: AMQP timestamps are written in place (`ByteSink.appendDateTime`).
        var sink = ByteSink(capacity: 24)
        if sink.appendDateTime(seconds: seconds, utc: utc) { return sink.take() }
        // A year outside 0…9999.
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secOfDay = Int(seconds - days * 86_400)
        let (y, m, d) = Timestamp.civil(fromDays: days)
        return pad(Int(y), 4) + "-" + pad(m, 2) + "-" + pad(d, 2) + "T" + pad(secOfDay / 3600, 2) + ":"
            + pad(secOfDay / 60 % 60, 2) + ":" + pad(secOfDay % 60, 2) + (utc ? "Z" : "")
    }

    /// Time of day only, `04:06:21.123456`, for compact text output.
    public var timeOfDay: String {
        // One writer of the digits: the text format writes them in place (`ByteSink.appendTimeOfDay`).
        var sink = ByteSink(capacity: 24)
        sink.appendTimeOfDay(self)
        return sink.take()
    }

    /// `.` and the fraction of the second, truncated to `fractionalDigits` (empty for 0 digits).
    private var fraction: String {
        guard fractionalDigits > 0 else { return "" }
        var divisor: UInt32 = 1
        for _ in fractionalDigits..<9 { divisor *= 10 }
        return "." + pad(Int(nanoseconds / divisor), fractionalDigits)
    }

    /// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's civil_from_days).
    static func civil(fromDays z0: Int64) -> (Int64, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = Int(doy - (153 * mp + 2) / 5 + 1)
        let m = Int(mp < 10 ? mp + 3 : mp - 9)
        return (m <= 2 ? y + 1 : y, m, d)
    }
}

@inline(__always)
private func pad(_ v: Int, _ width: Int) -> String {
    let s = String(v)
    return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
}
