/// Decodes one connection's two byte streams into PDUs.
///
/// The caller feeds each direction's bytes in order as they arrive (any split), reports
/// bytes the capture lost as gaps, and calls `finish` when the connection ends. PDUs come
/// out through `output` as soon as their last byte is in, so the caller can attribute them
/// to the packet that completed them.
public protocol StreamDissector {
    /// Ordered bytes of one direction.
    mutating func receive(_ bytes: ArraySlice<UInt8>, from direction: Direction, into output: inout [DissectedPDU])
    /// `count` bytes of one direction are missing (a lost segment, a truncated packet, a limit).
    mutating func gap(_ count: Int, in direction: Direction, into output: inout [DissectedPDU])
    /// The direction ended (FIN, RST, idle flush, end of capture): a PDU left incomplete is reported.
    mutating func finish(_ direction: Direction, into output: inout [DissectedPDU])
}

/// What a dissector is told about the connection when it is created.
public struct ConnectionInfo: Sendable {
    /// The capture did not show the connection's start: the first bytes may be inside a PDU.
    public var startedMidStream: Bool
    /// Server port, where known.
    public var serverPort: UInt16

    public init(startedMidStream: Bool, serverPort: UInt16) {
        self.startedMidStream = startedMidStream
        self.serverPort = serverPort
    }
}
