import Dissection

/// Property values a packet's parser acts on (the field tree has them all).
struct PropertyValues {
    var topicAlias: (value: Int, range: Range<Int>)?
    var topicAliasMaximum: Int?
    var payloadFormatIndicator: Int?
    var reasonString: String?
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
    /// against the packets that may carry it and against repetition; appends one field.
    mutating func properties(_ context: MQTTPropertyID.Context, key: String = "properties",
                             label: String = "Properties") -> PropertyValues? {
        let start = offset
        // Only messages name the list: lowercased when one is made.
        var what: String { label.lowercased() }
        guard let length = readVariableByteInteger("\(what) length") else { return nil }
        var children = [Field("length", "Total Length", .int(length), range: start..<offset, textOnly: true)]
        if length == 0 {
            // No properties (most packets): the same field as below, without its bookkeeping.
            fields.append(Field(key, label, range: start..<offset, children: children))
            return PropertyValues()
        }
        var values = PropertyValues()
        let outerRegion = region
        let outerEnd = regionEnd
        let declaredEnd = offset &+ length
        if declaredEnd > outerEnd {
            error("property-length-too-long",
                  "The \(what) length (\(length)) runs past the end of the packet by \(declaredEnd - outerEnd) bytes",
                  "MQTT 5.0 §2.2.2.1", range: start..<offset)
        }
        region = .properties(label)
        regionEnd = min(declaredEnd, outerEnd)
        var seen = Set<Int>()
        var userPropertiesIndex: Int?
        var userProperties: [Field] = []
        var subscriptionIdentifiersIndex: Int?
        var subscriptionIdentifiers: [Field] = []

        while offset < regionEnd, !stopped {
            let propertyStart = offset
            guard let rawID = readVariableByteInteger("property identifier") else { break }
            let id = MQTTPropertyID(rawValue: rawID)
            guard let definition = id.definition else {
                // The value's length depends on the identifier: nothing after it can be read.
                error("unknown-property", "Unknown property identifier \(id.name); the rest of the \(what) is skipped",
                      "MQTT 5.0 §2.2.2.2", range: propertyStart..<offset)
                offset = regionEnd
                break
            }
            if !id.isAllowed(in: context) {
                error("property-not-allowed", "The \(definition.name) property is not allowed in \(context.name)",
                      "MQTT 5.0 §2.2.2.2", range: propertyStart..<offset)
            }
            let repeatable = id == .userProperty || (id == .subscriptionIdentifier && context == .packet(.publish))
            var repeatedIllegally = false
            if seen.contains(rawID), !repeatable {
                repeatedIllegally = true
                error("property-repeated", "The \(definition.name) property appears more than once",
                      context.propertiesSection, range: propertyStart..<offset)
            }
            seen.insert(rawID)

            var value: FieldValue = .none
            var intValue: Int?
            var pairFields: [Field] = []
            switch definition.type {
            case .byte:
                guard let v = readUInt8(definition.name) else { break }
                intValue = Int(v)
            case .twoByteInteger:
                guard let v = readUInt16(definition.name) else { break }
                intValue = Int(v)
            case .fourByteInteger:
                guard let v = readUInt32(definition.name) else { break }
                intValue = Int(v)
            case .variableByteInteger:
                guard let v = readVariableByteInteger(definition.name) else { break }
                intValue = v
            case .utf8String:
                guard let s = readString(definition.name) else { break }
                value = .string(s.value)
                if id == .reasonString { values.reasonString = s.value }
            case .binaryData:
                guard let b = readBinary(definition.name) else { break }
                value = .bytes(preview: Array(b.value.prefix(max(0, options.payloadPreviewBytes))), length: b.value.count)
            case .utf8StringPair:
                guard let name = readString("user property name") else { break }
                guard let v = readString("user property value") else { break }
                pairFields = [Field("name", "Name", .string(name.value), range: name.range),
                              Field("value", "Value", .string(v.value), range: v.range)]
            }
            let range = propertyStart..<offset
            if let intValue { value = .int(intValue) }
            if value == .none, pairFields.isEmpty { break }  // the read failed and was reported

            if let v = intValue { checkValue(id, definition, v, context: context, range: range) }
            switch id {
            case .topicAlias where !repeatedIllegally: values.topicAlias = intValue.map { ($0, range) }
            case .topicAliasMaximum where !repeatedIllegally: values.topicAliasMaximum = intValue
            case .payloadFormatIndicator where !repeatedIllegally: values.payloadFormatIndicator = intValue
            default: break
            }

            if id == .userProperty {
                if userPropertiesIndex == nil {
                    userPropertiesIndex = children.count
                    children.append(Field(definition.key, "User Properties"))
                }
                let name = pairFields.first?.value.stringValue ?? ""
                let v = pairFields.last?.value.stringValue ?? ""
                userProperties.append(Field("user_property", "User Property", line: "User Property: \(name) = \(v)",
                                            range: range, children: pairFields))
            } else if id == .subscriptionIdentifier, context == .packet(.publish) {
                if subscriptionIdentifiersIndex == nil {
                    subscriptionIdentifiersIndex = children.count
                    children.append(Field("subscription_identifiers", "Subscription Identifiers"))
                }
                subscriptionIdentifiers.append(Field("subscription_identifier", definition.name, value, range: range))
            } else {
                // A repeated property stays in the text tree; JSON keeps the first (keys are unique).
                children.append(Field(definition.key, definition.name, value, range: range, textOnly: repeatedIllegally))
            }
        }

        if let i = userPropertiesIndex {
            children[i].children = userProperties
            children[i].isList = true
            children[i].range = userProperties.first?.range
        }
        if let i = subscriptionIdentifiersIndex {
            children[i].children = subscriptionIdentifiers
            children[i].isList = true
            children[i].range = subscriptionIdentifiers.first?.range
        }
        let propertiesEnd = regionEnd
        region = outerRegion
        regionEnd = outerEnd
        if !ranOutOfHeldBytes, !ranPastContent, offset < propertiesEnd {
            offset = propertiesEnd  // a property ran past the property length; go on after it
        }
        fields.append(Field(key, label, range: start..<max(start, min(offset, heldEnd)), children: children))
        return stopped ? nil : values
    }

    private mutating func checkValue(_ id: MQTTPropertyID, _ definition: MQTTPropertyID.Definition, _ v: Int,
                                     context: MQTTPropertyID.Context, range: Range<Int>) {
        if definition.isZeroOrOne, v > 1 {
            error("property-value", "\(definition.name) is \(v); only 0 and 1 are allowed", context.propertiesSection, range: range)
        }
        switch id {
        case .receiveMaximum where v == 0:
            error("property-value", "Receive Maximum is 0", context.propertiesSection, range: range)
        case .maximumPacketSize where v == 0:
            error("property-value", "Maximum Packet Size is 0", context.propertiesSection, range: range)
        case .topicAlias where v == 0:
            error("topic-alias-zero", "Topic Alias is 0; it must be at least 1", "MQTT 5.0 §3.3.2.3.4", range: range)
        case .subscriptionIdentifier where v == 0:
            error("property-value", "Subscription Identifier is 0; it must be 1 to 268,435,455",
                  context == .packet(.subscribe) ? "MQTT 5.0 §3.8.2.1.2" : "MQTT 5.0 §3.3.2.3.8", range: range)
        default:
            break
        }
    }
}
