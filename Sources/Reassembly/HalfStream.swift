/// One direction of a connection: where the next in-order byte is, and what is held out of order.
/// A class: the reassembler reads and updates it where its connection holds it, without copying
/// its arrays on every access.
final class HalfStream {
    struct Pending {
        var sequence: UInt32
        var bytes: ArraySlice<UInt8>
        var missing: Int
        var fin: Bool
    }

    /// Sequence number of the next byte to deliver; nil until the first segment fixes it.
    // The reassembler's, reached through its connection on the one thread that reads packets.
    @exclusivity(unchecked) var nextSequence: UInt32?
    /// Out-of-order segments, sorted by sequence.
    // The reassembler's, on the one thread that reads packets; its mutating calls never reach back here.
    @exclusivity(unchecked) var pending: [Pending] = []
    // The reassembler's, reached through its connection on the one thread that reads packets.
    @exclusivity(unchecked) var bufferedBytes = 0
    /// Capture time since which the first hole has held data back; nil while nothing is held.
    // The reassembler's, reached through its connection on the one thread that reads packets.
    @exclusivity(unchecked) var holeSince: Double?
    /// The highest acknowledgement number the other side has sent for this direction's bytes:
    /// the receiver holds every byte before it, whether or not the capture does.
    // The reassembler's, reached through its connection on the one thread that reads packets.
    @exclusivity(unchecked) var peerAcknowledged: UInt32?
    /// Since when (capture time, and the connection's packet count) this direction has been
    /// waiting for bytes the other side acknowledged but the capture has not shown yet; nil while
    /// it waits for none. `waitingAt` is the next byte when the wait began: moving on restarts it.
    // The reassembler's, reached through its connection on the one thread that reads packets.
    @exclusivity(unchecked) var acknowledgedWaitSince: Double?
    // The reassembler's, reached through its connection on the one thread that reads packets.
    @exclusivity(unchecked) var acknowledgedWaitPackets = 0
    // The reassembler's, reached through its connection on the one thread that reads packets.
    @exclusivity(unchecked) var waitingAt: UInt32 = 0
    /// An acknowledgement whose missing bytes were waited for in vain: bytes up to it are
    /// not waited for again (holes before it become gaps at once, segments of the other side
    /// that acknowledge no further are not held back).
    // The reassembler's, reached through its connection on the one thread that reads packets.
    @exclusivity(unchecked) var waitedUpTo: UInt32?
    /// Recently delivered bytes, to compare retransmissions against.
    // The reassembler's, on the one thread that reads packets; its mutating calls never reach back here.
    @exclusivity(unchecked) var recent = DeliveredWindow()
    // The reassembler's, reached through its connection on the one thread that reads packets.
    @exclusivity(unchecked) var finished = false
}
