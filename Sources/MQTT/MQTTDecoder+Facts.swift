import Dissection

extension MQTTDecoder {
    /// The fast path of `PDUDetail.facts`: the facts of a PUBLISH, PUBACK, PUBREC, PUBREL,
    /// PUBCOMP, PINGREQ or PINGRESP, read without building a field tree, or nil when the packet
    /// needs the full decoder. It vouches only for packets in which the full decoder finds no
    /// problem and that change no session state, so it checks conservatively and leaves
    /// anything unusual (properties, non-ASCII or empty topics, odd lengths, reason codes, a
    /// frame with bytes not held) to the full decoder, which then reports it.
    static func facts(of frame: MQTTFrame, version: MQTTVersion) -> DissectedPDU? {
        var topics = RecentStrings()
        return facts(of: frame, version: version, topics: &topics)
    }

    /// `facts(of:version:)`, a PUBLISH's topic name taken from `topics` when it was seen lately.
    static func facts(of frame: MQTTFrame, version: MQTTVersion, topics: inout RecentStrings) -> DissectedPDU? {
        counted(of: frame, version: version, topics: &topics).map { box($0, of: frame) }
    }

    /// The facts fast path's reading of a frame as the values a table counts, or nil when the
    /// packet needs the full decoder (see `facts(of:version:)`).
    static func counted(of frame: MQTTFrame, version: MQTTVersion, topics: inout RecentStrings) -> CountedPDU? {
        guard frame.isComplete, frame.missingBytes == 0, frame.unseenBytes == 0, frame.unheldBytes == 0,
              frame.held.count >= 2 else { return nil }
        // Read from 0, wherever the frame's slice starts in its packet.
        return frame.held.withUnsafeBufferPointer { bytes in
            // MQTT 5.0 §1.5.5: a minimal remaining length that ends the frame exactly.
            guard case .value(let length, let n, true) = VariableByteInteger.decode(bytes, at: 1),
                  1 + n + length == bytes.count else { return nil }
            return counted(of: bytes, length: length, body: 1 + n, version: version, topics: &topics)
        }
    }

    /// The PDU the facts fast path makes of what it read of `frame` (`counted`): a box with its
    /// facts, as the array form of a dissector's output holds it.
    static func box(_ c: borrowing CountedPDU, of frame: MQTTFrame) -> DissectedPDU {
        let type = MQTTPacketType(rawValue: frame.held[frame.held.startIndex] >> 4)
        guard type == .publish else {
            // The shared facts of its packet type (the fast path takes only types that have nothing else).
            return DissectedPDU(protocolName: "mqtt", summary: c.kind, wireLength: c.wireLength,
                                sharedFacts: kindFacts[Int(type.rawValue & 0x0F)])
        }
        var pdu = DissectedPDU(protocolName: "mqtt", summary: "PUBLISH", wireLength: c.wireLength, kind: "PUBLISH")
        pdu.facts!.setPublish(topic: c.topic!, payloadLength: c.payloadLength!, qos: c.qos!, retained: c.retained)
        return pdu
    }

    /// `bytes`: the whole packet; `length`: its remaining length; `body`: where that begins.
    private static func counted(of bytes: UnsafeBufferPointer<UInt8>, length: Int, body: Int, version: MQTTVersion,
                                topics: inout RecentStrings) -> CountedPDU? {
        let type = MQTTPacketType(rawValue: bytes[0] >> 4)
        let flags = bytes[0] & 0x0F
        switch type {
        case .publish:
            guard let publish = PlainPublish(bytes, body: body, flags: flags, version: version) else { return nil }
            var c = CountedPDU(kind: "PUBLISH", wireLength: bytes.count)
            c.topic = topics.text(UnsafeBufferPointer(rebasing: bytes[publish.topic]))
            c.payloadLength = bytes.count - publish.payloadStart
            c.qos = publish.qos
            c.retained = flags & 0x01 != 0
            return c
        case .puback, .pubrec, .pubrel, .pubcomp:
            guard bareAcknowledgementID(bytes, type: type, flags: flags, length: length, body: body) != nil else { return nil }
        case .pingreq, .pingresp:
            guard flags == 0, length == 0 else { return nil }
        default:
            return nil
        }
        return CountedPDU(kind: type.name, wireLength: bytes.count)
    }

    /// The facts of a packet that has nothing but its kind, by packet type: one shared value each,
    /// not a box made per acknowledgement (a segment can carry thousands, all alive at once).
    private static let kindFacts: [PDUFacts] = (0...15).map { PDUFacts(kind: MQTTPacketType(rawValue: UInt8($0)).name) }

    /// The packet identifier of a bare PUBACK, PUBREC, PUBREL or PUBCOMP, the one form the fast
    /// paths take: MQTT 5.0 §2.1.3 / 3.1.1 §2.2.2 fixed flags; §3.4.2 a non-zero packet
    /// identifier and nothing after it (in 5.0 an absent reason code means Success). Nil otherwise.
    static func bareAcknowledgementID(_ bytes: UnsafeBufferPointer<UInt8>, type: MQTTPacketType, flags: UInt8,
                                      length: Int, body: Int) -> Int? {
        guard flags == type.requiredFlags, length == 2, bytes[body] | bytes[body + 1] != 0 else { return nil }
        return Int(bytes[body]) << 8 | Int(bytes[body + 1])
    }

    /// A PUBLISH the fast paths (facts and text) take, as they read it: QoS 0–2 with the DUP
    /// flag allowed, a printable ASCII topic, a non-zero packet identifier, and in 5.0 no
    /// properties. Anything else goes to the full decoder, which checks and reports it.
    struct PlainPublish {
        let qos: Int
        /// The topic's bytes, as indices of the packet.
        let topic: Range<Int>
        let packetID: Int?
        let payloadStart: Int

        init?(_ bytes: UnsafeBufferPointer<UInt8>, body: Int, flags: UInt8, version: MQTTVersion) {
            let qos = Int((flags >> 1) & 0b11)
            // MQTT 5.0 §3.3.1.2: QoS 3 is malformed; §3.3.1.1: DUP must be 0 for QoS 0.
            guard qos != 3, qos != 0 || flags & 0x08 == 0 else { return nil }
            guard body + 2 <= bytes.count else { return nil }
            let topicLength = Int(bytes[body]) << 8 | Int(bytes[body + 1])
            let topicStart = body + 2
            let topicEnd = topicStart + topicLength
            guard topicLength > 0, topicEnd <= bytes.count else { return nil }
            // Printable ASCII without wildcards is well-formed UTF-8 without U+0000 and a valid Topic
            // Name (MQTT 5.0 §1.5.4, §3.3.2.1); anything else goes to the full decoder's checks.
            guard ByteWords.isPrintableASCII(UnsafeBufferPointer(rebasing: bytes[topicStart..<topicEnd]),
                                             without: UInt8(ascii: "+"), UInt8(ascii: "#")) else { return nil }
            var offset = topicEnd
            var id: Int?
            if qos != 0 {
                // MQTT 5.0 §2.2.1: a non-zero packet identifier.
                guard offset + 2 <= bytes.count, bytes[offset] | bytes[offset + 1] != 0 else { return nil }
                id = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
                offset += 2
            }
            if version == .v5 {
                // Properties (a topic alias, a payload format) need the full decoder; an empty list is one 0 byte.
                guard offset < bytes.count, bytes[offset] == 0 else { return nil }
                offset += 1
            }
            self.qos = qos
            self.topic = topicStart..<topicEnd
            self.packetID = id
            self.payloadStart = offset
        }
    }
}
