/// One direction of a connection: where the next in-order byte is, and what is held out of order.
/// A value, kept inside its connection (`Connection.subscript(side:)`) and updated where it lies:
/// as an object of its own, each connection made three objects, and each use of a half-stream
/// retained and released it (fleet of short connections: about four a packet).
struct HalfStream {
    struct Pending {
        var sequence: UInt32
        var bytes: ArraySlice<UInt8>
        var missing: Int
        var fin: Bool
    }

    /// Sequence number of the next byte to deliver; nil until the first segment fixes it.
    var nextSequence: UInt32?
    /// Out-of-order segments, sorted by sequence.
    var pending: [Pending] = []
    var bufferedBytes = 0
    /// Capture time since which the first hole has held data back; nil while nothing is held.
    var holeSince: Double?
    /// The highest acknowledgement number the other side has sent for this direction's bytes:
    /// the receiver holds every byte before it, whether or not the capture does.
    var peerAcknowledged: UInt32?
    /// Since when (capture time, and the connection's packet count) this direction has been
    /// waiting for bytes the other side acknowledged but the capture has not shown yet; nil while
    /// it waits for none. `waitingAt` is the next byte when the wait began: moving on restarts it.
    var acknowledgedWaitSince: Double?
    var acknowledgedWaitPackets = 0
    var waitingAt: UInt32 = 0
    /// An acknowledgement whose missing bytes were waited for in vain: bytes up to it are
    /// not waited for again (holes before it become gaps at once, segments of the other side
    /// that acknowledge no further are not held back).
    var waitedUpTo: UInt32?
    /// Recently delivered bytes, to compare retransmissions against.
    var recent = DeliveredWindow()
    var finished = false
}
