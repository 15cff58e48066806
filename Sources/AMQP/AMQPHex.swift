import Dissection

/// Upper-case hex for wire values in messages: `0x9F`, `0x003C`.
package enum AMQPHex {
    package static func string(_ value: UInt64, digits: Int) -> String {
        var sink = ByteSink(capacity: 20)
        append(value, digits: digits, into: &sink)
        return sink.take()
    }

    /// `string(value, digits:)`, written into `sink` (no String made).
    package static func append(_ value: UInt64, digits: Int, into sink: inout ByteSink) {
        sink.literal("0x")
        appendDigits(value, digits: digits, into: &sink)
    }

    /// The digits of `append(value, digits:)`, without the `0x`.
    package static func appendDigits(_ value: UInt64, digits: Int, into sink: inout ByteSink) {
        let count = min(max(digits, 1), 16)
        var shift = (count - 1) * 4
        while shift >= 0 {
            let d = UInt8(truncatingIfNeeded: value >> UInt64(shift) & 0xF)
            sink.append(byte: d < 10 ? UInt8(ascii: "0") + d : UInt8(ascii: "A") + d - 10)
            shift -= 4
        }
    }
}
