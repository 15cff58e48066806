/// One PDU's bytes as the framer found them: the held prefix and what became of the rest.
///
/// `wireLength == bytes.count + missingBytes + unheldBytes + unseenBytes`.
public struct MQTTFrame: Sendable, Equatable {
    /// The PDU's first bytes, fixed header included: all of it, unless it was over the hold
    /// limit, had a gap inside, or the stream ended inside it.
    public var bytes: [UInt8]
    /// Fixed header plus remaining length: what the PDU occupies on the wire.
    public var wireLength: Int
    /// Bytes of this PDU lost to capture gaps.
    public var missingBytes: Int
    /// Bytes captured but not kept: beyond the hold limit, or after a gap inside the PDU
    /// (the held bytes are always one contiguous prefix).
    public var unheldBytes: Int
    /// Bytes that never arrived because the stream finished inside the PDU.
    public var unseenBytes: Int

    public init(bytes: [UInt8], wireLength: Int, missingBytes: Int = 0, unheldBytes: Int = 0, unseenBytes: Int = 0) {
        self.bytes = bytes
        self.wireLength = wireLength
        self.missingBytes = missingBytes
        self.unheldBytes = unheldBytes
        self.unseenBytes = unseenBytes
    }

    /// Every byte of the PDU is held.
    public var isComplete: Bool { bytes.count == wireLength }
    /// Part of the PDU was never captured (a gap, or the end of the stream).
    public var isTruncated: Bool { missingBytes > 0 || unseenBytes > 0 }
}
