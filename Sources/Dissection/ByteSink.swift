/// UTF-8 text built with plain byte writes into a raw staging buffer (an array append checks
/// uniqueness and capacity per call, and a String append its storage and encoding, which costs
/// far more than the bytes): a renderer's output for one event, handed over in one copy, or a
/// decoder's summary line, made a String once (`take`). Its buffer is a reference: copies of a
/// sink write into the same bytes, which lets a renderer keep one sink from event to event.
public struct ByteSink {
    /// The staging buffer: a class, so copies of the sink share it and it is freed once.
    /// Usable from inline code: the appends are inlined into renderers and decoders (another
    /// module), where most of their cost would otherwise be the call.
    @usableFromInline final class Storage {
        // One thread at a time (a sink is not Sendable; the shared `unallocated` is never written).
        @usableFromInline @exclusivity(unchecked) var base: UnsafeMutablePointer<UInt8>
        // One thread at a time (a sink is not Sendable), and no access to it lasts across a call out.
        @usableFromInline @exclusivity(unchecked) var count = 0
        // One thread at a time (a sink is not Sendable); written only in `grow`, which calls nothing out.
        @usableFromInline @exclusivity(unchecked) var capacity: Int

        @usableFromInline init(capacity: Int) {
            self.capacity = max(capacity, 64)
            base = .allocate(capacity: self.capacity)
        }

        deinit { base.deallocate() }

        @inlinable @inline(__always) func reserve(_ extra: Int) {
            if count + extra > capacity { grow(extra) }
        }

        @usableFromInline @inline(never) func grow(_ extra: Int) {
            var grown = capacity * 2
            while grown < count + extra { grown *= 2 }
            let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
            moved.update(from: base, count: count)
            base.deallocate()
            base = moved
            capacity = grown
        }
    }

    @usableFromInline var storage: Storage

    public init(capacity: Int = 4096) { storage = Storage(capacity: capacity) }

    /// A sink shared by every value made from it, so never uniquely referenced: an owner that
    /// checks `isUniquelyReferenced` before each write and makes its own buffer when it is not
    /// (a connection's dissector does) can start with it, and allocates nothing until it first
    /// writes. A connection that carries no PDU (a half-open one) then costs no buffer.
    // Never written: every writer finds it shared and makes its own buffer first.
    nonisolated(unsafe) public static let unallocated = ByteSink(capacity: 0)

    /// Whether no copy of this sink shares its buffer (an owner that lends it out can check
    /// before writing that nobody else holds it).
    public var isUniquelyReferenced: Bool {
        mutating get { isKnownUniquelyReferenced(&storage) }
    }

    /// Bytes the buffer holds before it grows.
    public var capacity: Int { storage.capacity }

    /// The bytes written so far.
    @inlinable
    public var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage.base, count: storage.count) }

    @inlinable
    public mutating func append(_ s: String) {
        // Native strings lend their bytes as they are; others are made contiguous first.
        if let done: Void = s.utf8.withContiguousStorageIfAvailable({ append(bytes: $0) }) { return done }
        var s = s
        s.withUTF8 { append(bytes: $0) }
    }

    /// A literal: its bytes are in the binary, so no String is made or inspected.
    @inlinable @inline(__always)
    public mutating func literal(_ s: StaticString) {
        // A one-character literal may be stored as a scalar, not as bytes: it goes the slow way.
        guard s.hasPointerRepresentation else { return s.withUTF8Buffer { append(bytes: $0) } }
        let n = s.utf8CodeUnitCount
        storage.reserve(n)
        ByteSink.copy(s.utf8Start, to: storage.base + storage.count, count: n)
        storage.count += n
    }

    @inlinable @inline(__always)
    public mutating func append(bytes p: UnsafeBufferPointer<UInt8>) {
        guard let from = p.baseAddress, !p.isEmpty else { return }
        storage.reserve(p.count)
        ByteSink.copy(from, to: storage.base + storage.count, count: p.count)
        storage.count += p.count
    }

    /// Copies `count` bytes. Most writes are a few bytes (a key, a number, a short value): up to 16
    /// are copied as two overlapping words, which costs less than the call to memmove.
    @inlinable @inline(__always)
    static func copy(_ from: UnsafePointer<UInt8>, to: UnsafeMutablePointer<UInt8>, count n: Int) {
        let src = UnsafeRawPointer(from), dst = UnsafeMutableRawPointer(to)
        if n >= 8 && n <= 16 {
            let head = src.loadUnaligned(as: UInt64.self), tail = src.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
            dst.storeBytes(of: head, as: UInt64.self)
            dst.storeBytes(of: tail, toByteOffset: n - 8, as: UInt64.self)
        } else if n >= 4 && n < 8 {
            let head = src.loadUnaligned(as: UInt32.self), tail = src.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
            dst.storeBytes(of: head, as: UInt32.self)
            dst.storeBytes(of: tail, toByteOffset: n - 4, as: UInt32.self)
        } else if n < 4 {
            for i in 0..<n { to[i] = from[i] }
        } else {
            to.update(from: from, count: n)
        }
    }

    /// The bytes between double quotes, and `suffix` after them if given, with one capacity check.
    @inlinable @inline(__always)
    public mutating func append(quoted p: UnsafeBufferPointer<UInt8>, then suffix: UInt8? = nil) {
        let n = p.count
        storage.reserve(n + 3)
        let at = storage.base + storage.count
        at[0] = 0x22
        if let from = p.baseAddress, n > 0 { ByteSink.copy(from, to: at + 1, count: n) }
        at[n + 1] = 0x22
        if let suffix {
            at[n + 2] = suffix
            storage.count += n + 3
        } else {
            storage.count += n + 2
        }
    }

    /// `count` spaces (an indentation).
    @inlinable
    public mutating func append(spaces count: Int) {
        guard count > 0 else { return }
        storage.reserve(count)
        (storage.base + storage.count).initialize(repeating: 0x20, count: count)
        storage.count += count
    }

    @inlinable
    public mutating func append(byte b: UInt8) {
        storage.reserve(1)
        storage.base[storage.count] = b
        storage.count += 1
    }

    /// Decimal digits, written in place: counted first, then written from the last, two at a
    /// time (one division per pair), with no reversal afterwards.
    @inlinable @inline(__always)
    public mutating func append(_ n: Int) {
        storage.reserve(20)
        var at = storage.base + storage.count
        if n < 0 {
            at.pointee = UInt8(ascii: "-")
            at += 1
        }
        var v = n.magnitude
        if v < 10 {
            at.pointee = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v)
            storage.count = at + 1 - storage.base
            return
        }
        // The pairs are read through the literal's pointer (a closure over its buffer was not
        // always inlined).
        let pairs = ByteSink.digitPairs.utf8Start
        if v < 100 {
            let pair = Int(truncatingIfNeeded: v) &* 2
            at[0] = pairs[pair]
            at[1] = pairs[pair &+ 1]
            storage.count = at + 2 - storage.base
            return
        }
        var digits = 3
        var bound: UInt = 1000
        while digits < 20, v >= bound {
            digits += 1
            bound = bound &* 10
        }
        var i = digits
        while v >= 10 {
            let pair = Int(truncatingIfNeeded: v % 100) &* 2
            v /= 100
            i -= 2
            at[i] = pairs[pair]
            at[i + 1] = pairs[pair &+ 1]
        }
        // An odd number of digits leaves the first one.
        if v > 0 { at[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v) }
        storage.count = at + digits - storage.base
    }

    /// `00` to `99`, two digits each, for `append(_:)`.
    @usableFromInline static let digitPairs: StaticString =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    /// The bytes in lower-case hex, two digits each, no separators (as `Preview.hex`).
    public mutating func appendHex(_ p: UnsafeBufferPointer<UInt8>) {
        storage.reserve(p.count * 2)
        let at = storage.base + storage.count
        ByteSink.hexDigits.withUTF8Buffer { d in
            for i in 0..<p.count {
                at[2 * i] = d[Int(p[i] >> 4)]
                at[2 * i + 1] = d[Int(p[i] & 0x0F)]
            }
        }
        storage.count += p.count * 2
    }

    @usableFromInline static let hexDigits: StaticString = "0123456789abcdef"

    /// `.` and the fraction of the second with the timestamp's digits (nothing for 0 digits).
    /// `Timestamp.timeOfDay` (`04:06:21.123456`), written in place: no String is made (the text
    /// format writes one per packet).
    public mutating func appendTimeOfDay(_ t: Timestamp) {
        let secOfDay = Int(((t.seconds % 86_400) + 86_400) % 86_400)
        storage.reserve(8)
        let at = storage.base + storage.count
        // Two digits each from the pairs table (the hour is below 24, minutes and seconds below 60).
        let pairs = ByteSink.digitPairs.utf8Start
        let h = secOfDay / 3600 &* 2, m = secOfDay / 60 % 60 &* 2, s = secOfDay % 60 &* 2
        at[0] = pairs[h]
        at[1] = pairs[h &+ 1]
        at[2] = UInt8(ascii: ":")
        at[3] = pairs[m]
        at[4] = pairs[m &+ 1]
        at[5] = UInt8(ascii: ":")
        at[6] = pairs[s]
        at[7] = pairs[s &+ 1]
        storage.count += 8
        appendFraction(t)
    }

    /// The date and time to the second, `2026-11-22T04:06:21` (with `Z` when `utc`), of seconds
    /// since 1970, written in place: `Timestamp.iso8601Seconds` and `iso8601SecondsUTC` are
    /// these bytes (AMQP timestamps are written per message). False, and nothing written, for a
    /// year outside 0…9999.
    public mutating func appendDateTime(seconds: Int64, utc: Bool) -> Bool {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secOfDay = Int(seconds - days * 86_400)
        let (y, m, d) = Timestamp.civil(fromDays: days)
        guard (0...9999).contains(y) else { return false }
        storage.reserve(20)
        let at = storage.base + storage.count
        let pairs = ByteSink.digitPairs.utf8Start
        func two(_ v: Int, _ i: Int) {
            at[i] = pairs[v &* 2]
            at[i &+ 1] = pairs[v &* 2 &+ 1]
        }
        two(Int(y) / 100, 0)
        two(Int(y) % 100, 2)
        at[4] = UInt8(ascii: "-")
        two(m, 5)
        at[7] = UInt8(ascii: "-")
        two(d, 8)
        at[10] = UInt8(ascii: "T")
        two(secOfDay / 3600, 11)
        at[13] = UInt8(ascii: ":")
        two(secOfDay / 60 % 60, 14)
        at[16] = UInt8(ascii: ":")
        two(secOfDay % 60, 17)
        if utc { at[19] = UInt8(ascii: "Z") }
        storage.count += utc ? 20 : 19
        return true
    }

    /// `Timestamp.iso8601` (`2026-11-22T04:06:21.123456Z`) as a JSON string, quotes included,
    /// written in place: no string made (a connection's JSON record has two).
    public mutating func appendQuotedISO8601(_ t: Timestamp) {
        append(byte: 0x22)
        if appendDateTime(seconds: t.seconds, utc: false) {
            appendFraction(t)
            append(byte: UInt8(ascii: "Z"))
        } else {
            // A year outside 0…9999: the string's own writer.
            append(t.iso8601)
        }
        append(byte: 0x22)
    }

    /// The time as seconds since 1970 with the fraction `appendFraction` writes,
    /// `1795356396.141530`: a JSON number equal to the ISO time written beside it.
    public mutating func appendEpochSeconds(_ t: Timestamp) {
        var scale: UInt32 = 1
        for _ in t.fractionalDigits..<9 { scale &*= 10 }
        // The nanoseconds the fraction shows (its last digits, for a value past a second).
        let within = t.nanoseconds % 1_000_000_000
        let shown = within - within % scale
        guard t.seconds < 0, shown > 0 else {
            append(Int(t.seconds))
            appendFraction(t)
            return
        }
        // Before 1970 the fraction counts towards zero: -2 s and 0.25 s is -1.75.
        append(byte: UInt8(ascii: "-"))
        append(Int(-(t.seconds + 1)))
        appendFraction(Timestamp(seconds: 0, nanoseconds: 1_000_000_000 - shown, fractionalDigits: t.fractionalDigits))
    }

    public mutating func appendFraction(_ t: Timestamp) {
        let digits = t.fractionalDigits
        guard digits > 0 else { return }
        var scale = 1
        for _ in digits..<9 { scale &*= 10 }
        var v = Int(t.nanoseconds) / scale
        storage.reserve(digits + 1)
        let at = storage.base + storage.count
        at[0] = UInt8(ascii: ".")
        // The last `digits` digits, from the right, two at a time.
        let pairs = ByteSink.digitPairs.utf8Start
        var i = digits
        while i >= 2 {
            let pair = v % 100 &* 2
            v /= 100
            at[i - 1] = pairs[pair]
            at[i] = pairs[pair &+ 1]
            i -= 2
        }
        if i == 1 { at[1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10) }
        storage.count += digits + 1
    }

    /// The bytes as text, emptying the sink (its capacity is kept).
    public mutating func take() -> String {
        let s = String(decoding: bytes, as: UTF8.self)
        removeAll()
        return s
    }

    /// Empties the sink; its capacity is kept.
    @inlinable
    public mutating func removeAll() { storage.count = 0 }

    /// Writes up to `maximum` bytes in place, with one capacity check: `body` is given where they
    /// go and returns how many it wrote (records of fixed-width fields, written by stores).
    @inlinable
    public mutating func appendInPlace(maximum: Int, _ body: (UnsafeMutableRawPointer) -> Int) {
        storage.reserve(maximum)
        let written = body(UnsafeMutableRawPointer(storage.base + storage.count))
        precondition(written >= 0 && written <= maximum, "appendInPlace wrote more than it reserved")
        storage.count += written
    }
}
