import Dissection

/// One AMQP frame as the connection framed it, with its content typed on demand. A library
/// user reads it from the PDU (`DissectedPDU.packet`, ProtoDissectKit's `CapturedPDU.amqp`)
/// instead of the field tree. Made by the connection dissector with the `.tree` detail.
///
/// The typed method and content header are decoded from the frame's bytes when asked for (the
/// decoder the dissector ran, with its options), not kept: a typed method (an indirect enum)
/// kept on the PDU leaked (LeakSanitizer, fuzz-pipeline, release build, Swift 6.3), in a class
/// box or not, as MQTT's indirect content had.
public struct AMQPFrame: TypedPacket {
    /// The frame as framed: type, channel, declared size, the held bytes and payload.
    public var raw: AMQPRawFrame
    /// The options the dissector decoded the frame with.
    public var options: AMQPOptions
    /// What the frame says about the broker's topology and routing, with the analysis on.
    public var broker: AMQPBrokerEvent?

    public enum Content: Sendable {
        /// A method frame: its method with every argument's byte range; nil when the payload
        /// ends before the class and method ids.
        case method(AMQPMethod?)
        /// A content header frame; nil when the payload ends before class, weight and body size.
        case header(AMQPContentHeader?)
        /// A content body frame: its bytes are the raw frame's payload.
        case body
        case heartbeat
        /// A frame of a type AMQP 0-9-1 does not define.
        case other
    }

    public init(raw: AMQPRawFrame, options: AMQPOptions) {
        self.raw = raw
        self.options = options
    }

    /// The frame's held bytes, header through frame-end (a prefix when the capture cut it short).
    public var bytes: ArraySlice<UInt8> { raw.bytes }
    public var wireLength: Int { raw.wireLength }
    public var type: AMQPFrameType { raw.type }
    public var channel: UInt16 { raw.channel }

    /// The typed content, by frame type.
    public var content: Content {
        switch raw.type {
        case .method: return .method(method)
        case .header: return .header(contentHeader)
        case .body: return .body
        case .heartbeat: return .heartbeat
        default: return .other
        }
    }

    /// The method, when this is a method frame that reads as far as its ids.
    public var method: AMQPMethod? {
        guard raw.type == .method else { return nil }
        return AMQPMethodDecoder(options: options).decode(raw.payload, isWhole: raw.isWhole).method
    }

    /// The content header, when this is a content header frame.
    public var contentHeader: AMQPContentHeader? {
        guard raw.type == .header else { return nil }
        return AMQPContentHeaderDecoder(options: options).decode(raw.payload, isWhole: raw.isWhole).header
    }
}
