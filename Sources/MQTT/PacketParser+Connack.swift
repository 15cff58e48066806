import Dissection

extension PacketParser {
    /// CONNACK (MQTT 5.0 §3.2, 3.1.1 §3.2, 3.1 §3.2).
    mutating func parseConnack(facts: inout MQTTDecoder.Facts) -> String {
        var summary = "CONNACK"
        let flagsStart = offset
        guard let f = readUInt8("acknowledge flags") else { return summary }
        let flagsRange = flagsStart..<offset
        var sessionPresent = false
        if version == .v3_1 {
            // MQTT 3.1: the first byte is reserved (once "topic name compression").
            fields.append(Field("reserved", "Reserved", .int(Int(f)), range: flagsRange, textOnly: true))
        } else {
            sessionPresent = f & 0x01 != 0
            fields.append(Field("acknowledge_flags", "Acknowledge Flags", .int(Int(f)), line: "Acknowledge Flags: 0x\(hexByte(f))",
                                range: flagsRange, children: [
                                    Field("reserved", "Reserved", .int(Int(f >> 1)),
                                          line: BitLine.line(f, mask: 0xFE, "Reserved: \(f >> 1 == 0 ? "Not set" : "0x\(hexByte(f >> 1))")"),
                                          range: flagsRange, textOnly: true),
                                    Field("session_present", "Session Present", .bool(sessionPresent),
                                          line: BitLine.line(f, mask: 0x01, "Session Present: \(BitLine.set(sessionPresent))"), range: flagsRange),
                                ]))
            if f & 0xFE != 0 {
                error("connack-reserved-flags", "Reserved bits of the acknowledge flags are set", spec.ref("3.2.2.1", "3.2.2.1"), range: flagsRange)
            }
        }
        let codeStart = offset
        let codeName = version == .v5 ? "reason code" : "return code"
        guard let code = readUInt8(codeName) else { return summary }
        let codeRange = codeStart..<offset
        var refused = false
        if version == .v5 {
            let reason = MQTTReasonCode(rawValue: code)
            fields.append(reasonCodeField(reason, range: codeRange))
            checkReasonCode(reason, range: codeRange)
            refused = code != 0
            let named = "\(reason.name(in: .connack).lowercased()) (0x\(hexByte(code)))"
            summary += code == 0 ? " accepted" : reason.isFailure ? " refused: \(named)" : " \(named)"
        } else {
            let rc = MQTTConnectReturnCode(rawValue: code)
            fields.append(Field("return_code", "Return Code", .int(Int(code)), line: "Return Code: \(rc.name) (\(code))",
                                range: codeRange, children: [Field("reason", "Reason", .string(rc.name), range: codeRange, jsonOnly: true)]))
            if rc.knownName == nil {
                error("unknown-return-code", "CONNACK return code \(code) is reserved", spec.ref("3.2.2.3", "3.2.2.3"), range: codeRange)
            }
            refused = code != 0
            if code == 0 {
                summary += " accepted"
            } else {
                let short = rc.knownName.map { String($0.dropFirst("Connection Refused: ".count)) } ?? "unknown"
                summary += " refused: \(short) (0x\(hexByte(code)))"
            }
        }
        if refused, sessionPresent {
            // MQTT 3.1.1 §3.2.2.2 [MQTT-3.2.2-4], 5.0 §3.2.2.1.1 [MQTT-3.2.2-6].
            error("session-present-on-refusal", "Session Present is set on a refused connection",
                  spec.ref("3.2.2.2", "3.2.2.1.1"), range: flagsRange)
        }
        if sessionPresent { summary += " session-present" }
        if version == .v5 {
            guard let values = properties(.packet(.connack)) else { return summary }
            facts.topicAliasMaximum = values.topicAliasMaximum ?? 0
        }
        return summary
    }

    /// A reason code with its name beside it (JSON: `reason_code`, `reason`).
    func reasonCodeField(_ code: MQTTReasonCode, range: Range<Int>?, implied: Bool = false) -> Field {
        // The implied Success of a bare acknowledgement is the same field every time: made once per type.
        if implied, code == .success, range == nil { return PacketParser.impliedSuccess[Int(type.rawValue & 0x0F)] }
        return Self.makeReasonCodeField(code, type: type, range: range, implied: implied)
    }

    /// Implied-Success fields by packet type, text lines included whatever `Field.buildsTextLines` says.
    static let impliedSuccess: [Field] = (0...15).map { raw in
        let type = MQTTPacketType(rawValue: UInt8(raw))
        var field = makeReasonCodeField(.success, type: type, range: nil, implied: true)
        field.line = reasonLine(.success, type: type, implied: true)
        return field
    }

    private static func reasonLine(_ code: MQTTReasonCode, type: MQTTPacketType, implied: Bool) -> String {
        "Reason Code: \(code.name(in: type)) (0x\(hexByte(code.rawValue))\(implied ? ", implied: the packet omits it" : ""))"
    }

    private static func makeReasonCodeField(_ code: MQTTReasonCode, type: MQTTPacketType, range: Range<Int>?, implied: Bool) -> Field {
        let name = code.name(in: type)
        return Field("reason_code", "Reason Code", .int(Int(code.rawValue)), line: reasonLine(code, type: type, implied: implied),
                     range: range, children: [Field("reason", "Reason", .string(name), range: range, jsonOnly: true)])
    }

    /// MQTT 5.0 §2.4: each packet type has its own set of reason codes.
    mutating func checkReasonCode(_ code: MQTTReasonCode, range: Range<Int>) {
        guard !code.isAllowed(in: type) else { return }
        if code.knownName == nil {
            error("unknown-reason-code", "Reason code 0x\(hexByte(code.rawValue)) is not defined", "MQTT 5.0 §2.4", range: range)
        } else {
            error("reason-code-not-allowed", "Reason code \(code.name(in: type)) (0x\(hexByte(code.rawValue))) is not one \(type.name) may carry",
                  "MQTT 5.0 §2.4", range: range)
        }
    }

    /// ` not authorized (0x87)` for a reason other than success, else empty.
    func reasonSuffix(_ code: MQTTReasonCode) -> String {
        code.rawValue == 0 ? "" : " \(code.name(in: type).lowercased()) (0x\(hexByte(code.rawValue)))"
    }
}
