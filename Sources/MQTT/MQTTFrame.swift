/// One PDU's bytes as the framer found them: the held prefix and what became of the rest.
///
/// `wireLength == held.count + missingBytes + unheldBytes + unseenBytes`.
public struct MQTTFrame: Sendable, Equatable {
    /// The PDU's first bytes, fixed header included: all of it, unless it was over the hold
    /// limit, had a gap inside, or the stream ended inside it. A slice: a PDU that lies whole in
    /// one segment is a view of the packet's bytes, not a copy (its indices are the packet's).
    public var held: ArraySlice<UInt8>
    /// `held` as an array of its own.
    public var bytes: [UInt8] {
        get { Array(held) }
        set { held = newValue[...] }
    }
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
        self.init(held: bytes[...], wireLength: wireLength, missingBytes: missingBytes, unheldBytes: unheldBytes,
                  unseenBytes: unseenBytes)
    }

    public init(held: ArraySlice<UInt8>, wireLength: Int, missingBytes: Int = 0, unheldBytes: Int = 0, unseenBytes: Int = 0) {
        self.held = held
        self.wireLength = wireLength
        self.missingBytes = missingBytes
        self.unheldBytes = unheldBytes
        self.unseenBytes = unseenBytes
    }

    /// Every byte of the PDU is held.
    public var isComplete: Bool { held.count == wireLength }
    /// Part of the PDU was never captured (a gap, or the end of the stream).
    public var isTruncated: Bool { missingBytes > 0 || unseenBytes > 0 }
}
