/// TCP sequence arithmetic, safe across the 2^32 wrap-around (RFC 793 §3.3, RFC 1982).
enum SequenceNumber {
    /// Signed distance from `b` to `a`: positive when `a` is after `b`.
    /// Meaningful while the two are less than 2^31 apart.
    @inline(__always)
    static func distance(from b: UInt32, to a: UInt32) -> Int {
        Int(Int32(bitPattern: a &- b))
    }
}
