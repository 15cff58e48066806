import Dissection

extension PacketParser {
    /// CONNECT (MQTT 5.0 §3.1, 3.1.1 §3.1): variable header, then client id, will, credentials.
    mutating func parseConnect(facts: inout MQTTDecoder.Facts) -> String {
        var summary = "CONNECT"
        guard let name = readString("protocol name") else { return summary }
        fields.append(Field("protocol_name", "Protocol Name", .string(name.value), range: name.range))
        let levelStart = offset
        guard let level = readUInt8("protocol level") else { return summary }
        let announced = MQTTVersion(level: Int(level))
        fields.append(Field("protocol_version", "Version", .int(Int(level)),
                            line: "Version: MQTT v\(announced?.name ?? "?") (\(level))", range: levelStart..<offset))
        if let announced {
            fields.append(Field("version", "Version Name", .string(announced.name), range: levelStart..<offset, jsonOnly: true))
        }
        summary += " v\(announced?.name ?? "level-\(level)")"
        switch name.value {
        case "MQTT", "MQIsdp":
            if let announced, announced.protocolName != name.value {
                problem(.warning, "protocol-name-mismatch",
                        "Protocol name \"\(name.value)\" does not go with level \(level) (MQTT \(announced.name) uses \"\(announced.protocolName)\")",
                        spec.ref("3.1.2.1", "3.1.2.1"), range: name.range)
            }
        default:
            error("unknown-protocol-name", "Unknown protocol name \"\(name.value)\" (expected \"MQTT\" or \"MQIsdp\")",
                  spec.ref("3.1.2.1", "3.1.2.1"), range: name.range)
        }
        if announced == nil {
            error("unknown-protocol-level",
                  "Unknown protocol level \(level) (3 is MQTT 3.1, 4 is 3.1.1, 5 is 5.0); decoded as MQTT \(version.name)",
                  spec.ref("3.1.2.2", "3.1.2.2"), range: levelStart..<offset)
        }

        let flagsStart = offset
        guard let f = readUInt8("connect flags") else { return summary }
        let flagsRange = flagsStart..<offset
        let userNameFlag = f & 0x80 != 0
        let passwordFlag = f & 0x40 != 0
        let willRetain = f & 0x20 != 0
        let willQoS = Int((f >> 3) & 0b11)
        let willFlag = f & 0x04 != 0
        let clean = f & 0x02 != 0
        let reserved = f & 0x01 != 0
        let cleanKey = version == .v5 ? "clean_start" : "clean_session"
        let cleanLabel = version == .v5 ? "Clean Start Flag" : "Clean Session Flag"
        func bit(_ key: String, _ label: String, _ value: Bool, _ mask: UInt8) -> Field {
            Field(key, label, .bool(value), line: BitLine.line(f, mask: mask, "\(label): \(BitLine.set(value))"), range: flagsRange)
        }
        fields.append(Field("connect_flags", "Connect Flags", .int(Int(f)), line: "Connect Flags: 0x\(hexByte(f))",
                            range: flagsRange, children: [
                                bit("username_flag", "User Name Flag", userNameFlag, 0x80),
                                bit("password_flag", "Password Flag", passwordFlag, 0x40),
                                bit("will_retain", "Will Retain", willRetain, 0x20),
                                Field("will_qos", "Will QoS", .int(willQoS),
                                      line: BitLine.line(f, mask: 0x18, "QoS Level: \(BitLine.qosName(willQoS)) (\(willQoS))"), range: flagsRange),
                                bit("will_flag", "Will Flag", willFlag, 0x04),
                                bit(cleanKey, cleanLabel, clean, 0x02),
                                bit("reserved_flag", "(Reserved)", reserved, 0x01),
                            ]))
        if reserved {
            // MQTT 3.1.1 §3.1.2.3 [MQTT-3.1.2-3], 5.0 §3.1.2.3: the reserved flag must be 0.
            error("connect-reserved-flag", "The reserved bit of the connect flags is set", spec.ref("3.1.2.3", "3.1.2.3"), range: flagsRange)
        }
        if willQoS == 3 {
            error("will-qos-3", "The Will QoS is 3, which is reserved", spec.ref("3.1.2.6", "3.1.2.6"), range: flagsRange)
        }
        if !willFlag, willQoS != 0 {
            error("will-flags", "The Will QoS is \(willQoS) but the Will Flag is not set", spec.ref("3.1.2.6", "3.1.2.6"), range: flagsRange)
        }
        if !willFlag, willRetain {
            error("will-flags", "Will Retain is set but the Will Flag is not", spec.ref("3.1.2.7", "3.1.2.7"), range: flagsRange)
        }
        if passwordFlag, !userNameFlag, version != .v5 {
            // MQTT 3.1.1 §3.1.2.9 [MQTT-3.1.2-22]; MQTT 5.0 allows a password alone.
            error("password-without-username", "The Password Flag is set without the User Name Flag",
                  spec.ref("3.1.2.9", "3.1.2.9"), range: flagsRange)
        }

        let keepAliveStart = offset
        guard let keepAlive = readUInt16("keep alive") else { return summary }
        fields.append(Field("keep_alive", "Keep Alive", .int(Int(keepAlive)), range: keepAliveStart..<offset))

        if version == .v5 {
            guard let values = properties(.packet(.connect)) else { return summary }
            facts.topicAliasMaximum = values.topicAliasMaximum ?? 0
        }

        let clientStart = offset
        guard let clientID = readString("client identifier") else { return summary }
        fields.append(Field("client_id", "Client ID", .string(clientID.value), range: clientID.range))
        summary += " client=\(summaryTopic(clientID.value))"
        if clientID.value.isEmpty, !clean, version == .v3_1_1 {
            error("empty-client-id", "An empty client identifier needs Clean Session set", "MQTT 3.1.1 §3.1.3.1",
                  range: clientStart..<offset)
        }
        if version == .v3_1, clientID.value.utf8.count > 23 || clientID.value.isEmpty {
            problem(.warning, "client-id-length", "MQTT 3.1 client identifiers are 1 to 23 characters long",
                    "MQTT 3.1 §3.1", range: clientID.range)
        }
        if clean { summary += " clean" }
        summary += " keep-alive=\(keepAlive)"

        if willFlag {
            if version == .v5 {
                guard properties(.will, key: "will_properties", label: "Will Properties") != nil else { return summary }
            }
            guard let willTopic = readString("will topic") else { return summary }
            fields.append(Field("will_topic", "Will Topic", .string(willTopic.value), range: willTopic.range))
            checkTopicName(willTopic.value, range: willTopic.range, allowEmpty: false)
            guard let willPayload = readBinary("will message") else { return summary }
            fields.append(Field("will_payload", "Will Message", preview(willPayload.value, length: willPayload.value.count),
                                range: willPayload.range))
            summary += " will=\(summaryTopic(willTopic.value))"
        }
        if userNameFlag {
            guard let user = readString("user name") else { return summary }
            fields.append(Field("username", "User Name", .string(user.value), range: user.range))
            summary += " user=\(user.value)"
        }
        if passwordFlag {
            guard let password = readBinary("password") else { return summary }
            fields.append(Field("password", "Password", .secret(secretText(password.value)), range: password.range))
        }
        return summary
    }

    /// A Topic Name must not hold wildcards, nor be empty where no alias stands for it.
    mutating func checkTopicName(_ topic: String, range: Range<Int>, allowEmpty: Bool) {
        // Over the wire bytes (after the 2-byte length), not the String's UTF-8 view: this runs for every PUBLISH.
        let wildcard = slice((range.lowerBound + 2)..<range.upperBound).withUnsafeBufferPointer { p in
            p.contains { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }
        }
        if wildcard {
            // MQTT 3.1.1 §3.3.2.1 [MQTT-3.3.2-2], 5.0 §3.3.2.1: no wildcards in a Topic Name.
            error("wildcard-in-topic", "The topic name \"\(topic)\" contains a wildcard character (+ or #)",
                  spec.ref("3.3.2.1", "3.3.2.1"), range: range)
        }
        if topic.isEmpty, !allowEmpty {
            error("empty-topic", "The topic name is empty", spec.ref("4.7.3", "4.7.3"), range: range)
        }
    }
}
