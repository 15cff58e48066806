import Dissection

/// Decodes one framed MQTT control packet into its typed value, an `MQTTPacket` (the second
/// stage; the framer is the first). Usable alone on bytes a library user holds; Render's
/// `MQTTViews` adds the forms that return a `DissectedPDU`.
public enum MQTTDecoder {
    /// Decodes a framer's output into its typed packet, adding what the framer knows of lost bytes.
    public static func decodePacket(_ frame: MQTTFrame, version: MQTTVersion, state: inout MQTTDirectionState) -> MQTTPacket {
        decodeTypedFrame(frame, version: version, state: &state)
    }

    static func decodeTypedFrame(_ frame: MQTTFrame, version: MQTTVersion,
                                 state: inout MQTTDirectionState) -> MQTTPacket {
        var packet = decodeTyped(frame.held, wireLength: frame.wireLength, version: version, state: &state)
        // The range of the bytes not held (a frame built by hand may be inconsistent: clamp).
        let heldEnd = min(frame.held.count, max(0, frame.wireLength))
        let lost = heldEnd..<max(heldEnd, frame.wireLength)
        if frame.missingBytes > 0 {
            packet.problems.append(Problem(.warning, .missingBytes,
                                           "\(frame.missingBytes) bytes missing from the capture inside this packet",
                                           range: lost))
        }
        if frame.unseenBytes > 0 {
            packet.problems.append(Problem(.warning, .incomplete,
                                           "The stream ended \(frame.unseenBytes) bytes before the end of this packet",
                                           range: max(heldEnd, frame.wireLength - frame.unseenBytes)..<max(heldEnd, frame.wireLength)))
        }
        if frame.unheldBytes > 0, frame.missingBytes == 0 {
            packet.problems.append(Problem(.note, .overHoldLimit,
                                           "Only the first \(frame.held.count) of this packet's \(frame.wireLength) bytes were kept (maximum held PDU size); lengths are still exact",
                                           range: lost))
        }
        packet.isTruncated = frame.isTruncated
        return packet
    }

    /// Decodes one packet into its typed value.
    ///
    /// - Parameters:
    ///   - bytes: the packet from its first byte: all of it, or a prefix of it.
    ///   - wireLength: the packet's full length when `bytes` is a prefix; nil to take the length
    ///     from the fixed header (bytes beyond it are then reported).
    ///   - version: the connection's version (a CONNECT is decoded with the version it announces).
    ///   - state: this direction's topic aliases; PUBLISH packets read and update it.
    public static func decodePacket(_ bytes: ArraySlice<UInt8>, wireLength: Int? = nil, version: MQTTVersion,
                                    state: inout MQTTDirectionState) -> MQTTPacket {
        decodeTyped(bytes, wireLength: wireLength, version: version, state: &state)
    }

    static func decodeTyped(_ bytes: ArraySlice<UInt8>, wireLength: Int?, version: MQTTVersion,
                            state: inout MQTTDirectionState) -> MQTTPacket {
        guard let first = bytes.first else {
            let packet = MQTTPacket(bytes: bytes, firstByte: 0, remainingLength: nil, header: .empty, version: version,
                                    wireLength: 0, content: .none, problems: [Problem(.error, .empty, "No bytes to decode")])
            return packet
        }
        let type = MQTTPacketType(rawValue: first >> 4)
        let flags = first & 0x0F

        let declared: Int
        let bodyStart: Int
        var headerProblems: [Problem] = []
        var nonMinimalLength: Int?
        let spec = Spec(version: version)
        switch VariableByteInteger.decode(bytes, at: 1) {
        case .needMore:
            let held = bytes.count
            let packet = MQTTPacket(bytes: bytes, firstByte: first, remainingLength: nil, header: .truncated, version: version,
                                    wireLength: max(held, wireLength ?? 0), content: .none,
                                    problems: [Problem(.warning, .incompleteHeader,
                                                       "The fixed header ends inside the remaining length", range: 0..<held)])
            return packet
        case .tooLong:
            let packet = MQTTPacket(bytes: bytes, firstByte: first, remainingLength: nil, header: .remainingLengthTooLong,
                                    version: version, wireLength: min(5, bytes.count), content: .none,
                                    problems: [Problem(.error, .remainingLengthTooLong,
                                                       "The remaining length has a fifth byte (continuation bit set in the fourth): a Malformed Packet",
                                                       reference: spec.variableByteInteger, range: 1..<5)])
            return packet
        case .value(let length, let n, let minimal):
            declared = 1 + n + length
            bodyStart = 1 + n
            nonMinimalLength = minimal ? nil : length
        }
        let wire = wireLength ?? declared
        if wireLength == nil, bytes.count > declared {
            headerProblems.append(Problem(.error, .bytesAfterPacket,
                                          "\(bytes.count - declared) bytes follow the end of the packet given by its remaining length",
                                          reference: spec.remainingLength, range: declared..<bytes.count))
        }

        // A CONNECT is laid out by the version it announces.
        var packetVersion = version
        var connectVersion: MQTTVersion?
        if type == .connect, let level = connectLevel(bytes, bodyStart: bodyStart) {
            if let v = MQTTVersion(level: level) { packetVersion = v }
            connectVersion = MQTTVersion(level: level)
        }
        if let length = nonMinimalLength {
            // MQTT 5.0 §1.5.5 [MQTT-1.5.5-1]: the minimum number of bytes; 3.1.1 §2.2.3 defines the
            // same encoding. Cited from the document of the version the packet is decoded with.
            headerProblems.insert(Problem(.error, .nonMinimalRemainingLength,
                                          "The remaining length \(length) is encoded in \(bodyStart - 1) bytes, more than needed",
                                          reference: Spec(version: packetVersion).variableByteInteger, range: 1..<bodyStart), at: 0)
        }

        // Parsed inside the bytes' buffer (not empty: its first byte was read), where the parser
        // reads topic names.
        return bytes.withUnsafeBufferPointer { buffer -> MQTTPacket in
            var p = PacketParser(bytes: bytes, wireLength: wire, bodyStart: bodyStart, version: packetVersion,
                                 type: type, flags: flags, address: buffer.baseAddress!)
            p.problems = headerProblems
            p.checkFixedHeaderFlags()

            let content: MQTTPacket.Content
            var flowPacketID: Int?, failureReason: MQTTReasonCode?, receiveMaximum: Int?, noMatching = false
            switch type {
            case .connect:
                let connect = p.parseConnect()
                receiveMaximum = connect.properties?[.receiveMaximum]?.intValue
                content = .connect(connect)
            case .connack:
                let connack = p.parseConnack()
                receiveMaximum = connack.properties?[.receiveMaximum]?.intValue
                content = .connack(connack)
            case .publish:
                let publish = p.parsePublish(state: &state)
                if publish.qos == 1 || publish.qos == 2 { flowPacketID = publish.packetID?.value }
                content = .publish(publish)
            case .puback, .pubrec, .pubrel, .pubcomp:
                let response = p.parsePublishResponse()
                flowPacketID = response.packetID?.value
                if let code = response.reasonCode?.code, code.isFailure { failureReason = code }
                noMatching = response.reasonCode?.code == .noMatchingSubscribers && (type == .puback || type == .pubrec)
                content = .publishResponse(response)
            case .subscribe: content = .subscribe(p.parseSubscribe())
            case .suback: content = .suback(p.parseSuback())
            case .unsubscribe: content = .unsubscribe(p.parseUnsubscribe())
            case .unsuback: content = .unsuback(p.parseUnsuback())
            case .pingreq, .pingresp: content = .ping
            case .disconnect: content = .disconnect(p.parseDisconnect())
            case .auth where packetVersion == .v5: content = .auth(p.parseAuth())
            default: content = .reserved(body: p.parseReserved())
            }
            let unparsed = p.checkLeftover()
            var packet = MQTTPacket(bytes: bytes, firstByte: first, remainingLength: Ranged(wire - bodyStart, 1..<bodyStart),
                                    header: .complete, version: packetVersion, wireLength: wire, content: content,
                                    unparsed: unparsed, problems: p.reportedProblems)
            packet.connectVersion = connectVersion
            packet.topicAliasMaximum = p.topicAliasMaximum
            packet.flowPacketID = flowPacketID
            packet.failureReason = failureReason
            packet.receiveMaximum = receiveMaximum
            packet.noMatchingSubscribers = noMatching
            return packet
        }
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
}

extension PacketParser {
    /// MQTT 5.0 §2.1.3 / 3.1.1 §2.2.2: the flags of every type but PUBLISH are fixed.
    mutating func checkFixedHeaderFlags() {
        if type == .publish {
            let qos = (flags >> 1) & 0b11
            if qos == 3 {
                // MQTT 5.0 §3.3.1.2: QoS 3 is a Malformed Packet
                error(.qos3, "The QoS bits are 3, which is reserved: a Malformed Packet", spec.ref("3.3.1.2", "3.3.1.2"), range: 0..<1)
            }
            if qos == 0, flags & 0x08 != 0 {
                error(.dupWithQos0, "The DUP flag is set on a QoS 0 PUBLISH", spec.ref("3.3.1.1", "3.3.1.1"), range: 0..<1)
            }
            return
        }
        guard let required = type.requiredFlags, type != .reserved else { return }
        if flags != required {
            error(.reservedFlags,
                  "The fixed header flags of \(type.name) are \(fourBits(flags)); they must be \(fourBits(required))",
                  spec.fixedHeaderFlags, range: 0..<1)
        }
    }

    /// Bytes the packet's content did not account for.
    mutating func checkLeftover() -> Range<Int>? {
        guard !stopped, offset < wireLength else { return nil }
        let left = wireLength - offset
        defer { offset = wireLength }
        error(.bytesLeftOver,
              "\(left) bytes are left over after the \(type.name) content: the remaining length (\(wireLength - bodyStart)) is longer than the content",
              spec.remainingLength, range: offset..<wireLength)
        return offset..<wireLength
    }

    /// Type 0, or 15 before MQTT 5.0.
    mutating func parseReserved() -> Range<Int>? {
        if type == .auth {
            error(.reservedType, "Packet type 15 (AUTH) is reserved before MQTT 5.0; this connection is MQTT \(version.name)",
                  "MQTT 3.1.1 §2.2.1", range: 0..<1)
        } else {
            error(.reservedType, "Packet type 0 is reserved", spec.ref("2.2.1", "2.1.2"), range: 0..<1)
        }
        let rest = readRest()
        return rest.length > 0 ? rest.start..<(rest.start + rest.length) : nil
    }
}

/// The low four bits of `byte` as `0`/`1` (`0010`).
private func fourBits(_ byte: UInt8) -> String {
    String((0..<4).reversed().map { byte & (1 << $0) == 0 ? Character("0") : Character("1") })
}
