import Dissection

extension PacketParser {
    /// SUBACK (MQTT 5.0 §3.9, 3.1.1 §3.9): packet id, properties, one code per filter.
    mutating func parseSuback() -> MQTTSubscriptionAck {
        var a = MQTTSubscriptionAck()
        guard let id = packetIdentifier() else { return a }
        a.packetID = id
        if version == .v5 {
            guard properties(.packet(.suback), into: &a.properties) != nil else { return a }
        }
        let isV5 = version == .v5
        let empty = reasonCodeList(into: &a.codes) { code in
            if isV5 { return MQTTReasonCode(rawValue: code).isAllowed(in: .suback) }
            // MQTT 3.1.1 §3.9.3 [MQTT-3.9.3-2]: 0x00, 0x01, 0x02 or 0x80.
            return code <= 2 || code == 0x80
        }
        if empty {
            error(.emptySuback, "SUBACK carries no return code", spec.ref("3.9.3", "3.9.3"))
        }
        return a
    }

    /// UNSUBACK (MQTT 5.0 §3.11, 3.1.1 §3.11): packet id; in 5.0 properties and one code per filter.
    mutating func parseUnsuback() -> MQTTSubscriptionAck {
        var a = MQTTSubscriptionAck()
        guard let id = packetIdentifier() else { return a }
        a.packetID = id
        guard version == .v5 else { return a }
        guard properties(.packet(.unsuback), into: &a.properties) != nil else { return a }
        let empty = reasonCodeList(into: &a.codes) { MQTTReasonCode(rawValue: $0).isAllowed(in: .unsuback) }
        if empty {
            error(.emptyUnsuback, "UNSUBACK carries no reason code", "MQTT 5.0 §3.11.3")
        }
        return a
    }

    /// The list of codes that ends SUBACK and UNSUBACK; returns whether it was empty.
    private mutating func reasonCodeList(into list: inout MQTTList<Ranged<UInt8>>?, isValid: (UInt8) -> Bool) -> Bool {
        guard !stopped else { return false }
        if isAtRegionEnd { return true }
        var codes: [Ranged<UInt8>] = []
        let listStart = offset
        while offset < regionEnd, !stopped {
            let start = offset
            guard let code = readUInt8("reason code") else { break }
            let range = start..<offset
            codes.append(Ranged(code, range))
            // Past the problems kept, only count: no messages are built.
            if !canRecordProblem {
                if !isValid(code) { omittedProblems += 1 }
            } else if version == .v5 {
                checkReasonCode(MQTTReasonCode(rawValue: code), range: range)
            } else if !isValid(code) {
                // MQTT 3.1.1 §3.9.3 [MQTT-3.9.3-2]: 0x00, 0x01, 0x02 or 0x80.
                error(.invalidReturnCode, "SUBACK return code 0x\(hexByte(code)) is reserved", "MQTT 3.1.1 §3.9.3", range: range)
            }
        }
        list = MQTTList(entries: codes, range: listStart..<max(listStart, min(offset, heldEnd)))
        return false
    }

    /// DISCONNECT (MQTT 5.0 §3.14): in 5.0 an optional reason code (absent: Normal
    /// disconnection) and optional properties; nothing in 3.x.
    mutating func parseDisconnect() -> MQTTReasonPacket {
        guard version == .v5 else { return MQTTReasonPacket() }
        return reasonAndProperties()
    }

    /// AUTH (MQTT 5.0 §3.15): optional reason code (absent: Success) and properties.
    mutating func parseAuth() -> MQTTReasonPacket {
        reasonAndProperties()
    }

    private mutating func reasonAndProperties() -> MQTTReasonPacket {
        var r = MQTTReasonPacket()
        readReason(into: &r.reasonCode, properties: &r.properties)
        return r
    }

    /// A 5.0 reason code that may be left out (then 0x00 Success, implied) and, after it,
    /// properties that may be left out too: the end of DISCONNECT, AUTH and the acknowledgements.
    mutating func readReason(into reasonCode: inout MQTTReasonCodeValue?, properties: inout MQTTProperties?) {
        if isAtRegionEnd {
            reasonCode = MQTTReasonCodeValue(code: .success, range: nil)
            return
        }
        let start = offset
        guard let code = readUInt8("reason code") else { return }
        let reason = MQTTReasonCode(rawValue: code)
        reasonCode = MQTTReasonCodeValue(code: reason, range: start..<offset)
        checkReasonCode(reason, range: start..<offset)
        if !isAtRegionEnd {
            _ = self.properties(.packet(type), into: &properties)
        }
    }
}
