/// What is wrong, as a short machine code (`reserved-flags`): the `code` of a `Problem`.
///
/// Open: a code is its `rawValue`, so a code this version does not know (one a later version
/// gives, read back from JSON) is kept and printed as it is. Listed: every code this tool gives
/// is a static member below and in `known`, with what it means; docs/json-schema.md explains
/// each for JSON readers, and JSONSchemaTests holds the list, the document and the output to
/// one another. Decoders name codes by their members (`.qos3`), never by a string.
public struct ProblemCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    /// For tests and callers comparing with a code they know by name (`problem.code == "gap"`).
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }
}

// Every code this tool gives, in the order of docs/json-schema.md's table, with where it comes from.
extension ProblemCode {
    /// capture, warning: the capture's link type is not one this tool reads; its packets are skipped (reported once per link type)
    public static let unsupportedLinkType = ProblemCode(rawValue: "unsupported-link-type")
    /// capture, warning: a link, IP or TCP header cut short by the snapshot length
    public static let truncatedHeader = ProblemCode(rawValue: "truncated-header")
    /// capture, warning: an IP or TCP header whose lengths or version cannot be right
    public static let malformedHeader = ProblemCode(rawValue: "malformed-header")
    /// capture, warning: an IP fragment of a TCP packet: fragments are not reassembled
    public static let ipFragment = ProblemCode(rawValue: "ip-fragment")
    /// stream, MQTT, warning: bytes missing from the capture (a lost segment, bytes acknowledged but not captured, a snapshot length, a buffer limit or hole timeout); on an MQTT packet, the gap fell between packets and decoding resynchronised
    public static let gap = ProblemCode(rawValue: "gap")
    /// stream, warning: a retransmission carries bytes that differ from those first seen; the first copy is kept
    public static let overlapConflict = ProblemCode(rawValue: "overlap-conflict")
    /// stream, note: the connection was given up: idle timeout or connection limit
    public static let flushed = ProblemCode(rawValue: "flushed")
    /// MQTT, error: no bytes to decode (library calls only)
    public static let empty = ProblemCode(rawValue: "empty")
    /// MQTT, warning: the fixed header ends inside the remaining length
    public static let incompleteHeader = ProblemCode(rawValue: "incomplete-header")
    /// MQTT, error: the remaining length has a fifth byte
    public static let remainingLengthTooLong = ProblemCode(rawValue: "remaining-length-too-long")
    /// MQTT, error: the remaining length is encoded in more bytes than needed
    public static let nonMinimalRemainingLength = ProblemCode(rawValue: "non-minimal-remaining-length")
    /// MQTT, error: bytes follow the packet's end given by its remaining length (a packet decoded alone)
    public static let bytesAfterPacket = ProblemCode(rawValue: "bytes-after-packet")
    /// MQTT, warning: the capture lost bytes inside this packet
    public static let missingBytes = ProblemCode(rawValue: "missing-bytes")
    /// MQTT, warning: the stream ended before the end of this packet
    public static let incomplete = ProblemCode(rawValue: "incomplete")
    /// MQTT, note: only the first bytes of a packet larger than the hold limit were kept; lengths are still exact
    public static let overHoldLimit = ProblemCode(rawValue: "over-hold-limit")
    /// MQTT, note: a field and what follows are not decoded because the packet's bytes were not all captured or kept
    public static let notHeld = ProblemCode(rawValue: "not-held")
    /// MQTT, warning: bytes skipped to find a packet boundary
    public static let skippedBytes = ProblemCode(rawValue: "skipped-bytes")
    /// MQTT, warning: the stream ended with bytes that make no complete packet
    public static let incompleteAtEnd = ProblemCode(rawValue: "incomplete-at-end")
    /// MQTT, note: a malformed fixed header; decoding resumes at the next plausible packet boundary
    public static let resynchronising = ProblemCode(rawValue: "resynchronising")
    /// MQTT, note: no CONNECT was seen: the version the connection is decoded with was guessed
    public static let versionGuessed = ProblemCode(rawValue: "version-guessed")
    /// MQTT, error: a second CONNECT on one connection
    public static let secondConnect = ProblemCode(rawValue: "second-connect")
    /// MQTT, warning: a CONNECT sent by the server side
    public static let connectFromServer = ProblemCode(rawValue: "connect-from-server")
    /// MQTT, error: packet type 0, or 15 (AUTH) before MQTT 5.0
    public static let reservedType = ProblemCode(rawValue: "reserved-type")
    /// MQTT, error: the fixed-header flags of a type other than PUBLISH are not the required ones
    public static let reservedFlags = ProblemCode(rawValue: "reserved-flags")
    /// MQTT, error: QoS 3 in a PUBLISH or a SUBSCRIBE request
    public static let qos3 = ProblemCode(rawValue: "qos-3")
    /// MQTT, error: DUP set on a QoS 0 PUBLISH
    public static let dupWithQos0 = ProblemCode(rawValue: "dup-with-qos-0")
    /// MQTT, error: the remaining length covers bytes past the packet's content
    public static let bytesLeftOver = ProblemCode(rawValue: "bytes-left-over")
    /// MQTT, error: a field runs past the end given by the remaining length
    public static let remainingLengthShort = ProblemCode(rawValue: "remaining-length-short")
    /// MQTT, error: a property runs past the end of the property length
    public static let propertyLengthShort = ProblemCode(rawValue: "property-length-short")
    /// MQTT, error: a variable byte integer longer than 4 bytes
    public static let malformedVariableByteInteger = ProblemCode(rawValue: "malformed-variable-byte-integer")
    /// MQTT, error: a variable byte integer in more bytes than needed
    public static let nonMinimalVariableByteInteger = ProblemCode(rawValue: "non-minimal-variable-byte-integer")
    /// MQTT, error: a UTF-8 string contains U+0000
    public static let utf8Null = ProblemCode(rawValue: "utf8-null")
    /// MQTT, error: a UTF-8 string is not well-formed
    public static let invalidUtf8 = ProblemCode(rawValue: "invalid-utf8")
    /// MQTT, error: a packet identifier of 0
    public static let zeroPacketId = ProblemCode(rawValue: "zero-packet-id")
    /// MQTT, note: more problems in this packet than are listed
    public static let problemsOmitted = ProblemCode(rawValue: "problems-omitted")
    /// MQTT, warning: CONNECT's protocol name does not go with its level
    public static let protocolNameMismatch = ProblemCode(rawValue: "protocol-name-mismatch")
    /// MQTT, error: CONNECT's protocol name is neither `MQTT` nor `MQIsdp`
    public static let unknownProtocolName = ProblemCode(rawValue: "unknown-protocol-name")
    /// MQTT, error: CONNECT's protocol level is not 3, 4 or 5
    public static let unknownProtocolLevel = ProblemCode(rawValue: "unknown-protocol-level")
    /// MQTT, error: CONNECT's reserved flag is set
    public static let connectReservedFlag = ProblemCode(rawValue: "connect-reserved-flag")
    /// MQTT, error: Will QoS 3
    public static let willQos3 = ProblemCode(rawValue: "will-qos-3")
    /// MQTT, error: Will QoS or Will Retain set without the Will Flag
    public static let willFlags = ProblemCode(rawValue: "will-flags")
    /// MQTT, error: 3.x: the Password Flag without the User Name Flag
    public static let passwordWithoutUsername = ProblemCode(rawValue: "password-without-username")
    /// MQTT, error: 3.1.1: an empty client identifier without Clean Session
    public static let emptyClientId = ProblemCode(rawValue: "empty-client-id")
    /// MQTT, warning: 3.1: a client identifier outside 1–23 characters
    public static let clientIdLength = ProblemCode(rawValue: "client-id-length")
    /// MQTT, error: a topic name (PUBLISH, will) contains `+` or `#`
    public static let wildcardInTopic = ProblemCode(rawValue: "wildcard-in-topic")
    /// MQTT, error: an empty topic name (in 5.0 PUBLISH: without a topic alias)
    public static let emptyTopic = ProblemCode(rawValue: "empty-topic")
    /// MQTT, error: CONNACK's reserved acknowledge flag bits are set
    public static let connackReservedFlags = ProblemCode(rawValue: "connack-reserved-flags")
    /// MQTT, error: a reserved CONNACK return code (3.x)
    public static let unknownReturnCode = ProblemCode(rawValue: "unknown-return-code")
    /// MQTT, error: Session Present on a refused connection
    public static let sessionPresentOnRefusal = ProblemCode(rawValue: "session-present-on-refusal")
    /// MQTT, error: a reason code MQTT 5.0 does not define
    public static let unknownReasonCode = ProblemCode(rawValue: "unknown-reason-code")
    /// MQTT, error: a reason code the packet type may not carry
    public static let reasonCodeNotAllowed = ProblemCode(rawValue: "reason-code-not-allowed")
    /// MQTT, error: a topic alias above the Topic Alias Maximum the receiver announced
    public static let topicAliasOverMaximum = ProblemCode(rawValue: "topic-alias-over-maximum")
    /// MQTT, error: a topic alias with no topic set in this direction
    public static let unknownTopicAlias = ProblemCode(rawValue: "unknown-topic-alias")
    /// MQTT, warning: Payload Format Indicator 1, but the payload is not UTF-8
    public static let payloadNotUtf8 = ProblemCode(rawValue: "payload-not-utf8")
    /// MQTT, error: SUBSCRIBE without a topic filter
    public static let emptySubscribe = ProblemCode(rawValue: "empty-subscribe")
    /// MQTT, error: UNSUBSCRIBE without a topic filter
    public static let emptyUnsubscribe = ProblemCode(rawValue: "empty-unsubscribe")
    /// MQTT, error: an empty topic filter
    public static let emptyTopicFilter = ProblemCode(rawValue: "empty-topic-filter")
    /// MQTT, error: a wildcard out of place in a topic filter
    public static let invalidTopicFilter = ProblemCode(rawValue: "invalid-topic-filter")
    /// MQTT, error: reserved bits of the subscription options are set
    public static let subscribeReservedBits = ProblemCode(rawValue: "subscribe-reserved-bits")
    /// MQTT, error: Retain Handling 3
    public static let retainHandling3 = ProblemCode(rawValue: "retain-handling-3")
    /// MQTT, error: No Local on a shared subscription
    public static let noLocalOnShared = ProblemCode(rawValue: "no-local-on-shared")
    /// MQTT, error: SUBACK without a return code
    public static let emptySuback = ProblemCode(rawValue: "empty-suback")
    /// MQTT, error: 5.0 UNSUBACK without a reason code
    public static let emptyUnsuback = ProblemCode(rawValue: "empty-unsuback")
    /// MQTT, error: 3.1.1 SUBACK return code other than 0, 1, 2 or 0x80
    public static let invalidReturnCode = ProblemCode(rawValue: "invalid-return-code")
    /// MQTT, error: the property length runs past the packet
    public static let propertyLengthTooLong = ProblemCode(rawValue: "property-length-too-long")
    /// MQTT, error: an unknown property identifier; the rest of the properties is skipped
    public static let unknownProperty = ProblemCode(rawValue: "unknown-property")
    /// MQTT, error: a property the packet type may not carry
    public static let propertyNotAllowed = ProblemCode(rawValue: "property-not-allowed")
    /// MQTT, error: a property that may appear once appears again
    public static let propertyRepeated = ProblemCode(rawValue: "property-repeated")
    /// MQTT, error: a property value out of range (a 0-or-1 property above 1, Receive Maximum 0, Maximum Packet Size 0, Subscription Identifier 0)
    public static let propertyValue = ProblemCode(rawValue: "property-value")
    /// MQTT, error: Topic Alias 0
    public static let topicAliasZero = ProblemCode(rawValue: "topic-alias-zero")
    /// AMQP, error: the stream starts with `A` but not with an AMQP protocol header
    public static let badProtocolHeader = ProblemCode(rawValue: "bad-protocol-header")
    /// AMQP, note: a protocol header of another 0-x version; the frames are decoded as 0-9-1
    public static let otherVersion = ProblemCode(rawValue: "other-version")
    /// AMQP, note: an AMQP 1.0 protocol header: that direction is not dissected
    public static let amqp10 = ProblemCode(rawValue: "amqp-1.0")
    /// AMQP, warning: a protocol header of an unknown version
    public static let unknownVersion = ProblemCode(rawValue: "unknown-version")
    /// AMQP, warning: the server answered with its own protocol header: it refuses the client's version
    public static let versionRefused = ProblemCode(rawValue: "version-refused")
    /// AMQP, note: bytes of AMQP 1.0 traffic, not dissected
    public static let notDissected = ProblemCode(rawValue: "not-dissected")
    /// AMQP, warning: the client's stream starts with a frame, not the protocol header
    public static let noProtocolHeader = ProblemCode(rawValue: "no-protocol-header")
    /// AMQP, error: a frame-end octet other than 0xCE; the framer looks for the next frame boundary
    public static let badFrameEnd = ProblemCode(rawValue: "bad-frame-end")
    /// AMQP, error: a frame type 0-9-1 does not define
    public static let unknownFrameType = ProblemCode(rawValue: "unknown-frame-type")
    /// AMQP, warning: bytes skipped to find the next frame boundary
    public static let resyncSkipped = ProblemCode(rawValue: "resync-skipped")
    /// AMQP, warning: bytes at the end of a stream that make no frame
    public static let unframedBytes = ProblemCode(rawValue: "unframed-bytes")
    /// AMQP, warning: the stream ended inside this frame
    public static let truncated = ProblemCode(rawValue: "truncated")
    /// AMQP, warning: the capture lost bytes of this frame, or between frames
    public static let captureGap = ProblemCode(rawValue: "capture-gap")
    /// AMQP, note: a frame larger than the hold limit: only its first bytes were kept
    public static let frameNotHeld = ProblemCode(rawValue: "frame-not-held")
    /// AMQP, warning: a method or header ends early because the rest of the frame was not captured or kept
    public static let notCaptured = ProblemCode(rawValue: "not-captured")
    /// AMQP, error: a whole method frame ends before its arguments do
    public static let methodTruncated = ProblemCode(rawValue: "method-truncated")
    /// AMQP, error: a whole content header ends before its fields do
    public static let headerTruncated = ProblemCode(rawValue: "header-truncated")
    /// AMQP, error: bytes left after a method's last argument, a header's last property, or a frame decoded alone
    public static let trailingBytes = ProblemCode(rawValue: "trailing-bytes")
    /// AMQP, error: a class and method 0-9-1 does not define; its arguments are not decoded
    public static let unknownMethod = ProblemCode(rawValue: "unknown-method")
    /// AMQP, warning: reserved bits set in a method's flags octet
    public static let reservedBits = ProblemCode(rawValue: "reserved-bits")
    /// AMQP, error: a long string, byte array or field array claims more bytes than remain
    public static let lengthPastEnd = ProblemCode(rawValue: "length-past-end")
    /// AMQP, error: a field-table entry runs past the end of its table
    public static let tableTruncated = ProblemCode(rawValue: "table-truncated")
    /// AMQP, error: a field-table entry of a type no 0-9-1 peer defines; the rest of the table is skipped
    public static let unknownFieldType = ProblemCode(rawValue: "unknown-field-type")
    /// AMQP, error: field tables nest deeper than the depth limit; the deeper levels are not decoded
    public static let tableTooDeep = ProblemCode(rawValue: "table-too-deep")
    /// AMQP, error: a connection method off channel 0, another method or content on channel 0
    public static let wrongChannel = ProblemCode(rawValue: "wrong-channel")
    /// AMQP, error: a heartbeat off channel 0
    public static let heartbeatChannel = ProblemCode(rawValue: "heartbeat-channel")
    /// AMQP, error: a heartbeat with a payload
    public static let heartbeatPayload = ProblemCode(rawValue: "heartbeat-payload")
    /// AMQP, warning: a content header's weight is not 0
    public static let weightNotZero = ProblemCode(rawValue: "weight-not-zero")
    /// AMQP, error: property flags continue for more than 4 words
    public static let propertyFlagsRun = ProblemCode(rawValue: "property-flags-run")
    /// AMQP, error: a property flag set for a property the class does not define
    public static let undefinedProperty = ProblemCode(rawValue: "undefined-property")
    /// AMQP, warning: a channel used without a channel.open seen
    public static let channelNotOpen = ProblemCode(rawValue: "channel-not-open")
    /// AMQP, warning: a frame larger than frame-min-size before frame-max was negotiated
    public static let frameMinSizeExceeded = ProblemCode(rawValue: "frame-min-size-exceeded")
    /// AMQP, error: a frame larger than the negotiated frame-max
    public static let frameMaxExceeded = ProblemCode(rawValue: "frame-max-exceeded")
    /// AMQP, error: tune-ok asks for a frame-max above the server's
    public static let frameMaxAboveProposal = ProblemCode(rawValue: "frame-max-above-proposal")
    /// AMQP, error: a frame-max below frame-min-size
    public static let frameMaxTooSmall = ProblemCode(rawValue: "frame-max-too-small")
    /// AMQP, error: a channel above the negotiated channel-max
    public static let channelMaxExceeded = ProblemCode(rawValue: "channel-max-exceeded")
    /// AMQP, error: a method arrived on a channel before the message ahead of it was complete
    public static let messageInterrupted = ProblemCode(rawValue: "message-interrupted")
    /// AMQP, warning: the stream ended before a message was complete
    public static let messageIncomplete = ProblemCode(rawValue: "message-incomplete")
    /// AMQP, error: a content header with no content-bearing method before it, or while body frames are expected
    public static let unexpectedHeader = ProblemCode(rawValue: "unexpected-header")
    /// AMQP, error: a body frame with no message in progress, or before the content header
    public static let unexpectedBody = ProblemCode(rawValue: "unexpected-body")
    /// AMQP, error: a content header of another class than its method's
    public static let headerClassMismatch = ProblemCode(rawValue: "header-class-mismatch")
    /// AMQP, error: body frames carry more bytes than the header's body size
    public static let bodyOverrun = ProblemCode(rawValue: "body-overrun")

    /// Every code above.
    public static let known: [ProblemCode] = [
        .unsupportedLinkType, .truncatedHeader, .malformedHeader, .ipFragment, .gap, .overlapConflict, .flushed,
        .empty, .incompleteHeader, .remainingLengthTooLong, .nonMinimalRemainingLength, .bytesAfterPacket,
        .missingBytes, .incomplete, .overHoldLimit, .notHeld, .skippedBytes, .incompleteAtEnd, .resynchronising,
        .versionGuessed, .secondConnect, .connectFromServer, .reservedType, .reservedFlags, .qos3, .dupWithQos0,
        .bytesLeftOver, .remainingLengthShort, .propertyLengthShort, .malformedVariableByteInteger,
        .nonMinimalVariableByteInteger, .utf8Null, .invalidUtf8, .zeroPacketId, .problemsOmitted,
        .protocolNameMismatch, .unknownProtocolName, .unknownProtocolLevel, .connectReservedFlag, .willQos3,
        .willFlags, .passwordWithoutUsername, .emptyClientId, .clientIdLength, .wildcardInTopic, .emptyTopic,
        .connackReservedFlags, .unknownReturnCode, .sessionPresentOnRefusal, .unknownReasonCode,
        .reasonCodeNotAllowed, .topicAliasOverMaximum, .unknownTopicAlias, .payloadNotUtf8, .emptySubscribe,
        .emptyUnsubscribe, .emptyTopicFilter, .invalidTopicFilter, .subscribeReservedBits, .retainHandling3,
        .noLocalOnShared, .emptySuback, .emptyUnsuback, .invalidReturnCode, .propertyLengthTooLong,
        .unknownProperty, .propertyNotAllowed, .propertyRepeated, .propertyValue, .topicAliasZero,
        .badProtocolHeader, .otherVersion, .amqp10, .unknownVersion, .versionRefused, .notDissected,
        .noProtocolHeader, .badFrameEnd, .unknownFrameType, .resyncSkipped, .unframedBytes, .truncated,
        .captureGap, .frameNotHeld, .notCaptured, .methodTruncated, .headerTruncated, .trailingBytes,
        .unknownMethod, .reservedBits, .lengthPastEnd, .tableTruncated, .unknownFieldType, .tableTooDeep,
        .wrongChannel, .heartbeatChannel, .heartbeatPayload, .weightNotZero, .propertyFlagsRun,
        .undefinedProperty, .channelNotOpen, .frameMinSizeExceeded, .frameMaxExceeded, .frameMaxAboveProposal,
        .frameMaxTooSmall, .channelMaxExceeded, .messageInterrupted, .messageIncomplete, .unexpectedHeader,
        .unexpectedBody, .headerClassMismatch, .bodyOverrun,
    ]
}
