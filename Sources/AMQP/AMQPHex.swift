import Dissection

/// Upper-case hex for wire values in messages: `0x9F`, `0x003C`.
enum AMQPHex {
    static func string(_ value: UInt64, digits: Int) -> String {
        let count = min(max(digits, 1), 16)
        var bytes = [UInt8](repeating: 0, count: count + 2)
        bytes[0] = UInt8(ascii: "0")
        bytes[1] = UInt8(ascii: "x")
        var v = value
        for i in stride(from: count + 1, through: 2, by: -1) {
            let d = UInt8(v & 0xF)
            bytes[i] = d < 10 ? UInt8(ascii: "0") + d : UInt8(ascii: "A") + d - 10
            v >>= 4
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The same digits, written into `sink` (no String made).
    static func append(_ value: UInt64, digits: Int, into sink: inout ByteSink) {
        let count = min(max(digits, 1), 16)
        sink.literal("0x")
        var shift = (count - 1) * 4
        while shift >= 0 {
            let d = UInt8(truncatingIfNeeded: value >> UInt64(shift) & 0xF)
            sink.append(byte: d < 10 ? UInt8(ascii: "0") + d : UInt8(ascii: "A") + d - 10)
            shift -= 4
        }
    }
}
