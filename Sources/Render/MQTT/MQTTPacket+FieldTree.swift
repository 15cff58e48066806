import Dissection
import MQTT

/// The field tree and summary line of a typed packet: what text and JSON show, bit by bit.
///
/// A view of `MQTTPacket`: it reads the typed values and their byte ranges and decides nothing
/// about the bytes (the decoder found the problems). Lists show at most `maxListItems` entries
/// and the summary names at most `maxSummaryItems`.
extension MQTTPacket {
    /// At most this many entries of a list (topic filters, reason codes) are shown as fields; the
    /// rest are counted.
    static let maxListItems = 256
    /// At most this many list entries are named in the summary line.
    static let maxSummaryItems = 8

    /// The packet as a `DissectedPDU`: fields, summary, problems. `lineSink`: a buffer for summary
    /// lines, reused from packet to packet (a connection's); without one, each line gets its own.
    /// The PDU of the packet: its field tree and summary line, with `appending` (an analysis's
    /// fields) after the tree's own.
    /// `extra` appends the analyses' fields (`extraCount` of them at most) to the tree's own, in
    /// place: handed over as an array, they cost an array made and copied per PDU.
    func dissected(options: MQTTOptions, lineSink: ByteSink? = nil, extraCount: Int = 0,
                   appending extra: (inout [Field]) -> Void = { _ in }) -> DissectedPDU {
        var tree = FieldTreeBuilder(of: self, previewBytes: max(0, options.payloadPreviewBytes), textLines: options.textLines,
                                    lineSink: lineSink, extra: extraCount)
        var summary = tree.build(self)
        if isTruncated { summary += " [truncated]" }
        extra(&tree.fields)
        return DissectedPDU(protocolName: "mqtt", summary: summary, fields: tree.fields, problems: problems, wireLength: wireLength)
    }

    /// The field tree alone.
    public func fieldTree(options: MQTTOptions = MQTTOptions()) -> [Field] {
        dissected(options: options).fields
    }

    /// The summary line alone (`PUBLISH id=3 QoS 1 a/b (5 bytes)`).
    public func summary(options: MQTTOptions = MQTTOptions()) -> String {
        dissected(options: options).summary
    }
}

private struct FieldTreeBuilder {
    /// The packet's type and version. The packet itself is a parameter of `build`, borrowed: kept
    /// here, it was copied (its bytes and content retained, then released) for every PDU.
    let type: MQTTPacketType
    let version: MQTTVersion
    let previewBytes: Int
    /// Whether fields carry their text lines (`MQTTOptions.textLines`).
    let textLines: Bool
    let lineSink: ByteSink?
    var fields: [Field] = []

    init(of packet: MQTTPacket, previewBytes: Int, textLines: Bool, lineSink: ByteSink?, extra: Int = 0) {
        type = packet.type
        version = packet.version
        self.previewBytes = previewBytes
        self.textLines = textLines
        self.lineSink = lineSink
        // One allocation instead of three or four growths, of the size growth would reach: a
        // PUBLISH has up to seven root fields (nine with a topic alias), an acknowledgement four
        // (five in 5.0, with a reason code and properties). (More would cost memory: a segment can
        // hold thousands of small packets, all decoded before any is printed.)
        // The analyses' fields (`extra`, room for up to `extra` of them) come after the tree's own.
        fields.reserveCapacity((packet.type == .publish ? 8 : 4) + extra)
    }

    /// Builds `fields` of `packet`; returns the summary line.
    mutating func build(_ packet: MQTTPacket) -> String {
        switch packet.header {
        case .empty:
            return "(no bytes)"
        case .truncated:
            fields = [MQTTPacket.fixedHeaderField(packet.firstByte),
                      field("remaining_length", "Remaining Length", range: 1..<packet.bytes.count)]
            return "\(type.name) [truncated header]"
        case .remainingLengthTooLong:
            fields = [MQTTPacket.fixedHeaderField(packet.firstByte), field("remaining_length", "Remaining Length", range: 1..<5)]
            return "\(type.name) [malformed remaining length]"
        case .complete:
            break
        }
        fields.append(MQTTPacket.fixedHeaderField(packet.firstByte))
        if let length = packet.remainingLength {
            fields.append(field("remaining_length", "Remaining Length", .int(length.value), range: length.range))
        }
        let summary: String
        switch packet.content {
        case .connect(let c): summary = connect(c)
        case .connack(let c): summary = connack(c)
        case .publish(let p): summary = publish(p, of: packet)
        case .publishResponse(let r): summary = publishResponse(r)
        case .subscribe(let s): summary = subscribe(s)
        case .suback(let a): summary = suback(a)
        case .unsubscribe(let u): summary = unsubscribe(u)
        case .unsuback(let a): summary = unsuback(a)
        case .ping: summary = type.name
        case .disconnect(let r): summary = reasonPacket(r, defaultName: "")
        case .auth(let r): summary = reasonPacket(r, defaultName: " success")
        case .reserved(let body): summary = reserved(body, of: packet)
        case .none: summary = type.name
        }
        if let unparsed = packet.unparsed {
            fields.append(field("unparsed", "Unparsed bytes", .bytes(preview: Array(packet.slice(unparsed).prefix(64)), length: unparsed.count),
                                range: unparsed))
        }
        return summary
    }

    // MARK: Pieces

    /// A field, its text line made only when fields carry them (`textLines`).
    func field(_ key: FieldKey, _ label: String, _ value: FieldValue = .none, line: @autoclosure () -> String? = nil,
               range: Range<Int>? = nil, children: [Field] = [], isList: Bool = false, textOnly: Bool = false,
               jsonOnly: Bool = false) -> Field {
        Field(key, label, value, line: textLines ? line() : nil, range: range, children: children, isList: isList,
              textOnly: textOnly, jsonOnly: jsonOnly)
    }

    func preview(_ held: ArraySlice<UInt8>, length: Int) -> FieldValue {
        Preview.value(of: held, length: length, limit: previewBytes)
    }

    /// A buffer for a summary line: the lent one, emptied, or a new one of `capacity` bytes.
    func lineBuffer(capacity: Int) -> ByteSink {
        guard var sink = lineSink else { return ByteSink(capacity: capacity) }
        sink.removeAll()
        return sink
    }

    mutating func packetID(_ id: Ranged<Int>) {
        fields.append(field("packet_id", "Message Identifier", .int(id.value), range: id.range))
    }

    mutating func appendList(_ key: FieldKey, _ label: String, items: [Field], total: Int, range: Range<Int>) {
        fields.append(field(key, label, range: range, children: items, isList: true))
        if total > items.count {
            fields.append(field(FieldKey(checking: key.string + "_not_shown"), "Not shown", .int(total - items.count),
                                line: "… \(total - items.count) more entries not shown (\(total) in all)", range: range))
        }
    }

    /// Before a summary's list entry: a space before the first, a comma and space before the others.
    static func summaryPart(_ line: inout ByteSink, first: Bool) {
        if first { line.literal(" ") } else { line.literal(", ") }
    }

    /// After a summary's list of `parts` entries: `, … (N in all)` when the list named fewer
    /// than its `total` (nothing when it named none).
    static func summaryListEnd(_ line: inout ByteSink, parts: Int, total: Int) {
        guard parts > 0, total > parts else { return }
        line.literal(", … (")
        line.append(total)
        line.literal(" in all)")
    }

    /// A property list as one field: the length, then each property; User Properties (and a
    /// PUBLISH's Subscription Identifiers) gathered in a list where the first one stood.
    mutating func properties(_ list: MQTTProperties?, key: FieldKey = "properties", label: String = "Properties",
                             inPublish: Bool = false) {
        guard let list else { return }
        var children = [field("length", "Total Length", .int(list.length.value), range: list.length.range, textOnly: true)]
        var userPropertiesIndex: Int?
        var userProperties: [Field] = []
        var subscriptionIdentifiersIndex: Int?
        var subscriptionIdentifiers: [Field] = []
        for property in list.entries {
            let id = property.id
            let name = id.definition?.name ?? id.name
            let propertyKey = id.definition?.key ?? "property"
            switch property.value {
            case .pair(let pairName, let pairValue):
                if userPropertiesIndex == nil {
                    userPropertiesIndex = children.count
                    children.append(field(propertyKey, "User Properties"))
                }
                userProperties.append(field("user_property", "User Property", line: "User Property: \(pairName.value) = \(pairValue.value)",
                                            range: property.range,
                                            children: [field("name", "Name", .string(pairName.value), range: pairName.range),
                                                       field("value", "Value", .string(pairValue.value), range: pairValue.range)]))
                continue
            default:
                break
            }
            let value: FieldValue
            switch property.value {
            case .integer(let v): value = .int(v)
            case .string(let s): value = .string(s)
            case .binary(let b): value = .bytes(preview: Array(b.prefix(previewBytes)), length: b.count)
            case .pair: value = .none
            }
            if id == .subscriptionIdentifier, inPublish {
                if subscriptionIdentifiersIndex == nil {
                    subscriptionIdentifiersIndex = children.count
                    children.append(field("subscription_identifiers", "Subscription Identifiers"))
                }
                subscriptionIdentifiers.append(field("subscription_identifier", name, value, range: property.range))
            } else {
                // A repeated property stays in the text tree; JSON keeps the first (keys are unique).
                children.append(field(propertyKey, name, value, range: property.range, textOnly: property.isIllegalRepeat))
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
        fields.append(field(key, label, range: list.range, children: children))
    }

    /// A reason code with its name beside it (JSON: `reason_code`, `reason`).
    func reasonCodeField(_ value: MQTTReasonCodeValue) -> Field {
        // The implied Success of a bare acknowledgement is the same field every time: made once per type.
        if value.isImplied, value.code == .success { return MQTTPacket.impliedSuccess[Int(type.rawValue & 0x0F)] }
        return MQTTPacket.makeReasonCodeField(value.code, type: type, range: value.range, implied: value.isImplied)
    }

    /// ` not authorized (0x87)` for a reason other than success, else empty.
    func reasonSuffix(_ code: MQTTReasonCode) -> String {
        code.rawValue == 0 ? "" : " \(code.name(in: type).lowercased()) (0x\(hexByte(code.rawValue)))"
    }

    // MARK: Packets

    mutating func connect(_ c: MQTTConnect) -> String {
        // The summary, written as the fields are made (interpolated, it cost thousands of
        // instructions a CONNECT: callgrind, fleet capture).
        var summary = lineBuffer(capacity: 96)
        summary.literal("CONNECT")
        if let name = c.protocolName {
            fields.append(field("protocol_name", "Protocol Name", .string(name.value), range: name.range))
        }
        if let level = c.level {
            let announced = c.announcedVersion
            fields.append(field("protocol_version", "Version", .int(Int(level.value)),
                                line: "Version: MQTT v\(announced?.name ?? "?") (\(level.value))", range: level.range))
            if let announced {
                fields.append(field("version", "Version Name", .string(announced.name), range: level.range, jsonOnly: true))
            }
            summary.literal(" v")
            if let announced {
                summary.append(announced.name)
            } else {
                summary.literal("level-")
                summary.append(Int(level.value))
            }
        }
        if let flags = c.flags {
            let f = flags.value
            let cleanKey: FieldKey = version == .v5 ? "clean_start" : "clean_session"
            let cleanLabel = version == .v5 ? "Clean Start Flag" : "Clean Session Flag"
            func bit(_ key: FieldKey, _ label: String, _ value: Bool, _ mask: UInt8) -> Field {
                field(key, label, .bool(value), line: BitLine.line(f, mask: mask, "\(label): \(BitLine.set(value))"), range: flags.range)
            }
            let willQoS = c.willQoS
            fields.append(field("connect_flags", "Connect Flags", .int(Int(f)), line: "Connect Flags: 0x\(hexByte(f))",
                                range: flags.range, children: [
                                    bit("username_flag", "User Name Flag", c.usernameFlag, 0x80),
                                    bit("password_flag", "Password Flag", c.passwordFlag, 0x40),
                                    bit("will_retain", "Will Retain", c.willRetain, 0x20),
                                    field("will_qos", "Will QoS", .int(willQoS),
                                          line: BitLine.line(f, mask: 0x18, "QoS Level: \(BitLine.qosName(willQoS)) (\(willQoS))"), range: flags.range),
                                    bit("will_flag", "Will Flag", c.willFlag, 0x04),
                                    bit(cleanKey, cleanLabel, c.cleanStart, 0x02),
                                    bit("reserved_flag", "(Reserved)", c.reservedFlag, 0x01),
                                ]))
        }
        if let keepAlive = c.keepAlive {
            fields.append(field("keep_alive", "Keep Alive", .int(Int(keepAlive.value)), range: keepAlive.range))
        }
        properties(c.properties)
        if let clientID = c.clientID {
            fields.append(field("client_id", "Client ID", .string(clientID.value), range: clientID.range))
            summary.literal(" client=")
            summary.append(summaryTopic(clientID.value))
            if c.cleanStart { summary.literal(" clean") }
            summary.literal(" keep-alive=")
            summary.append(Int(c.keepAlive?.value ?? 0))
        }
        properties(c.willProperties, key: "will_properties", label: "Will Properties")
        if let willTopic = c.willTopic {
            fields.append(field("will_topic", "Will Topic", .string(willTopic.value), range: willTopic.range))
        }
        if let willPayload = c.willPayload {
            fields.append(field("will_payload", "Will Message", preview(willPayload.value, length: willPayload.value.count),
                                range: willPayload.range))
            if let willTopic = c.willTopic {
                summary.literal(" will=")
                summary.append(summaryTopic(willTopic.value))
            }
        }
        if let user = c.username {
            fields.append(field("username", "User Name", .string(user.value), range: user.range))
            summary.literal(" user=")
            summary.append(user.value)
        }
        if let password = c.password {
            fields.append(field("password", "Password", .secret(secretText(password.value)), range: password.range))
        }
        return summary.take()
    }

    mutating func connack(_ c: MQTTConnack) -> String {
        var summary = lineBuffer(capacity: 64)
        summary.literal("CONNACK")
        if let flags = c.flags {
            let f = flags.value
            if version == .v3_1 {
                // MQTT 3.1: the first byte is reserved (once "topic name compression").
                fields.append(field("reserved", "Reserved", .int(Int(f)), range: flags.range, textOnly: true))
            } else {
                let sessionPresent = f & 0x01 != 0
                fields.append(field("acknowledge_flags", "Acknowledge Flags", .int(Int(f)), line: "Acknowledge Flags: 0x\(hexByte(f))",
                                    range: flags.range, children: [
                                        field("reserved", "Reserved", .int(Int(f >> 1)),
                                              line: BitLine.line(f, mask: 0xFE, "Reserved: \(f >> 1 == 0 ? "Not set" : "0x\(hexByte(f >> 1))")"),
                                              range: flags.range, textOnly: true),
                                        field("session_present", "Session Present", .bool(sessionPresent),
                                              line: BitLine.line(f, mask: 0x01, "Session Present: \(BitLine.set(sessionPresent))"), range: flags.range),
                                    ]))
            }
        }
        guard let code = c.code else { return summary.take() }
        if version == .v5 {
            let reason = MQTTReasonCode(rawValue: code.value)
            fields.append(reasonCodeField(MQTTReasonCodeValue(code: reason, range: code.range)))
            if code.value == 0 {
                summary.literal(" accepted")
            } else {
                summary.literal(reason.isFailure ? " refused: " : " ")
                summary.append(reason.name(in: .connack).lowercased())
                summary.literal(" (0x")
                summary.append(hexByte(code.value))
                summary.literal(")")
            }
        } else {
            let rc = MQTTConnectReturnCode(rawValue: code.value)
            // JSON: `reason_code`, as in 5.0 and in SUBACK's `reason_codes` (the text keeps 3.x's name).
            fields.append(field("reason_code", "Return Code", .int(Int(code.value)), line: "Return Code: \(rc.name) (\(code.value))",
                                range: code.range, children: [field("reason", "Reason", .string(rc.name), range: code.range, jsonOnly: true)]))
            if code.value == 0 {
                summary.literal(" accepted")
            } else {
                let short = rc.knownName.map { String($0.dropFirst("Connection Refused: ".count)) } ?? "unknown"
                summary.literal(" refused: ")
                summary.append(short)
                summary.literal(" (0x")
                summary.append(hexByte(code.value))
                summary.literal(")")
            }
        }
        if c.sessionPresent(in: version) { summary.literal(" session-present") }
        properties(c.properties)
        return summary.take()
    }

    mutating func publish(_ p: MQTTPublish, of packet: MQTTPacket) -> String {
        var extras = ""
        if p.retain { extras += " retain" }
        if p.dup { extras += " dup" }
        guard let topic = p.topic else { return "PUBLISH QoS \(p.qos)\(extras)" }
        var topicField = field("topic", "Topic", .string(topic.value), range: topic.range)
        if case .resolved(let known) = p.alias, let alias = p.topicAlias {
            // `topic` is the topic the message is published to, so filters on it find aliased
            // PUBLISHes too (tshark does the same); the wire carried an empty string.
            topicField.value = .string(known)
            topicField.line = "Topic: \(known) [from topic alias \(alias.value); empty on the wire]"
        }
        fields.append(topicField)
        if let id = p.packetID { packetID(id) }
        properties(p.properties, inPublish: true)
        if let alias = p.topicAlias {
            fields.append(field("topic_alias", "Topic Alias", .int(alias.value), range: alias.range, jsonOnly: true))
            if case .resolved = p.alias {
                fields.append(field("topic_from_alias", "Topic From Alias", .bool(true), range: alias.range, jsonOnly: true))
            }
        }
        guard let payload = p.payload else {
            let head = p.packetID.map { "PUBLISH id=\($0.value) QoS \(p.qos)" } ?? "PUBLISH QoS \(p.qos)"
            return "\(head) \(summaryTopic(topic.value))\(extras)"
        }
        fields.append(field("payload_length", "Payload Length", .int(payload.length),
                            range: payload.start..<(payload.start + payload.length)))
        let held = packet.slice(payload.start..<(payload.start + payload.heldCount))
        fields.append(field("payload", "Message", preview(held, length: payload.length),
                            range: payload.start..<(payload.start + payload.heldCount)))
        let shownTopic: String
        switch p.alias {
        case .none: shownTopic = summaryTopic(topic.value)
        case .set: shownTopic = "\(summaryTopic(topic.value)) alias=\(p.topicAlias?.value ?? 0)"
        case .resolved(let known): shownTopic = "\(summaryTopic(known)) (alias \(p.topicAlias?.value ?? 0))"
        case .unknown: shownTopic = "alias=\(p.topicAlias?.value ?? 0) (unknown)"
        }
        // `PUBLISH id=N QoS q topic (n bytes)extras`, built once (this runs for every PUBLISH).
        var line = lineBuffer(capacity: 80)
        line.literal("PUBLISH")
        if let id = p.packetID {
            line.literal(" id=")
            line.append(id.value)
        }
        line.literal(" QoS ")
        line.append(p.qos)
        line.literal(" ")
        line.append(shownTopic)
        line.literal(" (")
        line.append(payload.length)
        line.literal(" bytes)")
        line.append(extras)
        return line.take()
    }

    mutating func publishResponse(_ r: MQTTPublishResponse) -> String {
        guard let id = r.packetID else { return type.name }
        packetID(id)
        var line = lineBuffer(capacity: 32)
        line.append(type.name)
        line.literal(" id=")
        line.append(id.value)
        var summary = line.take()
        if let reason = r.reasonCode {
            fields.append(reasonCodeField(reason))
            if !reason.isImplied { summary += reasonSuffix(reason.code) }
        }
        properties(r.properties)
        return summary
    }

    mutating func subscribe(_ s: MQTTSubscribe) -> String {
        guard let id = s.packetID else { return type.name }
        packetID(id)
        // The summary, written as the entries are read: `SUBSCRIBE id=N filter QoS q, …`.
        var summary = lineBuffer(capacity: 96)
        summary.literal("SUBSCRIBE id=")
        summary.append(id.value)
        properties(s.properties)
        guard let list = s.subscriptions else { return summary.take() }
        var topics: [Field] = []
        var parts = 0
        for entry in list.entries {
            let o = entry.options.value
            let optionsRange = entry.options.range
            let qos = entry.qos
            var children = [field("filter", "Topic", .string(entry.filter.value), range: entry.filter.range)]
            var optionBits = [field("qos", "QoS", .int(qos),
                                    line: BitLine.line(o, mask: 0x03, "QoS: \(BitLine.qosName(qos)) (\(qos))"), range: optionsRange)]
            if version == .v5 {
                let noLocal = entry.noLocal
                let retainAsPublished = entry.retainAsPublished
                let retainHandling = entry.retainHandling
                optionBits += [
                    field("no_local", "No Local", .bool(noLocal), line: BitLine.line(o, mask: 0x04, "No Local: \(BitLine.set(noLocal))"), range: optionsRange),
                    field("retain_as_published", "Retain As Published", .bool(retainAsPublished),
                          line: BitLine.line(o, mask: 0x08, "Retain As Published: \(BitLine.set(retainAsPublished))"), range: optionsRange),
                    field("retain_handling", "Retain Handling", .int(retainHandling),
                          line: BitLine.line(o, mask: 0x30, "Retain Handling: \(Self.retainHandlingName(retainHandling)) (\(retainHandling))"),
                          range: optionsRange),
                    field("reserved", "Reserved", .int(Int(o >> 6)), line: BitLine.line(o, mask: 0xC0, "Reserved: \(o >> 6)"),
                          range: optionsRange, textOnly: true),
                ]
            } else {
                optionBits.append(field("reserved", "Reserved", .int(Int(o >> 2)), line: BitLine.line(o, mask: 0xFC, "Reserved: \(o >> 2)"),
                                        range: optionsRange, textOnly: true))
            }
            children.append(field("options", "Subscription Options", .int(Int(o)), line: "Subscription Options: 0x\(hexByte(o))",
                                  range: optionsRange, children: optionBits))
            if topics.count < MQTTPacket.maxListItems {
                topics.append(field("topic", "Topic Filter", line: "Topic Filter: \(entry.filter.value) (QoS \(qos))",
                                    range: entry.range, children: children))
            } else if parts >= MQTTPacket.maxSummaryItems {
                break
            }
            if parts < MQTTPacket.maxSummaryItems {
                Self.summaryPart(&summary, first: parts == 0)
                summary.append(summaryTopic(entry.filter.value))
                summary.literal(" QoS ")
                summary.append(qos)
                parts += 1
            }
        }
        let total = list.entries.count
        appendList("topics", "Topics", items: topics, total: total, range: list.range)
        Self.summaryListEnd(&summary, parts: parts, total: total)
        return summary.take()
    }

    static func retainHandlingName(_ v: Int) -> String {
        switch v {
        case 0: return "Send retained messages at subscribe"
        case 1: return "Send retained messages at new subscribe only"
        case 2: return "Do not send retained messages"
        default: return "Reserved"
        }
    }

    mutating func unsubscribe(_ u: MQTTUnsubscribe) -> String {
        guard let id = u.packetID else { return type.name }
        packetID(id)
        var summary = lineBuffer(capacity: 96)
        summary.literal("UNSUBSCRIBE id=")
        summary.append(id.value)
        properties(u.properties)
        guard let list = u.filters else { return summary.take() }
        var topics: [Field] = []
        var parts = 0
        for filter in list.entries {
            if topics.count < MQTTPacket.maxListItems {
                topics.append(field("topic", "Topic Filter", line: "Topic Filter: \(filter.value)", range: filter.range,
                                    children: [field("filter", "Topic", .string(filter.value), range: filter.range)]))
            } else if parts >= MQTTPacket.maxSummaryItems {
                break
            }
            if parts < MQTTPacket.maxSummaryItems {
                Self.summaryPart(&summary, first: parts == 0)
                summary.append(summaryTopic(filter.value))
                parts += 1
            }
        }
        let total = list.entries.count
        appendList("topics", "Topics", items: topics, total: total, range: list.range)
        Self.summaryListEnd(&summary, parts: parts, total: total)
        return summary.take()
    }

    mutating func suback(_ a: MQTTSubscriptionAck) -> String {
        let isV5 = version == .v5
        return subscriptionAck(a, name: { code in
            if isV5 { return MQTTReasonCode(rawValue: code).name(in: .suback) }
            switch code {
            case 0, 1, 2: return "Granted QoS \(code)"
            case 0x80: return "Failure"
            default: return "0x\(hexByte(code)) (unknown)"
            }
        }, summaryName: { code in
            if code <= 2 { return "granted QoS \(code)" }
            if isV5 { return "\(MQTTReasonCode(rawValue: code).name(in: .suback).lowercased()) (0x\(hexByte(code)))" }
            return code == 0x80 ? "failure (0x80)" : "0x\(hexByte(code)) (unknown)"
        })
    }

    mutating func unsuback(_ a: MQTTSubscriptionAck) -> String {
        subscriptionAck(a, name: { MQTTReasonCode(rawValue: $0).name(in: .unsuback) }, summaryName: { code in
            code == 0 ? "success" : "\(MQTTReasonCode(rawValue: code).name(in: .unsuback).lowercased()) (0x\(hexByte(code)))"
        })
    }

    /// SUBACK and UNSUBACK: the identifier, properties, then the list of codes.
    private mutating func subscriptionAck(_ a: MQTTSubscriptionAck, name: (UInt8) -> String, summaryName: (UInt8) -> String) -> String {
        guard let id = a.packetID else { return type.name }
        packetID(id)
        var summary = lineBuffer(capacity: 96)
        summary.append(type.name)
        summary.literal(" id=")
        summary.append(id.value)
        properties(a.properties)
        guard let list = a.codes else { return summary.take() }
        var codes: [Field] = []
        var parts = 0
        for code in list.entries {
            if codes.count < MQTTPacket.maxListItems {
                let named = name(code.value)
                codes.append(field("reason_code", "Reason Code", line: "Reason Code: \(named) (0x\(hexByte(code.value)))", range: code.range,
                                   children: [field("code", "Code", .int(Int(code.value)), range: code.range, jsonOnly: true),
                                              field("reason", "Reason", .string(named), range: code.range, jsonOnly: true)]))
            } else if parts >= MQTTPacket.maxSummaryItems {
                break
            }
            if parts < MQTTPacket.maxSummaryItems {
                Self.summaryPart(&summary, first: parts == 0)
                summary.append(summaryName(code.value))
                parts += 1
            }
        }
        let total = list.entries.count
        appendList("reason_codes", version == .v5 ? "Reason Codes" : "Return Codes", items: codes, total: total, range: list.range)
        if total > parts {
            Self.summaryPart(&summary, first: parts == 0)
            summary.literal("… (")
            summary.append(total)
            summary.literal(" in all)")
        }
        return summary.take()
    }

    /// DISCONNECT and AUTH.
    mutating func reasonPacket(_ r: MQTTReasonPacket, defaultName: String) -> String {
        guard let reason = r.reasonCode else { return type.name }
        fields.append(reasonCodeField(reason))
        properties(r.properties)
        if reason.isImplied { return type.name + defaultName }
        return type.name + (reason.code.rawValue == 0 ? defaultName : reasonSuffix(reason.code))
    }

    mutating func reserved(_ body: Range<Int>?, of packet: MQTTPacket) -> String {
        if let body {
            let held = packet.slice(body)
            fields.append(field("body", "Body", .bytes(preview: Array(held.prefix(previewBytes)), length: body.count),
                                range: body.lowerBound..<(body.lowerBound + held.count)))
        }
        return "\(type.name) (type \(type.rawValue), reserved)"
    }
}

extension MQTTPacket {
    /// The fixed-header field of every first byte: the type, then DUP/QoS/RETAIN for PUBLISH or
    /// the reserved flags, bit by bit. The same for every packet that starts with that byte, so
    /// made once, bit lines included (whatever `MQTTOptions.textLines` says).
    private static let fixedHeaderFields: [Field] = (0...255).map { makeFixedHeaderField(UInt8($0)) }

    static func fixedHeaderField(_ first: UInt8) -> Field { fixedHeaderFields[Int(first)] }

    private static func makeFixedHeaderField(_ first: UInt8) -> Field {
        let type = MQTTPacketType(rawValue: first >> 4)
        let flags = first & 0x0F
        var children: [Field] = []
        if type == .publish {
            let dup = flags & 0x08 != 0
            let qos = Int((flags >> 1) & 0b11)
            let retain = flags & 0x01 != 0
            children = [
                Field("dup", "DUP Flag", .bool(dup), range: 0..<1),
                Field("qos", "QoS Level", .int(qos), range: 0..<1),
                Field("retain", "Retain", .bool(retain), range: 0..<1),
            ]
            children[0].line = BitLine.line(first, mask: 0x08, "DUP Flag: \(BitLine.set(dup))")
            children[1].line = BitLine.line(first, mask: 0x06, "QoS Level: \(BitLine.qosName(qos)) (\(qos))")
            children[2].line = BitLine.line(first, mask: 0x01, "Retain: \(BitLine.set(retain))")
        } else {
            children = [Field("reserved_flags", "Reserved", .int(Int(flags)), range: 0..<1, textOnly: true)]
            children[0].line = BitLine.line(first, mask: 0x0F, "Reserved: 0x\(hexByte(flags))")
        }
        var field = Field("type", "Message Type", .string(type.name), range: 0..<1, children: children)
        field.line = BitLine.line(first, mask: 0xF0, "Message Type: \(type.longName) (\(type.rawValue))")
        return field
    }

    /// Implied-Success fields by packet type, text lines included whatever `MQTTOptions.textLines` says.
    static let impliedSuccess: [Field] = (0...15).map { raw in
        let type = MQTTPacketType(rawValue: UInt8(raw))
        var field = makeReasonCodeField(.success, type: type, range: nil, implied: true)
        field.line = reasonLine(.success, type: type, implied: true)
        return field
    }

    private static func reasonLine(_ code: MQTTReasonCode, type: MQTTPacketType, implied: Bool) -> String {
        "Reason Code: \(code.name(in: type)) (0x\(hexByte(code.rawValue))\(implied ? ", implied: the packet omits it" : ""))"
    }

    static func makeReasonCodeField(_ code: MQTTReasonCode, type: MQTTPacketType, range: Range<Int>?, implied: Bool) -> Field {
        let name = code.name(in: type)
        return Field("reason_code", "Reason Code", .int(Int(code.rawValue)), line: reasonLine(code, type: type, implied: implied),
                     range: range, children: [Field("reason", "Reason", .string(name), range: range, jsonOnly: true)])
    }
}
