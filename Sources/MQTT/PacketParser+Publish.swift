import Dissection

extension PacketParser {
    /// PUBLISH (MQTT 5.0 §3.3, 3.1.1 §3.3): topic, packet id (QoS > 0), properties, payload.
    /// Topic aliases resolve against this direction's map (MQTT 5.0 §3.3.2.3.4).
    mutating func parsePublish(state: inout MQTTDirectionState) -> String {
        let qos = Int((flags >> 1) & 0b11)
        let dup = flags & 0x08 != 0
        let retain = flags & 0x01 != 0
        var extras = ""
        if retain { extras += " retain" }
        if dup { extras += " dup" }
        guard let topic = readString("topic name") else { return "PUBLISH QoS \(qos)\(extras)" }
        let topicIndex = fields.count
        fields.append(Field("topic", "Topic", .string(topic.value), range: topic.range))
        checkTopicName(topic.value, range: topic.range, allowEmpty: version == .v5)
        var shownTopic = summaryTopic(topic.value)
        // Wireshark reads a packet identifier for any QoS but 0, QoS 3 included; so do we.
        var packetID: Int?
        // Made only for a PUBLISH cut short; a whole one builds its line at the end.
        var head: String { packetID.map { "PUBLISH id=\($0) QoS \(qos)" } ?? "PUBLISH QoS \(qos)" }
        if qos != 0 {
            guard let id = packetIdentifier() else { return "\(head) \(shownTopic)\(extras)" }
            packetID = id
        }
        var payloadFormat: Int?
        if version == .v5 {
            guard let values = properties(.packet(.publish)) else { return "\(head) \(shownTopic)\(extras)" }
            payloadFormat = values.payloadFormatIndicator
            if let (alias, aliasRange) = values.topicAlias {
                fields.append(Field("topic_alias", "Topic Alias", .int(alias), range: aliasRange, jsonOnly: true))
                if let maximum = state.topicAliasMaximum, alias > maximum {
                    error("topic-alias-over-maximum",
                          "Topic alias \(alias) is greater than the Topic Alias Maximum (\(maximum)) the receiver announced",
                          "MQTT 5.0 §3.3.2.3.4", range: aliasRange)
                }
                if alias > 0 {
                    if !topic.value.isEmpty {
                        state.topicAliases[alias] = topic.value
                        shownTopic = "\(summaryTopic(topic.value)) alias=\(alias)"
                    } else if let known = state.topicAliases[alias] {
                        // `topic` is the topic the message is published to, so filters on it find
                        // aliased PUBLISHes too (tshark does the same); the wire carried an empty string.
                        fields[topicIndex].value = .string(known)
                        fields[topicIndex].line = "Topic: \(known) [from topic alias \(alias); empty on the wire]"
                        fields.append(Field("topic_from_alias", "Topic From Alias", .bool(true), range: aliasRange, jsonOnly: true))
                        shownTopic = "\(summaryTopic(known)) (alias \(alias))"
                    } else {
                        error("unknown-topic-alias",
                              "Topic alias \(alias) has no topic in this direction: no earlier PUBLISH this way set it",
                              "MQTT 5.0 §3.3.2.3.4", range: aliasRange)
                        shownTopic = "alias=\(alias) (unknown)"
                    }
                }
            } else if topic.value.isEmpty {
                error("empty-topic", "The topic name is empty and there is no topic alias", "MQTT 5.0 §3.3.2.3.4", range: topic.range)
            }
        }
        let payload = readRest()
        fields.append(Field("payload_length", "Payload Length", .int(payload.length),
                            range: payload.start..<(payload.start + payload.length)))
        fields.append(Field("payload", "Message", preview(payload.held, length: payload.length),
                            range: payload.start..<(payload.start + payload.held.count)))
        if payloadFormat == 1, payload.held.count == payload.length,
           Preview.validUTF8(payload.held) == nil {
            problem(.warning, "payload-not-utf8", "The Payload Format Indicator says UTF-8, but the payload is not well-formed UTF-8",
                    "MQTT 5.0 §3.3.2.3.2", range: payload.start..<(payload.start + payload.length))
        }
        // `head shownTopic (n bytes)extras`, built once (this runs for every PUBLISH).
        var line = lineBuffer(capacity: 80)
        line.literal("PUBLISH")
        if let id = packetID {
            line.literal(" id=")
            line.append(id)
        }
        line.literal(" QoS ")
        line.append(qos)
        line.literal(" ")
        line.append(shownTopic)
        line.literal(" (")
        line.append(payload.length)
        line.literal(" bytes)")
        line.append(extras)
        return line.take()
    }

    /// PUBACK, PUBREC, PUBREL, PUBCOMP (MQTT 5.0 §3.4–3.7): packet id, then in 5.0 an optional
    /// reason code (absent: 0x00 Success) and optional properties.
    mutating func parsePublishResponse() -> String {
        guard let id = packetIdentifier() else { return type.name }
        var line = lineBuffer(capacity: 32)
        line.append(type.name)
        line.literal(" id=")
        line.append(id)
        var summary = line.take()
        guard version == .v5 else { return summary }
        if isAtRegionEnd {
            fields.append(reasonCodeField(.success, range: nil, implied: true))
            return summary
        }
        let start = offset
        guard let code = readUInt8("reason code") else { return summary }
        let reason = MQTTReasonCode(rawValue: code)
        fields.append(reasonCodeField(reason, range: start..<offset))
        checkReasonCode(reason, range: start..<offset)
        summary += reasonSuffix(reason)
        if !isAtRegionEnd {
            _ = properties(.packet(type))
        }
        return summary
    }
}
