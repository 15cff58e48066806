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
    /// `receive`, making at most `limit` PDUs now; true when the bytes hold more, which
    /// `receiveMore` makes. A segment of thousands of small PDUs (a burst of acknowledgements)
    /// is then dissected and handed on a part at a time: its PDUs are never all alive at once.
    mutating func receive(_ bytes: ArraySlice<UInt8>, from direction: Direction, into output: inout [DissectedPDU], limit: Int) -> Bool
    /// More PDUs from the bytes a limited `receive` was given, at most `limit`; true when there
    /// are more still. Called until false, before anything else is given to the dissector.
    mutating func receiveMore(from direction: Direction, into output: inout [DissectedPDU], limit: Int) -> Bool
}

extension StreamDissector {
    /// Without a limit of its own: every PDU at once.
    public mutating func receive(_ bytes: ArraySlice<UInt8>, from direction: Direction, into output: inout [DissectedPDU], limit: Int) -> Bool {
        receive(bytes, from: direction, into: &output)
        return false
    }

    public mutating func receiveMore(from direction: Direction, into output: inout [DissectedPDU], limit: Int) -> Bool { false }
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
