import Dissection

extension AMQPFrameDecoder {
    /// The methods the fast paths (`PDUDetail.facts` and `.text`) read without a field tree:
    /// the ones a busy connection repeats per message. Others (connection and channel methods,
    /// closes, returns) are rare and carry what summaries show, so they are decoded in full.
    /// A switch, not a set: this is asked for every method frame.
    static func isFrequentMethod(_ id: AMQPMethodID) -> Bool {
        switch id {
        case .basicPublish, .basicDeliver, .basicGetOK, .basicAck, .basicReject, .basicNack: return true
        default: return false
        }
    }

    /// The fast path of `PDUDetail.facts`: a whole, well-ended frame of a frequent kind, read
    /// for its facts and for what the connection state needs (method arguments, a content
    /// header's class and body size), or nil when the frame needs the full decoder. It vouches
    /// only for frames in which the full decoder would find no problem; anything else (a short
    /// or cut frame, a wrong channel, reserved bits, a bad field table, trailing bytes) goes to
    /// the full decoder, which reports it.
    func decodeFacts(_ frame: AMQPRawFrame) -> Decoded? {
        guard frame.isWhole, frame.frameEnd == AMQPSpec.frameEnd else { return nil }
        // Each case makes its `Decoded` whole: a method or header kept in an optional first
        // was copied into it, and both destroyed, per frame.
        var decoded: Decoded
        switch frame.type {
        case .method:
            // AMQP 0-9-1 §4.2.3: content methods are never on channel 0.
            guard frame.channel != 0, let frequent = frequentMethod(frame.payload), let spec = frequent.spec else { return nil }
            decoded = Decoded(pdu: Self.factsPDU(spec.fullName, frame), method: frequent)
        case .header:
            guard frame.channel != 0, let facts = headerFacts(frame.payload) else { return nil }
            decoded = Decoded(pdu: Self.factsPDU("header", frame), header: facts)
        case .body:
            guard frame.channel != 0 else { return nil }
            decoded = Decoded(pdu: Self.factsPDU("body", frame))
        case .heartbeat:
            // AMQP 0-9-1 §4.2.7: channel 0, no payload.
            guard frame.channel == 0, frame.size == 0 else { return nil }
            decoded = Decoded(pdu: Self.factsPDU("heartbeat", frame))
        default:
            return nil
        }
        decoded.pdu.facts!.channel = Int(frame.channel)
        return decoded
    }

    /// A facts fast path's PDU of kind `kind`, its summary the kind.
    private static func factsPDU(_ kind: String, _ frame: AMQPRawFrame) -> DissectedPDU {
        DissectedPDU(protocolName: "amqp", summary: kind, wireLength: frame.wireLength, kind: kind)
    }

    /// A method frame's payload of a frequent method (`isFrequentMethod`) whose arguments the
    /// full decoder would read without a problem (no reserved bits, nothing left over), read
    /// for its values; nil otherwise. Both fast paths take methods through this.
    func frequentMethod(_ payload: ArraySlice<UInt8>) -> AMQPMethodDecoder.Result? {
        var r = ByteReader(payload)
        guard let classID = r.readUInt16(), let methodID = r.readUInt16() else { return nil }
        let id = AMQPMethodID(classID: classID, methodID: methodID)
        guard Self.isFrequentMethod(id), let spec = id.spec else { return nil }
        var args = AMQPArgumentReader(r.readRest(), base: 11, options: options)
        args.values.reserve(spec.arguments.count)
        for arg in spec.arguments {
            guard args.skim(arg) else { return nil }
        }
        args.finishBits()
        guard args.reader.remaining == 0, args.problems.isEmpty else { return nil }
        return AMQPMethodDecoder.Result(id: id, spec: spec, values: args.values)
    }

    /// A content header (AMQP 0-9-1 §4.2.6.1) with weight 0, one property-flags word naming only
    /// defined properties, and properties that fill the payload exactly; its class and body size.
    private func headerFacts(_ payload: ArraySlice<UInt8>) -> AMQPContentHeaderDecoder.Result? {
        var r = ByteReader(payload)
        guard let classID = r.readUInt16(), let weight = r.readUInt16(), weight == 0, let bodySize = r.readUInt64(),
              let flags = r.readUInt16(), flags & 1 == 0, let cls = AMQPSpec.class(id: classID) else { return nil }
        let properties = cls.properties
        // The base first: reading the rest moves the offset to the end.
        let base = 7 + r.offset
        var reader = AMQPArgumentReader(r.readRest(), base: base, options: options)
        // Checked, not kept: the connection takes a header's class and body size only (a
        // table prints no property values), so no value is made per property.
        for bit in 0..<15 where flags >> UInt16(15 - bit) & 1 == 1 {
            guard bit < properties.count, reader.pass(properties[bit]) else { return nil }
        }
        guard reader.reader.remaining == 0, reader.problems.isEmpty else { return nil }
        return AMQPContentHeaderDecoder.Result(classID: classID, bodySize: bodySize)
    }
}
