import Packets

/// Which way bytes flow in a reassembled connection.
public enum FlowSide: Sendable, Hashable {
    case clientToServer
    case serverToClient

    /// The other direction of the connection.
    var opposite: FlowSide { self == .clientToServer ? .serverToClient : .clientToServer }
}

/// Why a connection ended.
public enum CloseReason: String, Sendable {
    case fin = "closed (FIN both ways)"
    case reset = "reset (RST)"
    case idle = "idle timeout"
    case connectionLimit = "connection limit reached"
    case endOfCapture = "end of capture"
}

/// Why bytes of a stream were skipped.
public enum GapReason: String, Sendable {
    /// A segment never arrived; bytes after the hole were seen.
    case lostSegment = "lost segment"
    /// The other side acknowledged bytes the capture does not have: they reached the receiver
    /// but will never be in the capture, so the data after them is delivered at once.
    case acknowledged = "acknowledged but not captured"
    /// The capture's snapshot length cut the packet.
    case truncatedPacket = "packet truncated by the snapshot length"
    /// Out-of-order data exceeded a buffering limit; the hole was given up.
    case bufferLimit = "buffer limit reached"
    /// Data waited behind a hole for longer than the hole timeout; the hole was given up.
    case holeTimeout = "hole timeout"
}

/// Where a segment was recorded: its record (frame) number and capture time. Kept with a segment
/// held back for the other side's bytes, so that what it completes is attributed to it.
public struct CaptureOrigin: Sendable, Equatable {
    public var frame: Int
    public var seconds: Int64
    public var nanoseconds: UInt32

    public init(frame: Int, seconds: Int64, nanoseconds: UInt32) {
        self.frame = frame
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }
}

/// What reassembly hands on: ordered stream bytes and what happened to the stream.
public enum ReassemblyEvent: Sendable {
    case opened(stream: Int, client: Endpoint, server: Endpoint, midStream: Bool)
    /// In-order bytes; the slice points into the packet that carried them (no copy).
    case data(stream: Int, side: FlowSide, bytes: ArraySlice<UInt8>)
    case gap(stream: Int, side: FlowSide, count: Int, reason: GapReason)
    /// Retransmitted bytes that differ from those already delivered (first copy wins).
    case overlapConflict(stream: Int, side: FlowSide, count: Int)
    /// One direction has delivered its last byte (FIN reached).
    case ended(stream: Int, side: FlowSide)
    case closed(stream: Int, reason: CloseReason)
    /// The stream's events from here on come from a segment recorded earlier, at `origin`, and
    /// held back until now (a capture out of causal order); nil: from the packet at hand again.
    case recordedAt(stream: Int, origin: CaptureOrigin?)
}

extension ReassemblyEvent {
    /// The connection the event is about.
    @inlinable public var stream: Int {
        switch self {
        case .opened(let stream, _, _, _), .data(let stream, _, _), .gap(let stream, _, _, _),
             .overlapConflict(let stream, _, _), .ended(let stream, _), .closed(let stream, _), .recordedAt(let stream, _):
            return stream
        }
    }
}

extension Array where Element == ReassemblyEvent {
    /// Empties the array, keeping its capacity, each event moved out and destroyed by its
    /// type's own code: `removeAll` destroyed them through the runtime's generic witnesses
    /// (about 80 instructions an event, one event or more a packet).
    @inlinable public mutating func removeAllEvents() {
        while popLast() != nil {}
    }
}
