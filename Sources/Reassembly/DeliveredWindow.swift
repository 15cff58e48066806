/// The bytes one direction delivered most recently, kept as slices of their packets (never
/// copied) so that a retransmission can be compared with what was first seen.
///
/// Bounded by `maxSlices` segments and `maxBytes` bytes; a slice keeps its whole packet alive,
/// so `retainedCost` charges each slice a fixed overhead on top of its bytes.
struct DeliveredWindow {
    static let maxSlices = 16
    static let maxBytes = 64 << 10
    /// What a slice is charged beyond its bytes: the headers and array storage it keeps alive.
    static let sliceOverhead = 128

    struct Slice {
        /// Sequence number just past the slice's last byte.
        var end: UInt32
        var bytes: ArraySlice<UInt8>
    }

    /// Oldest first. At most `maxSlices` long, so dropping the oldest moves a few words.
    private(set) var slices: [Slice] = []
    private(set) var byteCount = 0

    /// Memory charged for the slices held (bytes plus a per-slice overhead).
    var retainedCost: Int { byteCount + slices.count * Self.sliceOverhead }

    /// Appends the newest delivered slice, then drops the oldest ones over the bounds.
    mutating func append(_ bytes: ArraySlice<UInt8>, end: UInt32) {
        if slices.count == Self.maxSlices { dropOldest() }
        slices.append(Slice(end: end, bytes: bytes))
        byteCount += bytes.count
        while slices.count > 1, byteCount - slices[0].bytes.count >= Self.maxBytes { dropOldest() }
    }

    /// Drops all but the newest slice (used when the run-wide budget is spent).
    mutating func keepNewestOnly() {
        while slices.count > 1 { dropOldest() }
    }

    mutating func dropOldest() {
        guard !slices.isEmpty else { return }
        byteCount -= slices.removeFirst().bytes.count
    }

    /// How many bytes of `bytes`, which starts at sequence number `sequence`, differ from the
    /// delivered bytes at the same sequence numbers that the window still holds.
    func differingBytes(_ bytes: ArraySlice<UInt8>, at sequence: UInt32) -> Int {
        guard !bytes.isEmpty else { return 0 }
        var differing = 0
        for slice in slices {
            let start = slice.end &- UInt32(truncatingIfNeeded: slice.bytes.count)
            // Offsets of the overlap within `bytes`, clamped to both ranges.
            let from = max(0, SequenceNumber.distance(from: sequence, to: start))
            let to = min(bytes.count, SequenceNumber.distance(from: sequence, to: slice.end))
            guard from < to else { continue }
            let offsetInSlice = SequenceNumber.distance(from: start, to: sequence &+ UInt32(from))
            var i = bytes.startIndex + from, j = slice.bytes.startIndex + offsetInSlice
            while i < bytes.startIndex + to {
                if bytes[i] != slice.bytes[j] { differing += 1 }
                i += 1; j += 1
            }
        }
        return differing
    }
}
