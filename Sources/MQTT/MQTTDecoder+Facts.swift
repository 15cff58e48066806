import Dissection

extension MQTTDecoder {
    /// The fast path of `PDUDetail.facts`: the facts of a PUBLISH, PUBACK, PUBREC, PUBREL,
    /// PUBCOMP, PINGREQ or PINGRESP, and of a connection's CONNACK (3.x), SUBSCRIBE, SUBACK,
    /// UNSUBSCRIBE, UNSUBACK and DISCONNECT (their kind alone: a fleet of devices sends them once
    /// per connection, thousands a second), read without building a field tree, or nil when the
    /// packet needs the full decoder. It vouches only for packets in which the full decoder finds no
    /// problem and that change no session state, so it checks conservatively and leaves
    /// anything unusual (properties, non-ASCII or empty topics and filters, odd lengths, reason
    /// codes, a frame with bytes not held) to the full decoder, which then reports it. A CONNECT
    /// (its client id and version are facts, and it sets the session's version) and a 5.0
    /// CONNACK (its properties set the Topic Alias Maximum) always take the full decoder.
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
        case .connack:
            guard flags == 0, isPlainConnack(bytes, body: body, length: length, version: version) else { return nil }
        case .subscribe, .unsubscribe:
            guard flags == type.requiredFlags,
                  isPlainSubscription(bytes, body: body, version: version, withOptions: type == .subscribe) else { return nil }
        case .suback, .unsuback:
            guard flags == 0, isPlainSubscriptionAck(bytes, body: body, length: length, type: type, version: version) else { return nil }
        case .disconnect:
            // MQTT 5.0 §3.14.2.1: no reason code means Normal disconnection; 3.x has nothing else.
            guard flags == 0, length == 0 else { return nil }
        default:
            return nil
        }
        return CountedPDU(kind: type.name, wireLength: bytes.count)
    }

    /// Entries at most in a SUBSCRIBE's, UNSUBSCRIBE's or acknowledgement's list that the fast
    /// path takes (a device's are one or a few); longer lists take the full decoder.
    static let maxCountedListEntries = 32

    /// A 3.x CONNACK the full decoder finds nothing wrong with (MQTT 3.1.1 §3.2): two bytes, the
    /// reserved flags clear (3.1: the byte is reserved and unchecked), a return code of 0 to 5,
    /// and no Session Present on a refusal (§3.2.2.2 [MQTT-3.2.2-4]).
    static func isPlainConnack(_ bytes: UnsafeBufferPointer<UInt8>, body: Int, length: Int, version: MQTTVersion) -> Bool {
        guard version != .v5, length == 2 else { return false }
        let flags = bytes[body], code = bytes[body + 1]
        guard code <= 5 else { return false }
        if version == .v3_1 { return true }
        return flags & 0xFE == 0 && (code == 0 || flags & 0x01 == 0)
    }

    /// A SUBSCRIBE or UNSUBSCRIBE the full decoder finds nothing wrong with: a non-zero packet
    /// identifier, in 5.0 no properties, then one to `maxCountedListEntries` topic filters, each
    /// printable ASCII with its wildcards in place (§4.7.1), a SUBSCRIBE's each followed by
    /// options with a QoS below 3 and no reserved bit set (3.x: §3.8.3.1 bits 2-7; 5.0: bits
    /// 6-7, Retain Handling not 3, No Local not on a shared subscription), ending the packet.
    static func isPlainSubscription(_ bytes: UnsafeBufferPointer<UInt8>, body: Int, version: MQTTVersion, withOptions: Bool) -> Bool {
        var at = body
        // MQTT 5.0 §2.2.1: a non-zero packet identifier.
        guard at + 2 <= bytes.count, bytes[at] | bytes[at + 1] != 0 else { return false }
        at += 2
        if version == .v5 {
            guard at < bytes.count, bytes[at] == 0 else { return false }
            at += 1
        }
        var entries = 0
        while at < bytes.count {
            entries += 1
            guard entries <= maxCountedListEntries, at + 2 <= bytes.count else { return false }
            let length = Int(bytes[at]) << 8 | Int(bytes[at + 1])
            let start = at + 2, end = start + length
            guard length > 0, end <= bytes.count else { return false }
            let filter = UnsafeBufferPointer(rebasing: bytes[start..<end])
            // Printable ASCII is well-formed UTF-8 without U+0000 (MQTT 5.0 §1.5.4).
            guard ByteWords.isPrintableASCII(filter, without: 0, 0), PacketParser.misplacedWildcard(inASCII: filter) == nil else {
                return false
            }
            at = end
            guard withOptions else { continue }
            guard at < bytes.count else { return false }
            let options = bytes[at]
            at += 1
            guard options & 0x03 != 3 else { return false }
            if version == .v5 {
                guard options & 0xC0 == 0, (options >> 4) & 0x03 != 3 else { return false }
                if options & 0x04 != 0, filter.starts(with: "$share/".utf8) { return false }
            } else {
                guard options & 0xFC == 0 else { return false }
            }
        }
        return entries > 0
    }

    /// A SUBACK or UNSUBACK the full decoder finds nothing wrong with: a non-zero packet
    /// identifier; a 3.x UNSUBACK nothing more (§3.11); otherwise (in 5.0 after no properties)
    /// one to `maxCountedListEntries` codes, each one the packet type may carry (3.x SUBACK
    /// §3.9.3: 0, 1, 2 or 0x80; 5.0 §2.4).
    static func isPlainSubscriptionAck(_ bytes: UnsafeBufferPointer<UInt8>, body: Int, length: Int, type: MQTTPacketType,
                                       version: MQTTVersion) -> Bool {
        var at = body
        guard at + 2 <= bytes.count, bytes[at] | bytes[at + 1] != 0 else { return false }
        at += 2
        if type == .unsuback, version != .v5 { return length == 2 }
        if version == .v5 {
            guard at < bytes.count, bytes[at] == 0 else { return false }
            at += 1
        }
        let count = bytes.count - at
        guard count > 0, count <= maxCountedListEntries else { return false }
        for code in bytes[at...] {
            if version == .v5 {
                guard MQTTReasonCode(rawValue: code).isAllowed(in: type) else { return false }
            } else {
                guard code <= 2 || code == 0x80 else { return false }
            }
        }
        return true
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
