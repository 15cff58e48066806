import Dissection

extension PacketParser {
    /// SUBACK (MQTT 5.0 §3.9, 3.1.1 §3.9): packet id, properties, one code per filter.
    mutating func parseSuback() -> String {
        guard let id = packetIdentifier() else { return type.name }
        let head = "SUBACK id=\(id)"
        if version == .v5 {
            guard properties(.packet(.suback)) != nil else { return head }
        }
        let isV5 = version == .v5
        let (parts, empty) = reasonCodeList(v3Names: { code in
            switch code {
            case 0, 1, 2: return ("Granted QoS \(code)", true)
            case 0x80: return ("Failure", true)
            default: return ("0x\(hexByte(code)) (unknown)", false)
            }
        }, summaryName: { code in
            if code <= 2 { return "granted QoS \(code)" }
            if isV5 { return "\(MQTTReasonCode(rawValue: code).name(in: .suback).lowercased()) (0x\(hexByte(code)))" }
            return code == 0x80 ? "failure (0x80)" : "0x\(hexByte(code)) (unknown)"
        })
        if empty {
            error("empty-suback", "SUBACK carries no return code", spec.ref("3.9.3", "3.9.3"))
        }
        return parts.isEmpty ? head : "\(head) \(parts.joined(separator: ", "))"
    }

    /// UNSUBACK (MQTT 5.0 §3.11, 3.1.1 §3.11): packet id; in 5.0 properties and one code per filter.
    mutating func parseUnsuback() -> String {
        guard let id = packetIdentifier() else { return type.name }
        let head = "UNSUBACK id=\(id)"
        guard version == .v5 else { return head }
        guard properties(.packet(.unsuback)) != nil else { return head }
        let (parts, empty) = reasonCodeList(v3Names: { ("0x\(hexByte($0))", false) }, summaryName: { code in
            code == 0 ? "success" : "\(MQTTReasonCode(rawValue: code).name(in: .unsuback).lowercased()) (0x\(hexByte(code)))"
        })
        if empty {
            error("empty-unsuback", "UNSUBACK carries no reason code", "MQTT 5.0 §3.11.3")
        }
        return parts.isEmpty ? head : "\(head) \(parts.joined(separator: ", "))"
    }

    /// The `reason_codes` list that ends SUBACK and UNSUBACK; returns summary parts and whether it was empty.
    private mutating func reasonCodeList(v3Names: (UInt8) -> (String, Bool), summaryName: (UInt8) -> String) -> ([String], Bool) {
        guard !stopped else { return ([], false) }
        if isAtRegionEnd { return ([], true) }
        var codes: [Field] = []
        var parts: [String] = []
        var total = 0
        let listStart = offset
        while offset < regionEnd, !stopped {
            let start = offset
            guard let code = readUInt8("reason code") else { break }
            let range = start..<offset
            total += 1
            let keep = codes.count < PacketParser.maxListItems
            // Past the kept entries and problems, only count: no names or messages are built.
            if !keep && !canRecordProblem {
                let valid = version == .v5 ? MQTTReasonCode(rawValue: code).isAllowed(in: type) : v3Names(code).1
                if !valid { omittedProblems += 1 }
                continue
            }
            let name: String
            if version == .v5 {
                let reason = MQTTReasonCode(rawValue: code)
                name = reason.name(in: type)
                checkReasonCode(reason, range: range)
            } else {
                let (n, valid) = v3Names(code)
                name = n
                if !valid {
                    // MQTT 3.1.1 §3.9.3 [MQTT-3.9.3-2]: 0x00, 0x01, 0x02 or 0x80.
                    error("invalid-return-code", "SUBACK return code 0x\(hexByte(code)) is reserved", "MQTT 3.1.1 §3.9.3", range: range)
                }
            }
            if keep {
                codes.append(Field("reason_code", "Reason Code", line: "Reason Code: \(name) (0x\(hexByte(code)))", range: range,
                                   children: [Field("code", "Code", .int(Int(code)), range: range, jsonOnly: true),
                                              Field("reason", "Reason", .string(name), range: range, jsonOnly: true)]))
            }
            if parts.count < PacketParser.maxSummaryItems { parts.append(summaryName(code)) }
        }
        appendList("reason_codes", version == .v5 ? "Reason Codes" : "Return Codes", items: codes, total: total,
                   range: listStart..<max(listStart, min(offset, heldEnd)))
        if total > parts.count { parts.append("… (\(total) in all)") }
        return (parts, false)
    }

    /// DISCONNECT (MQTT 5.0 §3.14): in 5.0 an optional reason code (absent: Normal
    /// disconnection) and optional properties; nothing in 3.x.
    mutating func parseDisconnect() -> String {
        guard version == .v5 else { return "DISCONNECT" }
        return reasonAndProperties(defaultName: "")
    }

    /// AUTH (MQTT 5.0 §3.15): optional reason code (absent: Success) and properties.
    mutating func parseAuth() -> String {
        reasonAndProperties(defaultName: " success")
    }

    private mutating func reasonAndProperties(defaultName: String) -> String {
        if isAtRegionEnd {
            fields.append(reasonCodeField(.success, range: nil, implied: true))
            return type.name + defaultName
        }
        let start = offset
        guard let code = readUInt8("reason code") else { return type.name }
        let reason = MQTTReasonCode(rawValue: code)
        fields.append(reasonCodeField(reason, range: start..<offset))
        checkReasonCode(reason, range: start..<offset)
        if !isAtRegionEnd {
            _ = properties(.packet(type))
        }
        return type.name + (code == 0 ? defaultName : reasonSuffix(reason))
    }
}
