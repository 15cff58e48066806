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
    ///
    /// A frequent method's short strings are taken from `strings` when they were seen lately (a
    /// connection repeats its consumer tag, exchange and routing key per message).
    func decodeFacts(_ frame: AMQPRawFrame, strings: inout RecentStrings) -> Decoded? {
        guard frame.isWhole, frame.frameEnd == AMQPSpec.frameEnd else { return nil }
        // Each case makes its `Decoded` whole: a method or header kept in an optional first
        // was copied into it, and both destroyed, per frame.
        var decoded: Decoded
        switch frame.type {
        case .method:
            // AMQP 0-9-1 §4.2.3: content methods are never on channel 0.
            guard frame.channel != 0, let frequent = frequentMethod(frame.payload, strings: &strings), let spec = frequent.spec else { return nil }
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
    /// for its values; nil otherwise. Every fast path takes methods through this: text and JSON
    /// here, the facts path through `frequentMethod(_:strings:)`.
    ///
    /// Read here, not through `AMQPArgumentReader`: the frequent methods have only integers,
    /// bits and short strings, and the reader's state (its problems, a field-table decoder,
    /// bit offsets for ranges) was made, copied and destroyed per frame, about 2,400
    /// instructions a method where the values take a few hundred. A method with a table or a
    /// long string (none of the frequent ones has one) goes to the full decoder.
    func frequentMethod(_ payload: ArraySlice<UInt8>) -> AMQPMethodDecoder.Result? {
        frequentMethod(payload) { AMQPText.shortString($0) }
    }

    /// `frequentMethod(_:)`, its short strings taken from `strings` when they were seen lately.
    func frequentMethod(_ payload: ArraySlice<UInt8>, strings: inout RecentStrings) -> AMQPMethodDecoder.Result? {
        frequentMethod(payload) { bytes in
            bytes.withUnsafeBufferPointer { p in strings.string(p) { _ in AMQPText.shortString(bytes) } }
        }
    }

    /// `frequentMethod(_:)`, each short string's value made by `shortString`.
    @inline(__always)
    private func frequentMethod(_ payload: ArraySlice<UInt8>, shortString: (ArraySlice<UInt8>) -> String) -> AMQPMethodDecoder.Result? {
        var r = ByteReader(payload)
        guard let classID = r.readUInt16(), let methodID = r.readUInt16() else { return nil }
        let id = AMQPMethodID(classID: classID, methodID: methodID)
        guard Self.isFrequentMethod(id), let spec = id.spec else { return nil }
        var values = AMQPArgumentValues()
        values.reserve(spec.arguments.count)
        // AMQP 0-9-1 §4.2.5.2: consecutive bits share an octet, low bit first; the octet's
        // bits past the last bit argument are reserved (a problem, so the full decoder's).
        var octet: UInt8 = 0
        var bitsUsed = 8
        for arg in spec.arguments {
            let value: AMQPArgumentValue
            if arg.type == .bit {
                if bitsUsed == 8 {
                    guard let next = r.readUInt8() else { return nil }
                    octet = next
                    bitsUsed = 0
                }
                value = .bool(octet >> UInt8(bitsUsed) & 1 == 1)
                bitsUsed += 1
            } else {
                if bitsUsed < 8 {
                    guard octet >> UInt8(bitsUsed) == 0 else { return nil }
                    bitsUsed = 8
                }
                // Nil too for a long string or a table (the full decoder's).
                guard let scalar = AMQPArgumentValue.readScalar(arg.type, from: &r, shortString: shortString) else { return nil }
                value = scalar
            }
            values.append(arg, value)
        }
        if bitsUsed < 8, octet >> UInt8(bitsUsed) != 0 { return nil }
        guard r.remaining == 0 else { return nil }
        return AMQPMethodDecoder.Result(id: id, spec: spec, values: values)
    }

    /// A basic.ack, basic.nack or basic.reject payload that `frequentMethod` would read without a
    /// problem (13 bytes: the method, a delivery tag, one octet of bits with its reserved bits
    /// clear), read for what the connection state needs: its delivery tag and `multiple`
    /// (basic.reject has none: false). Nil for any other payload. An acknowledgement's values
    /// are not kept, so none are made.
    static func settlement(_ payload: ArraySlice<UInt8>) -> (id: AMQPMethodID, deliveryTag: Int, multiple: Bool)? {
        guard payload.count == 13 else { return nil }
        let p = payload.startIndex
        guard payload[p] == 0, payload[p + 1] == 60, payload[p + 2] == 0 else { return nil }
        let bits = payload[p + 12]
        let id: AMQPMethodID
        let multiple: Bool
        // AMQP 0-9-1 §4.2.5.2: the bits of an octet past the method's last bit are reserved.
        switch payload[p + 3] {
        case 80: // basic.ack: multiple
            guard bits >> 1 == 0 else { return nil }
            (id, multiple) = (.basicAck, bits & 1 == 1)
        case 120: // basic.nack: multiple, requeue
            guard bits >> 2 == 0 else { return nil }
            (id, multiple) = (.basicNack, bits & 1 == 1)
        case 90: // basic.reject: requeue
            guard bits >> 1 == 0 else { return nil }
            (id, multiple) = (.basicReject, false)
        default:
            return nil
        }
        var tag: UInt64 = 0
        for i in 4..<12 { tag = tag << 8 | UInt64(payload[p + i]) }
        return (id, Int(clamping: tag), multiple)
    }

    /// A content header (AMQP 0-9-1 §4.2.6.1) with weight 0, one property-flags word naming only
    /// defined properties, and properties that fill the payload exactly; its class and body size.
    ///
    /// The properties are checked, not kept: the connection takes a header's class and body
    /// size only (a table prints no property values). Stepped over here, not through
    /// `AMQPArgumentReader` (whose state cost about 900 instructions a header to make and
    /// destroy); a field table is checked as the full decoder would find it. A bit or long
    /// string property (the basic class has none) goes to the full decoder.
    @inline(__always)
    func headerFacts(_ payload: ArraySlice<UInt8>) -> AMQPContentHeaderDecoder.Result? {
        var r = ByteReader(payload)
        guard let classID = r.readUInt16(), let weight = r.readUInt16(), weight == 0, let bodySize = r.readUInt64(),
              let flags = r.readUInt16(), flags & 1 == 0, let properties = AMQPSpec.properties(classID: classID) else { return nil }
        let depthLimit = options.effectiveTableDepth
        // The flags' bits from the highest: bit 15 is the first property (bit 0, the
        // continuation flag, is clear).
        var rest = flags
        while rest != 0 {
            let index = rest.leadingZeroBitCount
            rest &= ~(0x8000 >> UInt16(index))
            guard index < properties.count else { return nil }
            switch properties[index].type {
            case .octet:
                guard r.skip(1) else { return nil }
            case .short:
                guard r.skip(2) else { return nil }
            case .long:
                guard r.skip(4) else { return nil }
            case .longlong, .timestamp:
                guard r.skip(8) else { return nil }
            case .shortstr:
                guard let length = r.readUInt8(), r.skip(Int(length)) else { return nil }
            case .table:
                guard AMQPFieldTableDecoder.checkTable(&r, depthLimit: depthLimit) == true else { return nil }
            case .bit, .longstr:
                return nil
            }
        }
        guard r.remaining == 0 else { return nil }
        return AMQPContentHeaderDecoder.Result(classID: classID, bodySize: bodySize)
    }
}
