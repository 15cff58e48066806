import Dissection

/// One MQTT control packet, decoded: the fixed header, the typed content of its type, and the
/// problems the decoder found. Every field keeps the byte range it was read from (offsets from
/// the packet's first byte), and `bytes` holds the packet's held bytes, so a caller can show or
/// re-encode any part. Fields the bytes did not reach (a packet cut short) are nil.
///
/// Made by `MQTTDecoder.decodePacket(_:wireLength:version:state:)`; the field tree and
/// summary line that text and JSON show are a view of it (Render's `MQTTViews`).
public struct MQTTPacket: TypedPacket {
    /// The packet's held bytes from its first byte: all of it, or a prefix (a packet cut short
    /// by the capture or over the hold limit).
    public var bytes: ArraySlice<UInt8>
    /// The first byte: type and flags (MQTT 5.0 §2.1.1).
    public var firstByte: UInt8
    @inlinable public var type: MQTTPacketType { MQTTPacketType(rawValue: firstByte >> 4) }
    /// The four flag bits of the first byte.
    @inlinable public var flags: UInt8 { firstByte & 0x0F }
    /// The remaining length and its bytes; nil when the header is cut short or malformed (`header`).
    public var remainingLength: Ranged<Int>?
    public var header: HeaderState
    /// The version the packet was decoded with (a CONNECT's own level, when known).
    public var version: MQTTVersion
    /// Bytes the packet occupies on the wire.
    public var wireLength: Int
    /// The typed content, by packet type.
    public var content: Content {
        // Inlinable: the views, in another module, read it for every packet; called, the getter
        // copied the content out each time (callgrind, the bench capture's first 40,000 packets,
        // JSON: the content's copies 24.0M -> 50.0M instructions once the views moved out).
        @inlinable get { box.content }
        set { box = ContentBox(newValue) }
    }
    /// `content`, in a box of its own: a packet is handed from decoder to session to view, and
    /// one reference is copied for a fraction of the cost of the content's fields inline (a
    /// CONNECT's dozen optionals made every packet as large): callgrind, the bench capture's
    /// first 40,000 packets, table 690M -> 669M instructions, text 2,050M -> 1,938M. A class,
    /// not an `indirect` enum: with the packet stored in a `DissectedPDU` (an existential),
    /// indirect payloads leaked (valgrind and the fuzzers' LeakSanitizer, release build, Swift
    /// 6.3), where the indirect enum had cost less (636M, 1,778M).
    @usableFromInline var box: ContentBox
    /// Bytes the content did not account for (the remaining length is longer than the content).
    public var unparsed: Range<Int>?
    public var problems: [Problem]
    /// Part of the packet was never captured (a gap, or the end of the stream inside it).
    public var isTruncated = false
    /// The version a CONNECT's protocol level announces (read ahead of decoding: it lays the
    /// packet out); nil for other packets and unknown levels.
    public var connectVersion: MQTTVersion?
    /// The Topic Alias Maximum a 5.0 CONNECT or CONNACK announces, 0 when absent (MQTT 5.0
    /// §3.1.2.11.5, §3.2.2.3.8); nil for other packets, and when their properties did not read whole.
    public var topicAliasMaximum: Int?
    /// What the flow analysis reads of every packet, kept beside the content (reading it out of
    /// `content` copied the content per packet): a QoS 1 or 2 PUBLISH's or an acknowledgement's
    /// packet identifier; nil for other packets and when it did not read.
    public var flowPacketID: Int?
    /// A 5.0 PUBACK, PUBREC, PUBREL or PUBCOMP's reason code, when it is a failure (0x80 or more).
    public var failureReason: MQTTReasonCode?
    /// A 5.0 PUBACK or PUBREC with 0x10 No matching subscribers (a success: the message went nowhere).
    public var noMatchingSubscribers = false
    /// The Receive Maximum a 5.0 CONNECT or CONNACK announces (MQTT 5.0 §3.1.2.11.3, §3.2.2.3.3);
    /// nil when absent.
    public var receiveMaximum: Int?

    /// How the fixed header read.
    public enum HeaderState: Sendable, Equatable {
        case complete
        /// No bytes at all.
        case empty
        /// The held bytes end inside the remaining length.
        case truncated
        /// The remaining length has a fifth byte: a Malformed Packet (MQTT 5.0 §1.5.5).
        case remainingLengthTooLong
    }

    /// The content after the fixed header, by packet type.
    public enum Content: Sendable {
        case connect(MQTTConnect)
        case connack(MQTTConnack)
        case publish(MQTTPublish)
        /// PUBACK, PUBREC, PUBREL or PUBCOMP.
        case publishResponse(MQTTPublishResponse)
        case subscribe(MQTTSubscribe)
        case suback(MQTTSubscriptionAck)
        case unsubscribe(MQTTUnsubscribe)
        case unsuback(MQTTSubscriptionAck)
        /// PINGREQ or PINGRESP: nothing after the fixed header.
        case ping
        case disconnect(MQTTReasonPacket)
        case auth(MQTTReasonPacket)
        /// Type 0, or 15 before MQTT 5.0: the body, if any, undecoded.
        case reserved(body: Range<Int>?)
        /// The fixed header did not read (`header`).
        case none
    }

    /// The held bytes within `range` (offsets from the first byte), clamped to what is held.
    public func slice(_ range: Range<Int>) -> ArraySlice<UInt8> {
        let lower = min(max(0, range.lowerBound), bytes.count)
        let upper = min(max(lower, range.upperBound), bytes.count)
        return bytes[(bytes.startIndex + lower)..<(bytes.startIndex + upper)]
    }

    public init(bytes: ArraySlice<UInt8>, firstByte: UInt8, remainingLength: Ranged<Int>?, header: HeaderState,
                version: MQTTVersion, wireLength: Int, content: Content, unparsed: Range<Int>? = nil, problems: [Problem]) {
        self.bytes = bytes
        self.firstByte = firstByte
        self.remainingLength = remainingLength
        self.header = header
        self.version = version
        self.wireLength = wireLength
        self.box = ContentBox(content)
        self.unparsed = unparsed
        self.problems = problems
    }

    @usableFromInline final class ContentBox: Sendable {
        @usableFromInline let content: Content
        @usableFromInline init(_ content: Content) { self.content = content }
    }

    /// Whether the decoder found an error-level problem.
    public var hasErrors: Bool { problems.contains { $0.severity == .error } }

    /// A PUBLISH's topic, payload length, QoS and RETAIN, read where the content is held (`content`
    /// hands out a copy of the whole content: the table asks this of every PUBLISH); nil for other
    /// packets and when the topic or the payload did not read.
    @inlinable public var publishCounts: (topic: String, payloadLength: Int, qos: Int, retain: Bool)? {
        guard case .publish(let p) = box.content, let topic = p.topicName, let payload = p.payload else { return nil }
        return (topic, payload.length, p.qos, p.retain)
    }
}

/// A list read off the wire (topic filters, reason codes): its entries and the bytes it spans.
public struct MQTTList<Entry: Sendable>: Sendable {
    public var entries: [Entry]
    /// The bytes read as the list (up to where reading stopped).
    public var range: Range<Int>
}

/// A 5.0 reason code where one may be left out: `range` is nil when the packet omits it and
/// the code is the one implied (MQTT 5.0 §3.4.2.1, §3.14.2.1, §3.15.2.1).
public struct MQTTReasonCodeValue: Sendable, Equatable {
    public var code: MQTTReasonCode
    public var range: Range<Int>?
    public var isImplied: Bool { range == nil }

    public init(code: MQTTReasonCode, range: Range<Int>?) {
        self.code = code
        self.range = range
    }
}
