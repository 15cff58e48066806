import Dissection

/// Upper-case hex for wire values in messages: `0x9F`, `0x003C`.
enum AMQPHex {
    static func string(_ value: UInt64, digits: Int) -> String {
        let hexDigits: [Character] = Array("0123456789ABCDEF")
        var s = ""
        var v = value
        for _ in 0..<max(digits, 1) {
            s.insert(hexDigits[Int(v & 0xF)], at: s.startIndex)
            v >>= 4
        }
        return "0x" + s
    }
}
