import Dissection

extension PacketParser {
    /// SUBSCRIBE (MQTT 5.0 §3.8, 3.1.1 §3.8): packet id, properties, (filter, options) pairs.
    mutating func parseSubscribe() -> MQTTSubscribe {
        var sub = MQTTSubscribe()
        guard let id = packetIdentifier() else { return sub }
        sub.packetID = id
        if version == .v5 {
            guard properties(.packet(.subscribe), into: &sub.properties) != nil else { return sub }
        }
        if isAtRegionEnd {
            // MQTT 3.1.1 §3.8.3 [MQTT-3.8.3-3], 5.0 §3.8.3: at least one topic filter.
            error(.emptySubscribe, "SUBSCRIBE carries no topic filter", spec.ref("3.8.3", "3.8.3"))
            return sub
        }
        var entries: [MQTTSubscription] = []
        let listStart = offset
        while offset < regionEnd, !stopped {
            guard let filter = readString("topic filter") else { break }
            checkTopicFilter(filter.value, range: filter.range)
            let optionsStart = offset
            guard let o = readUInt8("subscription options") else { break }
            let optionsRange = optionsStart..<offset
            let qos = Int(o & 0b11)
            if qos == 3 {
                error(.qos3, "The requested QoS of \"\(filter.value)\" is 3, which is reserved", spec.ref("3.8.3.1", "3.8.3.1"), range: optionsRange)
            }
            if version == .v5 {
                if o & 0xC0 != 0 {
                    // MQTT 5.0 §3.8.3.1 [MQTT-3.8.3-5]: bits 6 and 7 are reserved.
                    error(.subscribeReservedBits, "Reserved bits 6-7 of the subscription options of \"\(filter.value)\" are set",
                          "MQTT 5.0 §3.8.3.1", range: optionsRange)
                }
                if (o >> 4) & 0b11 == 3 {
                    error(.retainHandling3, "Retain Handling is 3, which is reserved", "MQTT 5.0 §3.8.3.1", range: optionsRange)
                }
                if o & 0x04 != 0, filter.value.hasPrefix("$share/") {
                    // MQTT 5.0 §3.8.3.1 [MQTT-3.8.3-4]
                    error(.noLocalOnShared, "No Local is set on the shared subscription \"\(filter.value)\"",
                          "MQTT 5.0 §3.8.3.1", range: optionsRange)
                }
            } else if o & 0xFC != 0 {
                // MQTT 3.1.1 §3.8.3.1 [MQTT-3-8.3-4]: the upper six bits are reserved.
                error(.subscribeReservedBits, "Reserved bits 2-7 of the requested QoS byte of \"\(filter.value)\" are set",
                      "MQTT 3.1.1 §3.8.3.1", range: optionsRange)
            }
            entries.append(MQTTSubscription(filter: Ranged(filter.value, filter.range), options: Ranged(o, optionsRange)))
        }
        sub.subscriptions = MQTTList(entries: entries, range: listStart..<max(listStart, min(offset, heldEnd)))
        return sub
    }

    /// MQTT 5.0 / 3.1.1 §4.7.1: `#` only as the last level, alone; `+` only as a whole level;
    /// a filter is at least one character.
    mutating func checkTopicFilter(_ filter: String, range: Range<Int>) {
        if filter.isEmpty {
            error(.emptyTopicFilter, "A topic filter is empty", spec.ref("4.7.3", "4.7.3"), range: range)
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
                error(.invalidTopicFilter, "In \"\(filter)\" the multi-level wildcard # is not alone in the last level",
                      spec.ref("4.7.1.2", "4.7.1.2"), range: range)
            default:
                error(.invalidTopicFilter, "In \"\(filter)\" the single-level wildcard + does not fill a whole level",
                      spec.ref("4.7.1.3", "4.7.1.3"), range: range)
            }
            return
        }
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (i, level) in levels.enumerated() {
            if level.contains("#"), level != "#" || i != levels.count - 1 {
                error(.invalidTopicFilter, "In \"\(filter)\" the multi-level wildcard # is not alone in the last level",
                      spec.ref("4.7.1.2", "4.7.1.2"), range: range)
                return
            }
            if level.contains("+"), level != "+" {
                error(.invalidTopicFilter, "In \"\(filter)\" the single-level wildcard + does not fill a whole level",
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
    mutating func parseUnsubscribe() -> MQTTUnsubscribe {
        var u = MQTTUnsubscribe()
        guard let id = packetIdentifier() else { return u }
        u.packetID = id
        if version == .v5 {
            guard properties(.packet(.unsubscribe), into: &u.properties) != nil else { return u }
        }
        if isAtRegionEnd {
            error(.emptyUnsubscribe, "UNSUBSCRIBE carries no topic filter", spec.ref("3.10.3", "3.10.3"))
            return u
        }
        var filters: [Ranged<String>] = []
        let listStart = offset
        while offset < regionEnd, !stopped {
            guard let filter = readString("topic filter") else { break }
            checkTopicFilter(filter.value, range: filter.range)
            filters.append(Ranged(filter.value, filter.range))
        }
        u.filters = MQTTList(entries: filters, range: listStart..<max(listStart, min(offset, heldEnd)))
        return u
    }
}
