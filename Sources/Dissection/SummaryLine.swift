/// A summary line built as bytes and made a String once: each String append re-checks the
/// string's storage and encoding, which costs more than the few bytes it adds.
public struct SummaryLine {
    private var bytes: [UInt8] = []

    public init(_ head: StaticString, capacity: Int = 80) {
        bytes.reserveCapacity(capacity)
        add(head)
    }

    public mutating func add(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func add(_ s: String) {
        var s = s
        s.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// Decimal digits, made in a stack buffer and appended at once.
    public mutating func add(_ n: Int) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var v = n.magnitude
            var i = 20
            repeat {
                i -= 1
                digits[i] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
            } while v > 0
            if n < 0 {
                i -= 1
                digits[i] = UInt8(ascii: "-")
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[i...]))
        }
    }

    public var text: String { String(decoding: bytes, as: UTF8.self) }
}
