import Dissection

extension PacketParser {
    /// CONNECT (MQTT 5.0 §3.1, 3.1.1 §3.1): variable header, then client id, will, credentials.
    mutating func parseConnect() -> MQTTConnect {
        var c = MQTTConnect.Fields()
        parseConnect(into: &c)
        return MQTTConnect(c)
    }

    private mutating func parseConnect(into c: inout MQTTConnect.Fields) {
        guard let name = readString("protocol name") else { return }
        c.protocolName = Ranged(name.value, name.range)
        let levelStart = offset
        guard let level = readUInt8("protocol level") else { return }
        c.level = Ranged(level, levelStart..<offset)
        let announced = MQTTVersion(level: Int(level))
        switch name.value {
        case "MQTT", "MQIsdp":
            if let announced, announced.protocolName != name.value {
                problem(.warning, .protocolNameMismatch,
                        "Protocol name \"\(name.value)\" does not go with level \(level) (MQTT \(announced.name) uses \"\(announced.protocolName)\")",
                        spec.ref("3.1.2.1", "3.1.2.1"), range: name.range)
            }
        default:
            error(.unknownProtocolName, "Unknown protocol name \"\(name.value)\" (expected \"MQTT\" or \"MQIsdp\")",
                  spec.ref("3.1.2.1", "3.1.2.1"), range: name.range)
        }
        if announced == nil {
            error(.unknownProtocolLevel,
                  "Unknown protocol level \(level) (3 is MQTT 3.1, 4 is 3.1.1, 5 is 5.0); decoded as MQTT \(version.name)",
                  spec.ref("3.1.2.2", "3.1.2.2"), range: levelStart..<offset)
        }

        let flagsStart = offset
        guard let f = readUInt8("connect flags") else { return }
        let flagsRange = flagsStart..<offset
        c.flags = Ranged(f, flagsRange)
        if c.reservedFlag {
            // MQTT 3.1.1 §3.1.2.3 [MQTT-3.1.2-3], 5.0 §3.1.2.3: the reserved flag must be 0.
            error(.connectReservedFlag, "The reserved bit of the connect flags is set", spec.ref("3.1.2.3", "3.1.2.3"), range: flagsRange)
        }
        let willQoS = c.willQoS
        if willQoS == 3 {
            error(.willQos3, "The Will QoS is 3, which is reserved", spec.ref("3.1.2.6", "3.1.2.6"), range: flagsRange)
        }
        if !c.willFlag, willQoS != 0 {
            error(.willFlags, "The Will QoS is \(willQoS) but the Will Flag is not set", spec.ref("3.1.2.6", "3.1.2.6"), range: flagsRange)
        }
        if !c.willFlag, c.willRetain {
            error(.willFlags, "Will Retain is set but the Will Flag is not", spec.ref("3.1.2.7", "3.1.2.7"), range: flagsRange)
        }
        if c.passwordFlag, !c.usernameFlag, version != .v5 {
            // MQTT 3.1.1 §3.1.2.9 [MQTT-3.1.2-22]; MQTT 5.0 allows a password alone.
            error(.passwordWithoutUsername, "The Password Flag is set without the User Name Flag",
                  spec.ref("3.1.2.9", "3.1.2.9"), range: flagsRange)
        }

        let keepAliveStart = offset
        guard let keepAlive = readUInt16("keep alive") else { return }
        c.keepAlive = Ranged(keepAlive, keepAliveStart..<offset)

        if version == .v5 {
            guard let values = properties(.packet(.connect), into: &c.properties) else { return }
            topicAliasMaximum = values.topicAliasMaximum ?? 0
        }

        let clientStart = offset
        guard let clientID = readString("client identifier") else { return }
        c.clientID = Ranged(clientID.value, clientID.range)
        if clientID.value.isEmpty, !c.cleanStart, version == .v3_1_1 {
            error(.emptyClientId, "An empty client identifier needs Clean Session set", "MQTT 3.1.1 §3.1.3.1",
                  range: clientStart..<offset)
        }
        if version == .v3_1, clientID.value.utf8.count > 23 || clientID.value.isEmpty {
            problem(.warning, .clientIdLength, "MQTT 3.1 client identifiers are 1 to 23 characters long",
                    "MQTT 3.1 §3.1", range: clientID.range)
        }

        if c.willFlag {
            if version == .v5 {
                guard properties(.will, label: "Will Properties", into: &c.willProperties) != nil else { return }
            }
            guard let willTopic = readString("will topic") else { return }
            c.willTopic = Ranged(willTopic.value, willTopic.range)
            checkTopicName(willTopic.value, range: willTopic.range, allowEmpty: false)
            guard let willPayload = readBinary("will message") else { return }
            c.willPayload = Ranged(willPayload.value, willPayload.range)
        }
        if c.usernameFlag {
            guard let user = readString("user name") else { return }
            c.username = Ranged(user.value, user.range)
        }
        if c.passwordFlag {
            guard let password = readBinary("password") else { return }
            c.password = Ranged(password.value, password.range)
        }
    }

    /// A Topic Name must not hold wildcards, nor be empty where no alias stands for it.
    /// `plain`: the bytes are known to hold no wildcard (`readTopicName`).
    mutating func checkTopicName(_ topic: String, range: Range<Int>, allowEmpty: Bool, plain: Bool = false) {
        // Over the wire bytes (after the 2-byte length), not the String's UTF-8 view: this runs for every PUBLISH.
        let wildcard = !plain && slice((range.lowerBound + 2)..<range.upperBound).withUnsafeBufferPointer { p in
            p.contains { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }
        }
        if wildcard {
            // MQTT 3.1.1 §3.3.2.1 [MQTT-3.3.2-2], 5.0 §3.3.2.1: no wildcards in a Topic Name.
            error(.wildcardInTopic, "The topic name \"\(topic)\" contains a wildcard character (+ or #)",
                  spec.ref("3.3.2.1", "3.3.2.1"), range: range)
        }
        if topic.isEmpty, !allowEmpty {
            error(.emptyTopic, "The topic name is empty", spec.ref("4.7.3", "4.7.3"), range: range)
        }
    }
}
