import Dissection
@testable import Render
import Testing
import TestSupport

@Suite("JSON text")
struct JSONTextTests {
    @Test("strings are escaped as JSON requires: quote, backslash, control characters; the rest as it is", arguments: [
        ("plain", #""plain""#), ("", #""""#), ("quote \" and backslash \\", #""quote \" and backslash \\""#),
        ("new\nline\rtab\t", #""new\nline\rtab\t""#), ("\u{01}\u{1F}\u{7F}", "\"\\u0001\\u001f\u{7F}\""),
        ("ünïcødé ✓ 🚀", #""ünïcødé ✓ 🚀""#), ("mixed \"ü\"\n\u{0}end", #""mixed \"ü\"\n\u0000end""#),
    ])
    func escapeBytes(text: String, expected: String) {
        var sink = ByteSink()
        JSONString.escape(text, into: &sink)
        #expect(sink.take() == expected)
    }

    @Test("control characters become \\u escapes, lower-case hex")
    func controlEscapes() {
        var sink = ByteSink()
        JSONString.escape("a\u{01}b\u{1F}", into: &sink)
        #expect(sink.take() == "\"a\\u0001b\\u001f\"")
    }

    @Test("object keys: quoted and followed by a colon, escaped when they need it")
    func keys() {
        var sink = ByteSink()
        JSONString.key("routing_key", into: &sink)
        JSONString.key("", into: &sink)
        JSONString.key("x-\"odd\"\\key\n", into: &sink)
        #expect(sink.take() == #""routing_key":"":"x-\"odd\"\\key\n":"#)
    }

    @Test("a binary value is its hex, quoted, followed by its KEY_encoding pair; a key from the wire is escaped in both")
    func binaryValue() {
        let fields = [Field("payload", "Payload", .bytes(preview: [0x00, 0xAB, 0x7F], length: 3)),
                      Field(FieldKey(dynamic: "x-\"odd\""), "Header", .bytes(preview: [0xFF], length: 1))]
        var sink = ByteSink()
        JSONTree.writeObject(fields, showSecrets: false, into: &sink)
        #expect(sink.take() == #"{"payload":"00ab7f","payload_encoding":"hex","x-\"odd\"":"ff","x-\"odd\"_encoding":"hex"}"#)
    }

    @Test("a key written in the source is taken as plain; a key made at run time is escaped, checked now or when written")
    func keysFromTheSourceAndFromTheWire() {
        let literal: FieldKey = "routing_key"
        #expect(literal.isPlain)
        #expect(!FieldKey(dynamic: "routing_key").isPlain)
        #expect(FieldKey(checking: "routing_key").isPlain)
        #expect(!FieldKey(checking: "a\"b").isPlain)
        #expect(!FieldKey(checking: "tab\there").isPlain)
        let fields = [Field(literal, "Routing key", .string("r")),
                      Field(FieldKey(dynamic: "a\"b"), "Header", .int(1)),
                      Field(FieldKey(checking: "back\\slash"), "Header", .int(2)),
                      Field(FieldKey(checking: "x-match"), "Header", .string("all"))]
        var sink = ByteSink()
        JSONTree.writeObject(fields, showSecrets: false, into: &sink)
        #expect(sink.take() == #"{"routing_key":"r","a\"b":1,"back\\slash":2,"x-match":"all"}"#)
        // Equal fields show the same, however their keys were made.
        #expect(Field(literal, "Routing key") == Field(FieldKey(dynamic: "routing_key"), "Routing key"))
    }

    @Test("the word-at-a-time escape check finds every byte that needs escaping, at every position and length")
    func escapeCheck() {
        var rng = SplitMix64(seed: 0x5C22)
        var flagged = 0
        for round in 0..<20_000 {
            let count = Int(rng.next() % 40)
            // Mostly printable text (clean), with now and then one byte from the whole range.
            var bytes = (0..<count).map { _ in UInt8(0x20 + rng.next() % 0x5F) }.filter { $0 != 0x22 && $0 != 0x5C }
            if round % 2 == 0, !bytes.isEmpty { bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            let naive = !bytes.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
            let fast = bytes.withUnsafeBufferPointer { ByteWords.jsonPlain($0) }
            #expect(fast == naive, "\(bytes)")
            if !naive { flagged += 1 }
        }
        #expect(flagged > 1000)
    }
}
