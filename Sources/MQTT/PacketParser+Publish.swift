import Dissection

extension PacketParser {
    /// PUBLISH (MQTT 5.0 §3.3, 3.1.1 §3.3): topic, packet id (QoS > 0), properties, payload.
    /// Topic aliases resolve against this direction's map (MQTT 5.0 §3.3.2.3.4).
    mutating func parsePublish(state: inout MQTTDirectionState) -> MQTTPublish {
        var p = MQTTPublish(flags: flags)
        parsePublish(into: &p, state: &state)
        return p
    }

    private mutating func parsePublish(into p: inout MQTTPublish, state: inout MQTTDirectionState) {
        guard let topic = readTopicName(&state.recentTopics) else { return }
        p.topic = Ranged(topic.value, topic.range)
        checkTopicName(topic.value, range: topic.range, allowEmpty: version == .v5, plain: topic.plain)
        // Wireshark reads a packet identifier for any QoS but 0, QoS 3 included; so do we.
        if p.qos != 0 {
            guard let id = packetIdentifier() else { return }
            p.packetID = id
        }
        var payloadFormat: Int?
        if version == .v5 {
            guard let values = properties(.packet(.publish), into: &p.properties) else { return }
            payloadFormat = values.payloadFormatIndicator
            if let (alias, aliasRange) = values.topicAlias {
                p.topicAlias = Ranged(alias, aliasRange)
                if let maximum = state.topicAliasMaximum, alias > maximum {
                    error(.topicAliasOverMaximum,
                          "Topic alias \(alias) is greater than the Topic Alias Maximum (\(maximum)) the receiver announced",
                          "MQTT 5.0 §3.3.2.3.4", range: aliasRange)
                }
                if alias > 0 {
                    if !topic.value.isEmpty {
                        state.topicAliases[alias] = topic.value
                        p.alias = .set
                    } else if let known = state.topicAliases[alias] {
                        p.alias = .resolved(known)
                    } else {
                        error(.unknownTopicAlias,
                              "Topic alias \(alias) has no topic in this direction: no earlier PUBLISH this way set it",
                              "MQTT 5.0 §3.3.2.3.4", range: aliasRange)
                        p.alias = .unknown
                    }
                }
            } else if topic.value.isEmpty {
                error(.emptyTopic, "The topic name is empty and there is no topic alias", "MQTT 5.0 §3.3.2.3.4", range: topic.range)
            }
        }
        let payload = readRest()
        p.payload = MQTTPublish.Payload(start: payload.start, length: payload.length, heldCount: payload.held.count)
        if payloadFormat == 1, payload.held.count == payload.length,
           Preview.validUTF8(payload.held) == nil {
            problem(.warning, .payloadNotUtf8, "The Payload Format Indicator says UTF-8, but the payload is not well-formed UTF-8",
                    "MQTT 5.0 §3.3.2.3.2", range: payload.start..<(payload.start + payload.length))
        }
    }

    /// PUBACK, PUBREC, PUBREL, PUBCOMP (MQTT 5.0 §3.4–3.7): packet id, then in 5.0 an optional
    /// reason code (absent: 0x00 Success) and optional properties.
    mutating func parsePublishResponse() -> MQTTPublishResponse {
        var r = MQTTPublishResponse()
        guard let id = packetIdentifier() else { return r }
        r.packetID = id
        guard version == .v5 else { return r }
        readReason(into: &r.reasonCode, properties: &r.properties)
        return r
    }
}
