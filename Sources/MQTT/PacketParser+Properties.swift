import Dissection

/// Property values a packet's parser acts on (the field tree has them all).
struct PropertyValues {
    var topicAlias: (value: Int, range: Range<Int>)?
    var topicAliasMaximum: Int?
    var payloadFormatIndicator: Int?
}

extension MQTTPropertyID.Context {
    /// Where MQTT 5.0 lists this context's properties (and forbids repeating them).
    var propertiesSection: String {
        switch self {
        case .will: return "MQTT 5.0 §3.1.3.2"
        case .packet(let t):
            switch t {
            case .connect: return "MQTT 5.0 §3.1.2.11"
            case .connack: return "MQTT 5.0 §3.2.2.3"
            case .publish: return "MQTT 5.0 §3.3.2.3"
            case .puback: return "MQTT 5.0 §3.4.2.2"
            case .pubrec: return "MQTT 5.0 §3.5.2.2"
            case .pubrel: return "MQTT 5.0 §3.6.2.2"
            case .pubcomp: return "MQTT 5.0 §3.7.2.2"
            case .subscribe: return "MQTT 5.0 §3.8.2.1"
            case .suback: return "MQTT 5.0 §3.9.2.1"
            case .unsubscribe: return "MQTT 5.0 §3.10.2.1"
            case .unsuback: return "MQTT 5.0 §3.11.2.1"
            case .disconnect: return "MQTT 5.0 §3.14.2.2"
            case .auth: return "MQTT 5.0 §3.15.2.2"
            default: return "MQTT 5.0 §2.2.2.2"
            }
        }
    }
}

extension PacketParser {
    /// Reads a property length and the properties it covers (MQTT 5.0 §2.2.2), checking each
    /// against the packets that may carry it and against repetition. `list` is set when the
    /// length reads; the result is nil when the packet's parser must stop.
    mutating func properties(_ context: MQTTPropertyID.Context, label: String = "Properties",
                             into list: inout MQTTProperties?) -> PropertyValues? {
        let start = offset
        // Only messages name the list: lowercased when one is made.
        var what: String { label.lowercased() }
        guard let length = readVariableByteInteger("\(what) length") else { return nil }
        let lengthField = Ranged(length, start..<offset)
        if length == 0 {
            // No properties (most packets): the same list as below, without its bookkeeping.
            list = MQTTProperties(length: lengthField, entries: [], range: start..<offset)
            return PropertyValues()
        }
        var values = PropertyValues()
        var entries: [MQTTProperty] = []
        let outerRegion = region
        let outerEnd = regionEnd
        let declaredEnd = offset &+ length
        if declaredEnd > outerEnd {
            error(.propertyLengthTooLong,
                  "The \(what) length (\(length)) runs past the end of the packet by \(declaredEnd - outerEnd) bytes",
                  "MQTT 5.0 §2.2.2.1", range: start..<offset)
        }
        region = .properties(label)
        regionEnd = min(declaredEnd, outerEnd)
        // Identifiers seen, one bit each: every defined one is below 64 (MQTT 5.0 §2.2.2.2 ends at
        // 0x2A), and an undefined one ends the list before it is marked.
        var seen: UInt64 = 0

        while offset < regionEnd, !stopped {
            guard let property = readProperty(context, what: what, seen: &seen) else { break }
            if !property.isIllegalRepeat {
                switch property.id {
                case .topicAlias:
                    if let alias = property.intValue { values.topicAlias = (alias, property.range) }
                case .topicAliasMaximum: values.topicAliasMaximum = property.intValue
                case .payloadFormatIndicator: values.payloadFormatIndicator = property.intValue
                default: break
                }
            }
            entries.append(property)
        }

        let propertiesEnd = regionEnd
        region = outerRegion
        regionEnd = outerEnd
        if !ranOutOfHeldBytes, !ranPastContent, offset < propertiesEnd {
            offset = propertiesEnd  // a property ran past the property length; go on after it
        }
        list = MQTTProperties(length: lengthField, entries: entries, range: start..<max(start, min(offset, heldEnd)))
        return stopped ? nil : values
    }

    /// One property, checked; nil when the list cannot be read further (reported).
    private mutating func readProperty(_ context: MQTTPropertyID.Context, what: String, seen: inout UInt64) -> MQTTProperty? {
        let propertyStart = offset
        guard let rawID = readVariableByteInteger("property identifier") else { return nil }
        let id = MQTTPropertyID(rawValue: rawID)
        guard let definition = id.definition else {
            // The value's length depends on the identifier: nothing after it can be read.
            error(.unknownProperty, "Unknown property identifier \(id.name); the rest of the \(what) is skipped",
                  "MQTT 5.0 §2.2.2.2", range: propertyStart..<offset)
            offset = regionEnd
            return nil
        }
        if !id.isAllowed(in: context) {
            error(.propertyNotAllowed, "The \(definition.name) property is not allowed in \(context.name)",
                  "MQTT 5.0 §2.2.2.2", range: propertyStart..<offset)
        }
        let repeatable = id == .userProperty || (id == .subscriptionIdentifier && context == .packet(.publish))
        var repeatedIllegally = false
        let bit: UInt64 = rawID < 64 ? 1 << UInt64(rawID) : 0
        if seen & bit != 0, !repeatable {
            repeatedIllegally = true
            error(.propertyRepeated, "The \(definition.name) property appears more than once",
                  context.propertiesSection, range: propertyStart..<offset)
        }
        seen |= bit
        guard let value = readPropertyValue(definition) else { return nil }
        let range = propertyStart..<offset
        if case .integer(let v) = value { checkValue(id, definition, v, context: context, range: range) }
        return MQTTProperty(id: id, value: value, range: range, isIllegalRepeat: repeatedIllegally)
    }

    /// One property's value, as its definition types it; nil when the read failed (reported).
    private mutating func readPropertyValue(_ definition: MQTTPropertyID.Definition) -> MQTTProperty.Value? {
        switch definition.type {
        case .byte:
            return readUInt8(definition.name).map { .integer(Int($0)) }
        case .twoByteInteger:
            return readUInt16(definition.name).map { .integer(Int($0)) }
        case .fourByteInteger:
            return readUInt32(definition.name).map { .integer(Int($0)) }
        case .variableByteInteger:
            return readVariableByteInteger(definition.name).map { .integer($0) }
        case .utf8String:
            return readString(definition.name).map { .string($0.value) }
        case .binaryData:
            return readBinary(definition.name).map { .binary($0.value) }
        case .utf8StringPair:
            guard let name = readString("user property name") else { return nil }
            guard let v = readString("user property value") else { return nil }
            return .pair(name: Ranged(name.value, name.range), value: Ranged(v.value, v.range))
        }
    }

    private mutating func checkValue(_ id: MQTTPropertyID, _ definition: MQTTPropertyID.Definition, _ v: Int,
                                     context: MQTTPropertyID.Context, range: Range<Int>) {
        if definition.isZeroOrOne, v > 1 {
            error(.propertyValue, "\(definition.name) is \(v); only 0 and 1 are allowed", context.propertiesSection, range: range)
        }
        switch id {
        case .receiveMaximum where v == 0:
            error(.propertyValue, "Receive Maximum is 0", context.propertiesSection, range: range)
        case .maximumPacketSize where v == 0:
            error(.propertyValue, "Maximum Packet Size is 0", context.propertiesSection, range: range)
        case .topicAlias where v == 0:
            error(.topicAliasZero, "Topic Alias is 0; it must be at least 1", "MQTT 5.0 §3.3.2.3.4", range: range)
        case .subscriptionIdentifier where v == 0:
            error(.propertyValue, "Subscription Identifier is 0; it must be 1 to 268,435,455",
                  context == .packet(.subscribe) ? "MQTT 5.0 §3.8.2.1.2" : "MQTT 5.0 §3.3.2.3.8", range: range)
        default:
            break
        }
    }
}
