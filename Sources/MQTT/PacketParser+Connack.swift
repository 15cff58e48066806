import Dissection

extension PacketParser {
    /// CONNACK (MQTT 5.0 §3.2, 3.1.1 §3.2, 3.1 §3.2).
    mutating func parseConnack() -> MQTTConnack {
        var c = MQTTConnack()
        let flagsStart = offset
        guard let f = readUInt8("acknowledge flags") else { return c }
        let flagsRange = flagsStart..<offset
        c.flags = Ranged(f, flagsRange)
        // MQTT 3.1: the first byte is reserved (once "topic name compression").
        let sessionPresent = c.sessionPresent(in: version)
        if version != .v3_1, f & 0xFE != 0 {
            error(.connackReservedFlags, "Reserved bits of the acknowledge flags are set", spec.ref("3.2.2.1", "3.2.2.1"), range: flagsRange)
        }
        let codeStart = offset
        let codeName = version == .v5 ? "reason code" : "return code"
        guard let code = readUInt8(codeName) else { return c }
        let codeRange = codeStart..<offset
        c.code = Ranged(code, codeRange)
        if version == .v5 {
            checkReasonCode(MQTTReasonCode(rawValue: code), range: codeRange)
        } else if MQTTConnectReturnCode(rawValue: code).knownName == nil {
            error(.unknownReturnCode, "CONNACK return code \(code) is reserved", spec.ref("3.2.2.3", "3.2.2.3"), range: codeRange)
        }
        if code != 0, sessionPresent {
            // MQTT 3.1.1 §3.2.2.2 [MQTT-3.2.2-4], 5.0 §3.2.2.1.1 [MQTT-3.2.2-6].
            error(.sessionPresentOnRefusal, "Session Present is set on a refused connection",
                  spec.ref("3.2.2.2", "3.2.2.1.1"), range: flagsRange)
        }
        if version == .v5 {
            guard let values = properties(.packet(.connack), into: &c.properties) else { return c }
            topicAliasMaximum = values.topicAliasMaximum ?? 0
        }
        return c
    }

    /// MQTT 5.0 §2.4: each packet type has its own set of reason codes.
    mutating func checkReasonCode(_ code: MQTTReasonCode, range: Range<Int>) {
        guard !code.isAllowed(in: type) else { return }
        if code.knownName == nil {
            error(.unknownReasonCode, "Reason code 0x\(hexByte(code.rawValue)) is not defined", "MQTT 5.0 §2.4", range: range)
        } else {
            error(.reasonCodeNotAllowed, "Reason code \(code.name(in: type)) (0x\(hexByte(code.rawValue))) is not one \(type.name) may carry",
                  "MQTT 5.0 §2.4", range: range)
        }
    }
}
