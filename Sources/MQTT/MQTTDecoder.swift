import Dissection

/// Decodes one framed MQTT control packet into a `DissectedPDU` (the second stage; the
/// framer is the first). Usable alone on bytes a library user holds.
public enum MQTTDecoder {
    /// What the connection dissector needs to know about a decoded packet.
    struct Facts {
        var type: MQTTPacketType?
        /// The version a CONNECT announced (its layout was decoded with it).
        var connectVersion: MQTTVersion?
        /// Topic Alias Maximum of a CONNECT or CONNACK (0 when absent: MQTT 5.0 §3.1.2.11.5, §3.2.2.3.8).
        var topicAliasMaximum: Int?
        var hasErrors = false
    }

    /// Decodes one PDU.
    ///
    /// - Parameters:
    ///   - bytes: the PDU from its first byte: all of it, or a prefix of it.
    ///   - wireLength: the PDU's full length when `bytes` is a prefix; nil to take the length
    ///     from the fixed header (bytes beyond it are then reported).
    ///   - version: the connection's version (a CONNECT is decoded with the version it announces).
    ///   - state: this direction's topic aliases; PUBLISH packets read and update it.
    public static func decode(_ bytes: ArraySlice<UInt8>, wireLength: Int? = nil, version: MQTTVersion,
                              state: inout MQTTDirectionState, options: MQTTOptions = MQTTOptions()) -> DissectedPDU {
        decodePacket(bytes, wireLength: wireLength, version: version, state: &state, options: options).pdu
    }

    /// Decodes one PDU held whole, with no session (topic aliases are not resolved across calls).
    public static func decode(_ bytes: [UInt8], version: MQTTVersion, options: MQTTOptions = MQTTOptions()) -> DissectedPDU {
        var state = MQTTDirectionState()
        return decode(bytes[...], version: version, state: &state, options: options)
    }

    /// Decodes a framer's output, adding what the framer knows of lost bytes.
    public static func decode(_ frame: MQTTFrame, version: MQTTVersion, state: inout MQTTDirectionState,
                              options: MQTTOptions = MQTTOptions()) -> DissectedPDU {
        decodeFrame(frame, version: version, state: &state, options: options).pdu
    }

    /// Every PDU in `bytes`, one direction of a connection from its start. A CONNECT sets the
    /// version; before one, `version` (or a guess) applies. An incomplete last PDU is reported.
    public static func decodeAll(_ bytes: [UInt8], version: MQTTVersion? = nil, direction: Direction = .toServer,
                                 options: MQTTOptions = MQTTOptions()) -> [DissectedPDU] {
        var options = options
        if let version { options.assumedVersion = version }
        var dissector = MQTTConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 1883), options: options)
        var out: [DissectedPDU] = []
        dissector.receive(bytes[...], from: direction, into: &out)
        dissector.finish(direction, into: &out)
        return out
    }

    /// `lineSink`: a buffer for summary lines, reused from packet to packet (a connection's);
    /// without one, each line gets its own.
    static func decodeFrame(_ frame: MQTTFrame, version: MQTTVersion, state: inout MQTTDirectionState,
                            options: MQTTOptions, lineSink: ByteSink? = nil) -> (pdu: DissectedPDU, facts: Facts) {
        var (pdu, facts) = decodePacket(frame.held, wireLength: frame.wireLength, version: version,
                                        state: &state, options: options, lineSink: lineSink)
        // The range of the bytes not held (a frame built by hand may be inconsistent: clamp).
        let heldEnd = min(frame.held.count, max(0, frame.wireLength))
        let lost = heldEnd..<max(heldEnd, frame.wireLength)
        if frame.missingBytes > 0 {
            pdu.problems.append(Problem(.warning, "missing-bytes",
                                        "\(frame.missingBytes) bytes missing from the capture inside this packet",
                                        range: lost))
        }
        if frame.unseenBytes > 0 {
            pdu.problems.append(Problem(.warning, "incomplete",
                                        "The stream ended \(frame.unseenBytes) bytes before the end of this packet",
                                        range: max(heldEnd, frame.wireLength - frame.unseenBytes)..<max(heldEnd, frame.wireLength)))
        }
        if frame.unheldBytes > 0, frame.missingBytes == 0 {
            pdu.problems.append(Problem(.note, "over-hold-limit",
                                        "Only the first \(frame.held.count) of this packet's \(frame.wireLength) bytes were kept (maximum held PDU size); lengths are still exact",
                                        range: lost))
        }
        if frame.isTruncated { pdu.summary += " [truncated]" }
        facts.hasErrors = pdu.problems.contains { $0.severity == .error }
        return (pdu, facts)
    }

    static func decodePacket(_ bytes: ArraySlice<UInt8>, wireLength: Int?, version: MQTTVersion,
                             state: inout MQTTDirectionState, options: MQTTOptions,
                             lineSink: ByteSink? = nil) -> (pdu: DissectedPDU, facts: Facts) {
        var facts = Facts()
        guard let first = bytes.first else {
            let pdu = DissectedPDU(protocolName: "mqtt", summary: "(no bytes)", fields: [],
                                   problems: [Problem(.error, "empty", "No bytes to decode")], wireLength: 0)
            return (pdu, facts)
        }
        let type = MQTTPacketType(rawValue: first >> 4)
        let flags = first & 0x0F
        facts.type = type
        let typeField = fixedHeaderField(first)

        let lengthStart = 1
        let declared: Int
        let bodyStart: Int
        var headerProblems: [Problem] = []
        var nonMinimalLength: Int?
        let spec = Spec(version: version)
        switch VariableByteInteger.decode(bytes, at: 1) {
        case .needMore:
            let held = bytes.count
            let pdu = DissectedPDU(protocolName: "mqtt", summary: "\(type.name) [truncated header]",
                                   fields: [typeField, Field("remaining_length", "Remaining Length", range: lengthStart..<held)],
                                   problems: [Problem(.warning, "incomplete-header",
                                                      "The fixed header ends inside the remaining length", range: 0..<held)],
                                   wireLength: max(held, wireLength ?? 0))
            facts.hasErrors = false
            return (pdu, facts)
        case .tooLong:
            let pdu = DissectedPDU(protocolName: "mqtt", summary: "\(type.name) [malformed remaining length]",
                                   fields: [typeField, Field("remaining_length", "Remaining Length", range: 1..<5)],
                                   problems: [Problem(.error, "remaining-length-too-long",
                                                      "The remaining length has a fifth byte (continuation bit set in the fourth): a Malformed Packet",
                                                      reference: spec.variableByteInteger, range: 1..<5)],
                                   wireLength: min(5, bytes.count))
            facts.hasErrors = true
            return (pdu, facts)
        case .value(let length, let n, let minimal):
            declared = 1 + n + length
            bodyStart = 1 + n
            nonMinimalLength = minimal ? nil : length
        }
        let wire = wireLength ?? declared
        if wireLength == nil, bytes.count > declared {
            headerProblems.append(Problem(.error, "bytes-after-packet",
                                          "\(bytes.count - declared) bytes follow the end of the packet given by its remaining length",
                                          reference: spec.remainingLength, range: declared..<bytes.count))
        }

        // A CONNECT is laid out by the version it announces.
        var packetVersion = version
        if type == .connect, let level = connectLevel(bytes, bodyStart: bodyStart) {
            if let v = MQTTVersion(level: level) { packetVersion = v }
            facts.connectVersion = MQTTVersion(level: level)
        }
        if let length = nonMinimalLength {
            // MQTT 5.0 §1.5.5 [MQTT-1.5.5-1]: the minimum number of bytes; 3.1.1 §2.2.3 defines the
            // same encoding. Cited from the document of the version the packet is decoded with.
            headerProblems.insert(Problem(.error, "non-minimal-remaining-length",
                                          "The remaining length \(length) is encoded in \(bodyStart - 1) bytes, more than needed",
                                          reference: Spec(version: packetVersion).variableByteInteger, range: 1..<bodyStart), at: 0)
        }

        var p = PacketParser(bytes: bytes, wireLength: wire, bodyStart: bodyStart, version: packetVersion,
                             type: type, flags: flags, options: options, lineSink: lineSink)
        p.fields.append(typeField)
        p.fields.append(Field("remaining_length", "Remaining Length", .int(wire - bodyStart), range: lengthStart..<bodyStart))
        p.problems = headerProblems
        p.checkFixedHeaderFlags()

        let summary: String
        switch type {
        case .connect: summary = p.parseConnect(facts: &facts)
        case .connack: summary = p.parseConnack(facts: &facts)
        case .publish: summary = p.parsePublish(state: &state)
        case .puback, .pubrec, .pubrel, .pubcomp: summary = p.parsePublishResponse()
        case .subscribe: summary = p.parseSubscribe()
        case .suback: summary = p.parseSuback()
        case .unsubscribe: summary = p.parseUnsubscribe()
        case .unsuback: summary = p.parseUnsuback()
        case .pingreq, .pingresp: summary = type.name
        case .disconnect: summary = p.parseDisconnect()
        case .auth where packetVersion == .v5: summary = p.parseAuth()
        default: summary = p.parseReserved()
        }
        p.checkLeftover()
        facts.hasErrors = p.problems.contains { $0.severity == .error }
        let pdu = DissectedPDU(protocolName: "mqtt", summary: summary, fields: p.fields, problems: p.reportedProblems, wireLength: wire)
        return (pdu, facts)
    }

    /// The protocol level of a CONNECT, read ahead of decoding.
    static func connectLevel(_ bytes: ArraySlice<UInt8>, bodyStart: Int) -> Int? {
        let s = bytes.startIndex
        guard bytes.count > bodyStart + 1 else { return nil }
        let nameLength = Int(bytes[s + bodyStart]) << 8 | Int(bytes[s + bodyStart + 1])
        let at = bodyStart + 2 + nameLength
        guard at < bytes.count else { return nil }
        return Int(bytes[s + at])
    }

    /// The fixed-header field of every first byte: the type, then DUP/QoS/RETAIN for PUBLISH or
    /// the reserved flags, bit by bit. The same for every packet that starts with that byte, so
    /// made once, bit lines included (whatever `Field.buildsTextLines` says).
    private static let fixedHeaderFields: [Field] = (0...255).map { makeFixedHeaderField(UInt8($0)) }

    static func fixedHeaderField(_ first: UInt8) -> Field { fixedHeaderFields[Int(first)] }

    private static func makeFixedHeaderField(_ first: UInt8) -> Field {
        let type = MQTTPacketType(rawValue: first >> 4)
        let flags = first & 0x0F
        var children: [Field] = []
        if type == .publish {
            let dup = flags & 0x08 != 0
            let qos = Int((flags >> 1) & 0b11)
            let retain = flags & 0x01 != 0
            children = [
                Field("dup", "DUP Flag", .bool(dup), range: 0..<1),
                Field("qos", "QoS Level", .int(qos), range: 0..<1),
                Field("retain", "Retain", .bool(retain), range: 0..<1),
            ]
            children[0].line = BitLine.line(first, mask: 0x08, "DUP Flag: \(BitLine.set(dup))")
            children[1].line = BitLine.line(first, mask: 0x06, "QoS Level: \(BitLine.qosName(qos)) (\(qos))")
            children[2].line = BitLine.line(first, mask: 0x01, "Retain: \(BitLine.set(retain))")
        } else {
            children = [Field("reserved_flags", "Reserved", .int(Int(flags)), range: 0..<1, textOnly: true)]
            children[0].line = BitLine.line(first, mask: 0x0F, "Reserved: 0x\(hexByte(flags))")
        }
        var field = Field("type", "Message Type", .string(type.name), range: 0..<1, children: children)
        field.line = BitLine.line(first, mask: 0xF0, "Message Type: \(type.longName) (\(type.rawValue))")
        return field
    }
}

extension PacketParser {
    /// MQTT 5.0 §2.1.3 / 3.1.1 §2.2.2: the flags of every type but PUBLISH are fixed.
    mutating func checkFixedHeaderFlags() {
        if type == .publish {
            let qos = (flags >> 1) & 0b11
            if qos == 3 {
                // MQTT 5.0 §3.3.1.2: QoS 3 is a Malformed Packet
                error("qos-3", "The QoS bits are 3, which is reserved: a Malformed Packet", spec.ref("3.3.1.2", "3.3.1.2"), range: 0..<1)
            }
            if qos == 0, flags & 0x08 != 0 {
                error("dup-with-qos-0", "The DUP flag is set on a QoS 0 PUBLISH", spec.ref("3.3.1.1", "3.3.1.1"), range: 0..<1)
            }
            return
        }
        guard let required = type.requiredFlags, type != .reserved else { return }
        if flags != required {
            error("reserved-flags",
                  "The fixed header flags of \(type.name) are \(BitLine.pattern(flags, mask: 0x0F).dropFirst(5)); they must be \(BitLine.pattern(required, mask: 0x0F).dropFirst(5))",
                  spec.fixedHeaderFlags, range: 0..<1)
        }
    }

    /// Bytes the packet's content did not account for.
    mutating func checkLeftover() {
        guard !stopped, offset < wireLength else { return }
        let left = wireLength - offset
        let held = slice(offset..<max(offset, heldEnd))
        fields.append(Field("unparsed", "Unparsed bytes", .bytes(preview: Array(held.prefix(64)), length: left),
                            range: offset..<wireLength))
        error("bytes-left-over",
              "\(left) bytes are left over after the \(type.name) content: the remaining length (\(wireLength - bodyStart)) is longer than the content",
              spec.remainingLength, range: offset..<wireLength)
        offset = wireLength
    }

    /// Type 0, or 15 before MQTT 5.0.
    mutating func parseReserved() -> String {
        if type == .auth {
            error("reserved-type", "Packet type 15 (AUTH) is reserved before MQTT 5.0; this connection is MQTT \(version.name)",
                  "MQTT 3.1.1 §2.2.1", range: 0..<1)
        } else {
            error("reserved-type", "Packet type 0 is reserved", spec.ref("2.2.1", "2.1.2"), range: 0..<1)
        }
        let rest = readRest()
        if rest.length > 0 {
            fields.append(Field("body", "Body", .bytes(preview: Array(rest.held.prefix(max(0, options.payloadPreviewBytes))), length: rest.length),
                                range: rest.start..<(rest.start + rest.held.count)))
        }
        return "\(type.name) (type \(type.rawValue), reserved)"
    }
}
