import Dissection

extension PacketParser {
    /// SUBSCRIBE (MQTT 5.0 §3.8, 3.1.1 §3.8): packet id, properties, (filter, options) pairs.
    mutating func parseSubscribe() -> String {
        guard let id = packetIdentifier() else { return type.name }
        let head = "SUBSCRIBE id=\(id)"
        if version == .v5 {
            guard properties(.packet(.subscribe)) != nil else { return head }
        }
        if isAtRegionEnd {
            // MQTT 3.1.1 §3.8.3 [MQTT-3.8.3-3], 5.0 §3.8.3: at least one topic filter.
            error("empty-subscribe", "SUBSCRIBE carries no topic filter", spec.ref("3.8.3", "3.8.3"))
            return head
        }
        var topics: [Field] = []
        var parts: [String] = []
        var total = 0
        let listStart = offset
        while offset < regionEnd, !stopped {
            let start = offset
            guard let filter = readString("topic filter") else { break }
            checkTopicFilter(filter.value, range: filter.range)
            let optionsStart = offset
            guard let o = readUInt8("subscription options") else { break }
            let optionsRange = optionsStart..<offset
            let qos = Int(o & 0b11)
            var children = [Field("filter", "Topic", .string(filter.value), range: filter.range)]
            var optionBits = [Field("qos", "QoS", .int(qos),
                                    line: BitLine.line(o, mask: 0x03, "QoS: \(BitLine.qosName(qos)) (\(qos))"), range: optionsRange)]
            if qos == 3 {
                error("qos-3", "The requested QoS of \"\(filter.value)\" is 3, which is reserved", spec.ref("3.8.3.1", "3.8.3.1"), range: optionsRange)
            }
            if version == .v5 {
                let noLocal = o & 0x04 != 0
                let retainAsPublished = o & 0x08 != 0
                let retainHandling = Int((o >> 4) & 0b11)
                optionBits += [
                    Field("no_local", "No Local", .bool(noLocal), line: BitLine.line(o, mask: 0x04, "No Local: \(BitLine.set(noLocal))"), range: optionsRange),
                    Field("retain_as_published", "Retain As Published", .bool(retainAsPublished),
                          line: BitLine.line(o, mask: 0x08, "Retain As Published: \(BitLine.set(retainAsPublished))"), range: optionsRange),
                    Field("retain_handling", "Retain Handling", .int(retainHandling),
                          line: BitLine.line(o, mask: 0x30, "Retain Handling: \(Self.retainHandlingName(retainHandling)) (\(retainHandling))"),
                          range: optionsRange),
                    Field("reserved", "Reserved", .int(Int(o >> 6)), line: BitLine.line(o, mask: 0xC0, "Reserved: \(o >> 6)"),
                          range: optionsRange, textOnly: true),
                ]
                if o & 0xC0 != 0 {
                    // MQTT 5.0 §3.8.3.1 [MQTT-3.8.3-5]: bits 6 and 7 are reserved.
                    error("subscribe-reserved-bits", "Reserved bits 6-7 of the subscription options of \"\(filter.value)\" are set",
                          "MQTT 5.0 §3.8.3.1", range: optionsRange)
                }
                if retainHandling == 3 {
                    error("retain-handling-3", "Retain Handling is 3, which is reserved", "MQTT 5.0 §3.8.3.1", range: optionsRange)
                }
                if noLocal, filter.value.hasPrefix("$share/") {
                    // MQTT 5.0 §3.8.3.1 [MQTT-3.8.3-4]
                    error("no-local-on-shared", "No Local is set on the shared subscription \"\(filter.value)\"",
                          "MQTT 5.0 §3.8.3.1", range: optionsRange)
                }
            } else {
                optionBits.append(Field("reserved", "Reserved", .int(Int(o >> 2)), line: BitLine.line(o, mask: 0xFC, "Reserved: \(o >> 2)"),
                                        range: optionsRange, textOnly: true))
                if o & 0xFC != 0 {
                    // MQTT 3.1.1 §3.8.3.1 [MQTT-3-8.3-4]: the upper six bits are reserved.
                    error("subscribe-reserved-bits", "Reserved bits 2-7 of the requested QoS byte of \"\(filter.value)\" are set",
                          "MQTT 3.1.1 §3.8.3.1", range: optionsRange)
                }
            }
            children.append(Field("options", "Subscription Options", .int(Int(o)), line: "Subscription Options: 0x\(hexByte(o))",
                                  range: optionsRange, children: optionBits))
            total += 1
            if topics.count < PacketParser.maxListItems {
                topics.append(Field("topic", "Topic Filter", line: "Topic Filter: \(filter.value) (QoS \(qos))",
                                    range: start..<offset, children: children))
            }
            if parts.count < PacketParser.maxSummaryItems { parts.append("\(summaryTopic(filter.value)) QoS \(qos)") }
        }
        appendList("topics", "Topics", items: topics, total: total, range: listStart..<max(listStart, min(offset, heldEnd)))
        return parts.isEmpty ? head : "\(head) \(PacketParser.summaryList(parts, total: total))"
    }

    static func retainHandlingName(_ v: Int) -> String {
        switch v {
        case 0: return "Send retained messages at subscribe"
        case 1: return "Send retained messages at new subscribe only"
        case 2: return "Do not send retained messages"
        default: return "Reserved"
        }
    }

    /// MQTT 5.0 / 3.1.1 §4.7.1: `#` only as the last level, alone; `+` only as a whole level;
    /// a filter is at least one character.
    mutating func checkTopicFilter(_ filter: String, range: Range<Int>) {
        if filter.isEmpty {
            error("empty-topic-filter", "A topic filter is empty", spec.ref("4.7.3", "4.7.3"), range: range)
            return
        }
        // An ASCII filter (nearly all) is checked over its bytes: splitting it into Substrings and
        // searching them by Character cost about 15,000 instructions a SUBSCRIBE, made once per
        // connection (a fleet of devices makes thousands a second). Other filters go by Characters,
        // where a combining mark can make `#`, `+` or `/` part of another character.
        if let misplaced = Self.misplacedWildcard(inASCII: filter) {
            switch misplaced {
            case .none:
                return
            case UInt8(ascii: "#")?:
                error("invalid-topic-filter", "In \"\(filter)\" the multi-level wildcard # is not alone in the last level",
                      spec.ref("4.7.1.2", "4.7.1.2"), range: range)
            default:
                error("invalid-topic-filter", "In \"\(filter)\" the single-level wildcard + does not fill a whole level",
                      spec.ref("4.7.1.3", "4.7.1.3"), range: range)
            }
            return
        }
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (i, level) in levels.enumerated() {
            if level.contains("#"), level != "#" || i != levels.count - 1 {
                error("invalid-topic-filter", "In \"\(filter)\" the multi-level wildcard # is not alone in the last level",
                      spec.ref("4.7.1.2", "4.7.1.2"), range: range)
                return
            }
            if level.contains("+"), level != "+" {
                error("invalid-topic-filter", "In \"\(filter)\" the single-level wildcard + does not fill a whole level",
                      spec.ref("4.7.1.3", "4.7.1.3"), range: range)
                return
            }
        }
    }

    /// `checkTopicFilter`'s rules over an ASCII filter's bytes: the first wildcard out of place, level
    /// by level (`#` before `+` within a level), as `.some(nil)` when there is none; nil when the
    /// filter is not ASCII (or not contiguous), which the Character-wise check then takes.
    static func misplacedWildcard(inASCII filter: String) -> UInt8?? {
        filter.utf8.withContiguousStorageIfAvailable { bytes -> UInt8?? in
            // All of it first: a mark after a `/` joins two levels in the Character-wise check.
            for b in bytes where b >= 0x80 { return nil }
            return .some(misplacedWildcard(inASCII: bytes))
        } ?? nil
    }

    /// `checkTopicFilter`'s rules over a filter's bytes, all ASCII: the first wildcard out of
    /// place, level by level (`#` before `+` within a level), nil when there is none.
    static func misplacedWildcard(inASCII bytes: UnsafeBufferPointer<UInt8>) -> UInt8? {
        var levelStart = 0, hasHash = false, hasPlus = false
        for i in 0...bytes.count {
            let b: UInt8 = i < bytes.count ? bytes[i] : UInt8(ascii: "/")
            if b == UInt8(ascii: "/") {
                let length = i - levelStart
                if hasHash, length != 1 || i != bytes.count { return UInt8(ascii: "#") }
                if hasPlus, length != 1 { return UInt8(ascii: "+") }
                levelStart = i + 1
                hasHash = false
                hasPlus = false
            } else if b == UInt8(ascii: "#") {
                hasHash = true
            } else if b == UInt8(ascii: "+") {
                hasPlus = true
            }
        }
        return nil
    }

    /// UNSUBSCRIBE (MQTT 5.0 §3.10, 3.1.1 §3.10): packet id, properties, topic filters.
    mutating func parseUnsubscribe() -> String {
        guard let id = packetIdentifier() else { return type.name }
        let head = "UNSUBSCRIBE id=\(id)"
        if version == .v5 {
            guard properties(.packet(.unsubscribe)) != nil else { return head }
        }
        if isAtRegionEnd {
            error("empty-unsubscribe", "UNSUBSCRIBE carries no topic filter", spec.ref("3.10.3", "3.10.3"))
            return head
        }
        var topics: [Field] = []
        var parts: [String] = []
        var total = 0
        let listStart = offset
        while offset < regionEnd, !stopped {
            guard let filter = readString("topic filter") else { break }
            checkTopicFilter(filter.value, range: filter.range)
            total += 1
            if topics.count < PacketParser.maxListItems {
                topics.append(Field("topic", "Topic Filter", line: "Topic Filter: \(filter.value)", range: filter.range,
                                    children: [Field("filter", "Topic", .string(filter.value), range: filter.range)]))
            }
            if parts.count < PacketParser.maxSummaryItems { parts.append(summaryTopic(filter.value)) }
        }
        appendList("topics", "Topics", items: topics, total: total, range: listStart..<max(listStart, min(offset, heldEnd)))
        return parts.isEmpty ? head : "\(head) \(PacketParser.summaryList(parts, total: total))"
    }
}
