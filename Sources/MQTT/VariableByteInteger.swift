/// MQTT's Variable Byte Integer (MQTT 5.0 §1.5.5, 3.1.1 §2.2.3): 7 bits a byte, low group
/// first, the high bit saying another byte follows; at most 4 bytes (max 268,435,455).
public enum VariableByteInteger {
    /// The largest value 4 bytes carry.
    public static let maximum = 268_435_455

    public enum Decoded: Equatable, Sendable {
        /// `length` bytes were read; `isMinimal` is false for an encoding longer than needed (e.g. `0x80 0x00`).
        case value(Int, length: Int, isMinimal: Bool)
        /// The bytes end while a continuation bit says more follow.
        case needMore
        /// A fourth byte with the continuation bit set: a Malformed Packet.
        case tooLong
    }

    /// Decodes the integer starting at `offset` (relative to `bytes.startIndex`).
    @inline(__always)
    public static func decode(_ bytes: ArraySlice<UInt8>, at offset: Int = 0) -> Decoded {
        bytes.withUnsafeBufferPointer { decode($0, at: offset) }
    }

    /// Decodes the integer starting at `offset` of bytes already in memory (the fast paths and the
    /// framer read a whole packet where it is: no slice to retain and release).
    @inline(__always)
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Decoded {
        var value = 0
        var shift = 0
        var i = offset
        while i < offset + 4 {
            guard i >= 0, i < bytes.count else { return .needMore }
            let b = bytes[i]
            value |= Int(b & 0x7F) << shift
            i += 1
            if b & 0x80 == 0 {
                let length = i - offset
                // A last byte of 0 in a multi-byte encoding adds nothing: the encoding is not minimal.
                return .value(value, length: length, isMinimal: length == 1 || b != 0)
            }
            shift += 7
        }
        return .tooLong
    }

    /// The minimal encoding of `value` (0...maximum); larger values are clamped to `maximum`.
    public static func encode(_ value: Int) -> [UInt8] {
        var v = max(0, min(value, maximum))
        var out: [UInt8] = []
        repeat {
            var b = UInt8(v & 0x7F)
            v >>= 7
            if v > 0 { b |= 0x80 }
            out.append(b)
        } while v > 0
        return out
    }
}
