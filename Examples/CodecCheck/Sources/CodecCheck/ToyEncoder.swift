import MQTT

/// The codec under test: a small MQTT encoder written from the spec, as an app's own client
/// library would have one. It rebuilds a packet's bytes from the typed values proto-dissect
/// decoded; the check compares them with the bytes on the wire.
enum ToyEncoder {
    /// The bytes of `packet`, or nil for a packet type this codec does not encode.
    static func encode(_ packet: MQTTPacket) -> [UInt8]? {
        var body: [UInt8] = []
        switch packet.content {
        case .publish(let p):
            guard let topic = p.topic else { return nil }
            string(topic.value, into: &body)
            if let id = p.packetID { u16(id.value, into: &body) }
            if packet.version == .v5 {
                guard let properties = p.properties, encode(properties, into: &body) else { return nil }
            }
            guard let payload = p.payload, payload.heldCount == payload.length else { return nil }
            body += packet.bytes.dropFirst(payload.start).prefix(payload.length)
        case .publishResponse(let r):
            guard let id = r.packetID else { return nil }
            u16(id.value, into: &body)
            if let reason = r.reasonCode, !reason.isImplied {
                body.append(reason.code.rawValue)
                if let properties = r.properties, !encode(properties, into: &body) { return nil }
            }
        case .subscribe(let s):
            guard let id = s.packetID, let list = s.subscriptions else { return nil }
            u16(id.value, into: &body)
            if packet.version == .v5 {
                guard let properties = s.properties, encode(properties, into: &body) else { return nil }
            }
            for entry in list.entries {
                string(entry.filter.value, into: &body)
                body.append(entry.options.value)
            }
        case .ping:
            break
        case .disconnect(let d):
            if let reason = d.reasonCode, !reason.isImplied {
                body.append(reason.code.rawValue)
                if let properties = d.properties, !encode(properties, into: &body) { return nil }
            }
        default:
            return nil
        }
        return [packet.firstByte] + variableByteInteger(body.count) + body
    }

    /// A 5.0 property list; false for a property this codec does not know.
    private static func encode(_ properties: MQTTProperties, into out: inout [UInt8]) -> Bool {
        var list: [UInt8] = []
        for property in properties.entries {
            list += variableByteInteger(property.id.rawValue)
            switch (property.value, width[property.id.rawValue]) {
            case (.integer(let v), 1?): list.append(UInt8(v))
            case (.integer(let v), 2?): u16(v, into: &list)
            case (.integer(let v), 4?): list += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) }
            case (.integer(let v), 0?): list += variableByteInteger(v)
            case (.string(let s), _): string(s, into: &list)
            case (.binary(let b), _): u16(b.count, into: &list); list += b
            case (.pair(let name, let value), _): string(name.value, into: &list); string(value.value, into: &list)
            default: return false
            }
        }
        out += variableByteInteger(list.count) + list
        return true
    }

    /// Bytes of each integer property (MQTT 5.0 §2.2.2.2); 0: a Variable Byte Integer.
    private static let width: [Int: Int] = [0x01: 1, 0x02: 4, 0x0B: 0, 0x11: 4, 0x13: 2, 0x17: 1, 0x18: 4, 0x19: 1,
                                            0x21: 2, 0x22: 2, 0x23: 2, 0x24: 1, 0x25: 1, 0x27: 4, 0x28: 1, 0x29: 1, 0x2A: 1]

    private static func u16(_ v: Int, into out: inout [UInt8]) { out += [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    private static func string(_ s: String, into out: inout [UInt8]) {
        u16(s.utf8.count, into: &out)
        out += s.utf8
    }

    private static func variableByteInteger(_ value: Int) -> [UInt8] {
        var v = value, out: [UInt8] = []
        repeat {
            var byte = UInt8(v % 128)
            v /= 128
            if v > 0 { byte |= 0x80 }
            out.append(byte)
        } while v > 0
        return out
    }
}
