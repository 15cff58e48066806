#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
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

    /// A ring of at most `maxSlices` slices: the oldest at `first`, `count` of them. (An array
    /// whose first element was removed moved the others at every segment once full.)
    private var ring: [Slice] = []
    private var first = 0
    private(set) var count = 0
    private(set) var byteCount = 0

    /// Memory charged for the slices held (bytes plus a per-slice overhead).
    var retainedCost: Int { byteCount + count * Self.sliceOverhead }

    /// Appends the newest delivered slice, then drops the oldest ones over the bounds.
    mutating func append(_ bytes: ArraySlice<UInt8>, end: UInt32) {
        if count == Self.maxSlices { dropOldest() }
        // Slots are filled in order, so a slot not yet made is the next one of the array.
        let slot = (first + count) % Self.maxSlices
        if slot == ring.count {
            // Room for half the ring at once: grown by appending, it was made anew at the 1st,
            // 2nd, 3rd, 5th and 9th slice of every connection's direction (a fleet of short
            // connections spent 1.3% of its instructions there); the whole ring reserved cost
            // the fleet 1.6 MB at its peak (1,500 connections at once).
            if ring.isEmpty { ring.reserveCapacity(Self.maxSlices / 2) }
            ring.append(Slice(end: end, bytes: bytes))
        } else {
            ring[slot] = Slice(end: end, bytes: bytes)
        }
        count += 1
        byteCount += bytes.count
        while count > 1, byteCount - ring[first].bytes.count >= Self.maxBytes { dropOldest() }
    }

    /// Drops all but the newest slice (used when the run-wide budget is spent).
    mutating func keepNewestOnly() {
        while count > 1 { dropOldest() }
    }

    mutating func dropOldest() {
        guard count > 0 else { return }
        byteCount -= ring[first].bytes.count
        // Let go of the packet now, not when the slot is reused.
        ring[first].bytes = []
        first = (first + 1) % Self.maxSlices
        count -= 1
    }

    /// How many bytes of `bytes`, which starts at sequence number `sequence`, differ from the
    /// delivered bytes at the same sequence numbers that the window still holds.
    func differingBytes(_ bytes: ArraySlice<UInt8>, at sequence: UInt32) -> Int {
        guard !bytes.isEmpty else { return 0 }
        var differing = 0
        for k in 0..<count {
            let slice = ring[(first + k) % Self.maxSlices]
            let start = slice.end &- UInt32(truncatingIfNeeded: slice.bytes.count)
            // Offsets of the overlap within `bytes`, clamped to both ranges.
            let from = max(0, SequenceNumber.distance(from: sequence, to: start))
            let to = min(bytes.count, SequenceNumber.distance(from: sequence, to: slice.end))
            guard from < to else { continue }
            let offsetInSlice = SequenceNumber.distance(from: start, to: sequence &+ UInt32(from))
            let mine = bytes[(bytes.startIndex + from)..<(bytes.startIndex + to)]
            let delivered = slice.bytes[(slice.bytes.startIndex + offsetInSlice)...].prefix(to - from)
            // A retransmission nearly always repeats the bytes: compared in one go, counted only if not.
            let same = mine.withUnsafeBufferPointer { a in
                delivered.withUnsafeBufferPointer { b in
                    a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
                }
            }
            guard !same else { continue }
            for (x, y) in zip(mine, delivered) where x != y { differing += 1 }
        }
        return differing
    }
}
