import Dissection
import Testing
import TestSupport

@Suite("Payload previews")
struct PreviewTests {
    @Test("UTF-8 text: ASCII and multi-byte text are kept, control characters and invalid UTF-8 are not")
    func utf8TextCases() {
        #expect(Preview.utf8Text(ArraySlice("sensors/kitchen/temp".utf8)) == "sensors/kitchen/temp")
        #expect(Preview.utf8Text(ArraySlice("a\tb\r\nc".utf8)) == "a\tb\r\nc")
        #expect(Preview.utf8Text(ArraySlice("température 21 °C ✓".utf8)) == "température 21 °C ✓")
        #expect(Preview.utf8Text([]) == "")
        #expect(Preview.utf8Text([0x61, 0x00, 0x62]) == nil)      // NUL
        #expect(Preview.utf8Text([0x61, 0x7F]) == nil)            // DEL
        #expect(Preview.utf8Text([0x61, 0x1B, 0x5B]) == nil)      // ESC
        #expect(Preview.utf8Text([0x61, 0xFF, 0x62]) == nil)      // never valid in UTF-8
        #expect(Preview.utf8Text([0xC3, 0x28]) == nil)            // a lead byte without its continuation
        #expect(Preview.utf8Text([0xED, 0xA0, 0x80]) == nil)      // an encoded surrogate
        #expect(Preview.utf8Text([0xC0, 0xAF]) == nil)            // an overlong encoding of "/"
        // Valid UTF-8 alone: control characters are allowed, malformed sequences are not.
        #expect(Preview.validUTF8([0x61, 0x00, 0x62]) == "a\0b")
        #expect(Preview.validUTF8(ArraySlice("née".utf8)) == "née")
        #expect(Preview.validUTF8([0x61, 0xFF]) == nil)
        // A sequence cut by the preview limit: dropped only when the caller says the tail was cut.
        let cut: [UInt8] = Array("ab✓".utf8).dropLast()
        #expect(Preview.utf8Text(cut[...]) == nil)
        #expect(Preview.utf8Text(cut[...], allowCutTail: true) == "ab")
    }

    @Test("UTF-8 text and valid UTF-8: the ASCII fast path and the validating path agree with the standard library on random bytes")
    func utf8TextMatchesStandardLibrary() {
        var rng = SplitMix64(seed: 0x5EED_7E47)
        var textCount = 0
        for round in 0..<20_000 {
            let count = Int(rng.next() % 24)
            // Mostly printable ASCII, some rounds with high bytes, a few with control characters.
            let bytes: [UInt8] = (0..<count).map { _ in
                let r = rng.next()
                switch round % 4 {
                case 0, 1: return UInt8(0x20 + r % 0x5F)
                case 2: return r % 5 == 0 ? UInt8(0x80 + r % 0x80) : UInt8(0x20 + r % 0x5F)
                default: return UInt8(truncatingIfNeeded: r)
                }
            }
            let hasControl = bytes.contains { ($0 < 0x20 || $0 == 0x7F) && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
            let expected = hasControl ? nil : String(validating: bytes, as: UTF8.self)
            let got = Preview.utf8Text(bytes[...])
            #expect(got == expected, "bytes \(bytes)")
            #expect(Preview.validUTF8(bytes[...]) == String(validating: bytes, as: UTF8.self), "bytes \(bytes)")
            if got != nil { textCount += 1 }
            if got != expected { break }
        }
        // Both outcomes occurred often enough for the comparison to mean something.
        #expect(textCount > 5_000 && textCount < 19_000)
    }

    @Test("word tests: a control byte or a given byte is found at every position, and only then")
    func byteWords() {
        for position in 0..<8 {
            for value in 0...255 {
                // 'A' everywhere else: neither a control byte nor, unless sought, the byte.
                var bytes = [UInt8](repeating: 0x41, count: 8)
                bytes[position] = UInt8(value)
                let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                #expect(ByteWords.hasControlByte(word) == (value < 0x20), "\(value) at \(position)")
                #expect(ByteWords.has(UInt8(value), in: word))
                #expect(ByteWords.has(0x22, in: word) == (value == 0x22), "\(value) at \(position)")
            }
        }
    }

    /// `fast` must give `naive`'s answer for every byte value at every position of buffers of 0
    /// to 40 bytes (otherwise `a`), and for 50,000 random buffers with several odd bytes at once
    /// (a borrow or carry from one must not hide or fake another).
    static func expectSameAsNaive(_ fast: (UnsafeBufferPointer<UInt8>) -> Bool, _ naive: ([UInt8]) -> Bool, seed: UInt64,
                                  sourceLocation: SourceLocation = #_sourceLocation) {
        var checked = 0
        for count in 0...40 {
            var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: count)
            let allA = bytes.withUnsafeBufferPointer(fast)
            #expect(allA, sourceLocation: sourceLocation)
            for position in 0..<count {
                for value in 0...255 {
                    bytes[position] = UInt8(value)
                    if bytes.withUnsafeBufferPointer(fast) != naive(bytes) {
                        Issue.record("\(value) at \(position) of \(count)", sourceLocation: sourceLocation)
                        return
                    }
                    checked += 1
                }
                bytes[position] = UInt8(ascii: "a")
            }
        }
        #expect(checked == 256 * (0...40).reduce(0, +), sourceLocation: sourceLocation)
        var rng = SplitMix64(seed: seed)
        var accepted = 0
        for _ in 0..<50_000 {
            let count = Int(rng.next() % 70)
            let bytes: [UInt8] = (0..<count).map { _ in
                let r = rng.next()
                return r % 23 == 0 ? UInt8(truncatingIfNeeded: r >> 8) : UInt8(0x20 + (r >> 8) % 0x5F)
            }
            let expected = naive(bytes), got = bytes.withUnsafeBufferPointer(fast)
            #expect(got == expected, "\(bytes)", sourceLocation: sourceLocation)
            if expected { accepted += 1 }
        }
        #expect(accepted > 5_000 && accepted < 45_000, sourceLocation: sourceLocation)
    }

    @Test("plain ASCII: every byte value at every position of buffers of 0 to 40 bytes, and random buffers, as a byte-by-byte test says")
    func plainASCII() {
        Self.expectSameAsNaive(ByteWords.isPlainASCII, { $0.allSatisfy { $0 >= 0x20 && $0 <= 0x7E && $0 != 0x22 && $0 != 0x5C } },
                               seed: 0xA5C1_1234)
    }

    @Test("equal bytes (the recent strings' check): a buffer against a copy with one byte changed, every value at every position of 0 to 40 bytes")
    func equalBytes() {
        var compared = 0
        for count in 0...40 {
            var rng = SplitMix64(seed: UInt64(count) &+ 0xE0_0A1)
            let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            var other = bytes
            #expect(bytes.withUnsafeBufferPointer { a in other.withUnsafeBufferPointer { ByteWords.equal(a, $0) } })
            for position in 0..<count {
                for value in 0...255 {
                    other[position] = UInt8(value)
                    let got = bytes.withUnsafeBufferPointer { a in other.withUnsafeBufferPointer { ByteWords.equal(a, $0) } }
                    #expect(got == (other == bytes), "\(value) at \(position) of \(count)")
                    compared += 1
                }
                other[position] = bytes[position]
            }
            // Different lengths are never equal.
            let longer = bytes + [0]
            #expect(!bytes.withUnsafeBufferPointer { a in longer.withUnsafeBufferPointer { ByteWords.equal(a, $0) } })
        }
        #expect(compared == 256 * (0...40).reduce(0, +))
    }

    @Test("printable ASCII without two bytes (an MQTT topic's check): every byte value at every position of 0 to 40 bytes, and random buffers, as a byte-by-byte test says")
    func printableWithout() {
        let plus = UInt8(ascii: "+"), hash = UInt8(ascii: "#")
        Self.expectSameAsNaive({ ByteWords.isPrintableASCII($0, without: plus, hash) },
                               { $0.allSatisfy { $0 >= 0x20 && $0 <= 0x7E && $0 != plus && $0 != hash } }, seed: 0x70_91C5)
    }
}
