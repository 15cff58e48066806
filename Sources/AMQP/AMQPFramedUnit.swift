import Dissection

/// What the framer hands over: a protocol header, a frame, or bytes it could not frame.
public enum AMQPFramedUnit: Sendable {
    /// The 8-byte protocol header (AMQP 0-9-1 §4.2.2).
    case protocolHeader(ArraySlice<UInt8>, problems: [Problem])
    /// A frame and the problems around it (`FramedFrame`: a struct, not the case's tuple of two,
    /// which the runtime copied through its generic tuple witnesses whenever the frame was
    /// taken out, once per frame).
    case frame(FramedFrame)
    /// Bytes given up on when the stream ended or went on in another protocol.
    case unframed(count: Int, problems: [Problem])

    /// Problems the framer found around the unit (skipped bytes, gaps, a bad frame-end).
    public var problems: [Problem] {
        switch self {
        case .protocolHeader(_, let p), .unframed(_, let p): return p
        case .frame(let f): return f.problems
        }
    }

    /// A frame and the problems around it.
    public struct FramedFrame: Sendable {
        public var frame: AMQPRawFrame
        public var problems: [Problem]
    }

    /// A frame and the problems around it.
    public static func frame(_ frame: AMQPRawFrame, problems: [Problem]) -> AMQPFramedUnit {
        .frame(FramedFrame(frame: frame, problems: problems))
    }
}
