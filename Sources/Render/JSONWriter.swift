/// Minimal JSON text building, without Foundation.
enum JSON {
    static func escape(_ s: String, into out: inout String) {
        out.append("\"")
        var needsWork = false
        for u in s.utf8 where u < 0x20 || u == 0x22 || u == 0x5C { needsWork = true; break }
        if !needsWork {
            out.append(s)
        } else {
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": out.append("\\\"")
                case "\\": out.append("\\\\")
                case "\n": out.append("\\n")
                case "\r": out.append("\\r")
                case "\t": out.append("\\t")
                default:
                    if scalar.value < 0x20 {
                        let hex = String(scalar.value, radix: 16)
                        out.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
                    } else {
                        out.unicodeScalars.append(scalar)
                    }
                }
            }
        }
        out.append("\"")
    }

    static func string(_ s: String) -> String {
        var out = ""
        escape(s, into: &out)
        return out
    }
}
