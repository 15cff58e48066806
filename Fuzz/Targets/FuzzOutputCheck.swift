/// Checks of rendered output that hold for any input, so the views target finds wrong output
/// as well as crashes: a failed check stops the process (libFuzzer saves the input).
public enum FuzzOutputCheck {
    /// `bytes` are valid UTF-8.
    public static func utf8(_ bytes: UnsafeBufferPointer<UInt8>, _ what: StaticString) {
        if String(validating: bytes, as: UTF8.self) == nil {
            fail("\(what) output is not valid UTF-8", bytes)
        }
    }

    /// `bytes` are JSON Lines: each line (ended by a line feed) one well-formed JSON value
    /// (RFC 8259) in valid UTF-8, nothing else on it.
    public static func jsonLines(_ bytes: UnsafeBufferPointer<UInt8>) {
        utf8(bytes, "JSON")
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != 0x0A { end += 1 }
            var parser = JSONSyntax(bytes: UnsafeBufferPointer(rebasing: bytes[start..<end]))
            if let error = parser.lineError() {
                fail("JSON line is not one JSON value: \(error)", UnsafeBufferPointer(rebasing: bytes[start..<end]))
            }
            start = end + 1
        }
    }

    private static func fail(_ message: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Never {
        let shown = String(decoding: bytes.prefix(2000), as: UTF8.self)
        fatalError("\(message)\n\(shown)")
    }
}
