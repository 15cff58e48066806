import Dissection

/// One AMQP frame, decoded: the frame as framed (type, channel, its bytes) and its content,
/// typed. A library user reads it from the PDU (`DissectedPDU.packet`, ProtoDissectKit's
/// `CapturedPDU.amqp`) instead of the field tree. Made by the connection dissector with the
/// `.tree` detail, from the values its decoder read: nothing is decoded twice.
public struct AMQPFrame: TypedPacket {
    /// The frame as framed: type, channel, declared size, the held bytes and payload.
    public var raw: AMQPRawFrame
    /// The typed content, by frame type.
    public var content: Content {
        box.content
    }
    /// `content` in a box of its own: a typed method is an indirect enum, and a packet is kept
    /// on its PDU as an existential (see `MQTTPacket`'s box for why a class).
    private let box: ContentBox

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

    public init(raw: AMQPRawFrame, content: Content) {
        self.raw = raw
        self.box = ContentBox(content)
    }

    /// The frame's held bytes, header through frame-end (a prefix when the capture cut it short).
    public var bytes: ArraySlice<UInt8> { raw.bytes }
    public var wireLength: Int { raw.wireLength }
    public var type: AMQPFrameType { raw.type }
    public var channel: UInt16 { raw.channel }

    /// The method, when this is a method frame that was read.
    public var method: AMQPMethod? {
        if case .method(let method) = content { return method }
        return nil
    }

    /// The content header, when this is a content header frame that was read.
    public var contentHeader: AMQPContentHeader? {
        if case .header(let header) = content { return header }
        return nil
    }

    private final class ContentBox: Sendable {
        let content: Content
        init(_ content: Content) { self.content = content }
    }
}
