@testable import FuzzTargets
import Testing

/// The views target's JSON check: it must pass what the JSON renderer writes and stop on
/// anything RFC 8259 rejects, or the fuzzer's findings are noise.
@Suite("JSON syntax check")
struct JSONSyntaxTests {
    static func error(_ line: String) -> String? {
        Array(line.utf8).withUnsafeBufferPointer { bytes in
            var syntax = JSONSyntax(bytes: bytes)
            return syntax.lineError()
        }
    }

    @Test("well-formed values pass", arguments: [
        #"{}"#, #"[]"#, #"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#, #"  {"a" : -0.5e+3 }  "#,
        #""esc \" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00""#, #"0"#, #"-12.25E-2"#, "\"caf\u{e9} \u{1F600}\"",
    ])
    func passes(line: String) {
        #expect(Self.error(line) == nil)
    }

    @Test("malformed values are reported", arguments: [
        #"{"a":1,}"#, #"[1,]"#, #"{"a" 1}"#, #"{a:1}"#, #"{"a":1}{"b":2}"#, #"01"#, #"1."#, #"-"#, #"1e"#,
        #"tru"#, #"nul"#, #""open"#, #""bad \x escape""#, #""\u12G4""#, "\"tab\tinside\"", #"{"a":1"#, #""#, #"NaN"#,
    ])
    func fails(line: String) {
        #expect(Self.error(line) != nil)
    }
}
