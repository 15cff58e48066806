import Dissection

/// What the framer hands over: a protocol header, a frame, or bytes it could not frame.
public enum AMQPFramedUnit: Sendable {
    /// The 8-byte protocol header (AMQP 0-9-1 §4.2.2).
    case protocolHeader(ArraySlice<UInt8>, problems: [Problem])
    case frame(AMQPRawFrame, problems: [Problem])
    /// Bytes given up on when the stream ended or went on in another protocol.
    case unframed(count: Int, problems: [Problem])

    /// Problems the framer found around the unit (skipped bytes, gaps, a bad frame-end).
    public var problems: [Problem] {
        switch self {
        case .protocolHeader(_, let p), .frame(_, let p), .unframed(_, let p): return p
        }
    }
}
