/// Text lines in the style of Wireshark's bit-field display: `...0 0... = QoS Level: ...`.
enum BitLine {
    /// The bits of `byte` under `mask` as `0`/`1`, the others as `.`, a space after four.
    static func pattern(_ byte: UInt8, mask: UInt8) -> String {
        var s = ""
        for bit in stride(from: 7, through: 0, by: -1) {
            let m = UInt8(1) << UInt8(bit)
            if mask & m == 0 {
                s.append(".")
            } else {
                s.append(byte & m == 0 ? "0" : "1")
            }
            if bit == 4 { s.append(" ") }
        }
        return s
    }

    static func line(_ byte: UInt8, mask: UInt8, _ text: String) -> String {
        "\(pattern(byte, mask: mask)) = \(text)"
    }

    static func set(_ flag: Bool) -> String { flag ? "Set" : "Not set" }

    /// Wireshark's QoS wording.
    static func qosName(_ qos: Int) -> String {
        switch qos {
        case 0: return "At most once delivery (Fire and Forget)"
        case 1: return "At least once delivery (Acknowledged deliver)"
        case 2: return "Exactly once delivery (Assured Delivery)"
        default: return "Reserved"
        }
    }
}
