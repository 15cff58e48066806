import Dissection

/// Turning wire strings and numbers into display text, without Foundation.
package enum AMQPText {
    /// `name (type)`, a field-table entry's text-tree label (one per table entry), written into
    /// a string of the right size: interpolating it grows a buffer part by part.
    package static func typedLabel(_ name: String, _ type: String) -> String {
        var name = name, type = type
        return name.withUTF8 { n in
            type.withUTF8 { t in
                String(unsafeUninitializedCapacity: n.count + t.count + 3) { out in
                    var i = out.initialize(fromContentsOf: n)
                    out[i] = UInt8(ascii: " ")
                    out[i + 1] = UInt8(ascii: "(")
                    i += 2
                    i = out[i...].initialize(fromContentsOf: t)
                    out[i] = UInt8(ascii: ")")
                    return i + 1
                }
            }
        }
    }

    /// A short string as text when it is valid, printable UTF-8, else as escaped bytes.
    package static func shortString(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.withUnsafeBufferPointer { shortString($0) }
    }

    /// `shortString` of bytes where they lie.
    package static func shortString(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        if let text = Preview.utf8Text(bytes) { return text }
        return escaped(bytes)
    }

    /// Printable ASCII as is, anything else as `\0` or `\xNN`.
    package static func escaped<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        // Written as bytes, made a String once (appending to a String per byte, with a hex String
        // made for each escape, cost about 500 instructions a byte).
        var out = ByteSink(capacity: bytes.count + 8)
        for b in bytes {
            switch b {
            case 0: out.literal("\\0")
            case 0x5C: out.literal("\\\\")
            case 0x20..<0x7F: out.append(byte: b)
            default:
                out.literal("\\x")
                AMQPHex.appendDigits(UInt64(b), digits: 2, into: &out)
            }
        }
        return out.take()
    }

    /// `'S'`, or `0x00` for a byte that is not a printable letter.
    package static func typeLetter(_ tag: UInt8) -> String {
        if tag >= 0x21 && tag < 0x7F { return "'\(Character(Unicode.Scalar(tag)))'" }
        return AMQPHex.string(UInt64(tag), digits: 2)
    }

    /// A decimal value (§4.2.5.5): `value` / 10^`scale`, written with `scale` digits after the point.
    package static func decimal(_ value: Int64, scale: Int) -> String {
        let sign = value < 0 ? "-" : ""
        var digits = String(value.magnitude)
        guard scale > 0 else { return sign + digits }
        if digits.count <= scale {
            digits = String(repeating: "0", count: scale - digits.count + 1) + digits
        }
        let point = digits.index(digits.endIndex, offsetBy: -scale)
        return sign + digits[..<point] + "." + digits[point...]
    }

    /// Seconds since 1970 as `2024-01-31T12:00:00Z` (proleptic Gregorian, UTC).
    package static func utcTime(_ seconds: UInt64) -> String {
        // Beyond year 9999 a date says nothing useful.
        guard seconds < 253_402_300_800 else { return "beyond year 9999" }
        return Timestamp(seconds: Int64(seconds), nanoseconds: 0, fractionalDigits: 0).iso8601SecondsUTC
    }

    /// `utcTime` written into `sink` (no string made where the date fits).
    package static func appendUTCTime(_ seconds: UInt64, into sink: inout ByteSink) {
        // Past year 9999 (or a date that does not write): `utcTime`'s words.
        if seconds >= 253_402_300_800 || !sink.appendDateTime(seconds: Int64(seconds), utc: true) {
            sink.append(utcTime(seconds))
        }
    }

    /// `label: 1795818376 (2026-11-27T22:26:16Z)`, a timestamp's text line, written once
    /// (interpolated, it cost about 3,800 instructions a content header: callgrind, bench text).
    /// `number` is the value the line shows (a table entry's is clamped to `Int`), `seconds` the time.
    package static func timestampLine(_ label: String, number: UInt64, seconds: UInt64) -> String {
        var line = ByteSink(capacity: 64)
        line.append(label)
        line.literal(": ")
        if number <= UInt64(Int.max) { line.append(Int(number)) } else { line.append(String(number)) }
        line.literal(" (")
        appendUTCTime(seconds, into: &line)
        line.literal(")")
        return line.take()
    }

    /// A value for a summary line: bare when simple, quoted when empty or spaced, cut when long.
    package static func summaryValue(_ s: String, limit: Int = 60) -> String {
        var v = s
        // Characters are counted only when the bytes could exceed the limit.
        if v.utf8.count > limit, v.count > limit { v = String(v.prefix(limit)) + "..." }
        // One pass over the bytes where they are (iterating the UTF-8 view costs more per byte).
        let quoted = v.isEmpty || v.utf8.withContiguousStorageIfAvailable { p in
            p.contains { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"") }
        } ?? v.utf8.contains { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"") }
        return quoted ? "\"" + v + "\"" : v
    }
}
