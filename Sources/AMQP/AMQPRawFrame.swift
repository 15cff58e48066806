import Dissection

/// One frame as the framer found it (AMQP 0-9-1 §4.2.3): `type channel size payload frame-end`.
///
/// Normally the whole frame is held. A frame larger than `maxHeldFrameBytes`, or one that a
/// capture gap cut, holds its header and a prefix of its payload; the rest is counted.
public struct AMQPRawFrame: Sendable {
    public var type: AMQPFrameType
    public var channel: UInt16
    /// The payload size the header declares.
    public var size: UInt32
    /// The held bytes from the frame's first byte: the 7-byte header, the held payload, and the
    /// frame-end when the frame is held whole. Offsets in it are the PDU's field offsets.
    public var bytes: ArraySlice<UInt8>
    /// The held payload: all of it, or the prefix before a limit or a gap.
    public var payload: ArraySlice<UInt8>
    /// The frame-end octet, nil when the capture lost it.
    public var frameEnd: UInt8?
    /// Payload bytes that arrived but were not held (past `maxHeldFrameBytes`, or after a gap).
    public var payloadNotHeld: Int
    /// Payload bytes the capture lost.
    public var payloadLost: Int

    /// Bytes the frame occupies on the wire.
    public var wireLength: Int { 8 + Int(size) }
    /// Whether all of the payload is held.
    public var isWhole: Bool { payload.count == Int(size) }
}
