/// One direction of a connection: where the next in-order byte is, and what is held out of order.
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
    /// Recently delivered bytes, to compare retransmissions against.
    var recent = DeliveredWindow()
    var finished = false
}
