/// TCP header flags. The flags are computed constants, not stored ones: the reassembler, in
/// another module, asks for several per packet, and a stored `static let` of another module is
/// reached through its addressor and a once-check at each use.
public struct TCPFlags: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public static var fin: TCPFlags { TCPFlags(rawValue: 0x01) }
    @inlinable public static var syn: TCPFlags { TCPFlags(rawValue: 0x02) }
    @inlinable public static var rst: TCPFlags { TCPFlags(rawValue: 0x04) }
    @inlinable public static var psh: TCPFlags { TCPFlags(rawValue: 0x08) }
    @inlinable public static var ack: TCPFlags { TCPFlags(rawValue: 0x10) }
}

/// A TCP segment as found in one captured packet: the headers that matter for reassembly
/// and a slice of the captured payload (no copy).
public struct TCPSegment: Sendable {
    public var source: Endpoint
    public var destination: Endpoint
    public var sequence: UInt32
    public var acknowledgement: UInt32
    public var flags: TCPFlags
    /// The payload bytes that were captured.
    public var payload: ArraySlice<UInt8>
    /// Payload bytes the IP header says were sent but the capture did not keep (snapshot length):
    /// they follow `payload` and are a gap, never zeros.
    public var missingPayload: Int

    public init(source: Endpoint, destination: Endpoint, sequence: UInt32, acknowledgement: UInt32,
                flags: TCPFlags, payload: ArraySlice<UInt8>, missingPayload: Int = 0) {
        self.source = source
        self.destination = destination
        self.sequence = sequence
        self.acknowledgement = acknowledgement
        self.flags = flags
        self.payload = payload
        self.missingPayload = missingPayload
    }

    /// Sequence space the segment occupies: payload (captured or not), plus one each for SYN and FIN.
    public var sequenceLength: UInt32 {
        var n = UInt32(truncatingIfNeeded: payload.count + missingPayload)
        if flags.contains(.syn) { n &+= 1 }
        if flags.contains(.fin) { n &+= 1 }
        return n
    }
}
