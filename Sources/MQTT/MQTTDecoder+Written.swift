import Dissection

extension MQTTDecoder {
    /// The tree format a written fast path writes.
    enum WrittenFormat {
        /// The text tree (`DissectedPDU.textTree`), values shown with this style.
        case text(TextTree.Style)
        /// The JSON object of the fields (`DissectedPDU.jsonTree`).
        case json
    }

    /// The fast paths of `PDUDetail.text` and `.json`: a PUBLISH, PUBACK, PUBREC, PUBREL,
    /// PUBCOMP, PINGREQ or PINGRESP written straight into its text tree or JSON object and its
    /// summary, the same bytes the full decoder's field tree prints as, without building the
    /// tree; nil when the packet needs the full decoder. They take the packets the facts fast
    /// path takes (see `facts(of:version:)`: no problem to report, no session state changed) and
    /// leave the rest, which the full decoder then reports.
    ///
    /// `tree` and `line` are buffers reused from packet to packet (a connection's), emptied here.
    static func written(_ format: WrittenFormat, of frame: MQTTFrame, version: MQTTVersion, options: MQTTOptions,
                        tree: inout ByteSink, line: inout ByteSink) -> DissectedPDU? {
        guard frame.isComplete, frame.missingBytes == 0, frame.unseenBytes == 0, frame.unheldBytes == 0,
              frame.held.count >= 2 else { return nil }
        // MQTT 5.0 §1.5.5: a minimal remaining length that ends the frame exactly.
        guard case .value(let length, let n, true) = VariableByteInteger.decode(frame.held, at: 1),
              1 + n + length == frame.held.count else { return nil }
        tree.removeAll()
        line.removeAll()
        // Read from 0, wherever the frame's slice starts in its packet.
        let written = frame.held.withUnsafeBufferPointer { bytes -> Bool in
            let type = MQTTPacketType(rawValue: bytes[0] >> 4)
            let flags = bytes[0] & 0x0F
            switch type {
            case .publish:
                guard let publish = PlainPublish(bytes, body: 1 + n, flags: flags, version: version) else { return false }
                let previewLimit = max(0, options.payloadPreviewBytes)
                switch format {
                case .text(let style):
                    writePublishText(publish, bytes, length: length, version: version, style: style,
                                     previewLimit: previewLimit, into: &tree)
                case .json:
                    writePublishJSON(publish, bytes, length: length, version: version, previewLimit: previewLimit, into: &tree)
                }
                writePublishSummary(publish, bytes, flags: flags, into: &line)
                return true
            case .puback, .pubrec, .pubrel, .pubcomp:
                guard let id = bareAcknowledgementID(bytes, type: type, flags: flags, length: length, body: 1 + n) else { return false }
                switch format {
                case .text:
                    writeHeaderText(bytes[0], remainingLength: length, into: &tree)
                    writeIdentifierText(id, into: &tree)
                    if version == .v5 { tree.append(impliedSuccessText[Int(type.rawValue)]) }
                case .json:
                    writeHeaderJSON(bytes[0], remainingLength: length, into: &tree)
                    tree.literal(",\"packet_id\":")
                    tree.append(id)
                    if version == .v5 { tree.append(impliedSuccessJSON[Int(type.rawValue)]) }
                    tree.literal("}")
                }
                line.append(type.name)
                line.literal(" id=")
                line.append(id)
                return true
            case .pingreq, .pingresp:
                guard flags == 0, length == 0 else { return false }
                switch format {
                case .text:
                    writeHeaderText(bytes[0], remainingLength: 0, into: &tree)
                case .json:
                    writeHeaderJSON(bytes[0], remainingLength: 0, into: &tree)
                    tree.literal("}")
                }
                line.append(type.name)
                return true
            default:
                return false
            }
        }
        guard written else { return nil }
        // The summary and the tree go into the PDU's box as they were written: one copy, no
        // String made (the summary is printable ASCII here: names, numbers, a plain topic).
        let kind: DissectedPDU.WrittenTree
        switch format {
        case .text: kind = .text
        case .json: kind = .json
        }
        return DissectedPDU(protocolName: "mqtt", summaryBytes: line.bytes, writtenTree: tree.bytes, format: kind,
                            wireLength: frame.held.count)
    }

    /// The text fast path (`PDUDetail.text`): `written(.text(style), …)`.
    static func textTree(of frame: MQTTFrame, version: MQTTVersion, style: TextTree.Style, options: MQTTOptions,
                         tree: inout ByteSink, line: inout ByteSink) -> DissectedPDU? {
        written(.text(style), of: frame, version: version, options: options, tree: &tree, line: &line)
    }

    /// The JSON fast path (`PDUDetail.json`): `written(.json, …)`.
    static func jsonTree(of frame: MQTTFrame, version: MQTTVersion, options: MQTTOptions,
                         tree: inout ByteSink, line: inout ByteSink) -> DissectedPDU? {
        written(.json, of: frame, version: version, options: options, tree: &tree, line: &line)
    }

    // MARK: PUBLISH (MQTT 5.0 §3.3, 3.1.1 §3.3) of the plain kind the fast paths take

    private static func writePublishText(_ publish: PlainPublish, _ bytes: UnsafeBufferPointer<UInt8>, length: Int,
                                         version: MQTTVersion, style: TextTree.Style, previewLimit: Int,
                                         into tree: inout ByteSink) {
        let payload = UnsafeBufferPointer(rebasing: bytes[publish.payloadStart...])
        writeHeaderText(bytes[0], remainingLength: length, into: &tree)
        tree.literal("    Topic: ")
        tree.append(bytes: UnsafeBufferPointer(rebasing: bytes[publish.topic]))
        tree.literal("\n")
        if let id = publish.packetID { writeIdentifierText(id, into: &tree) }
        if version == .v5 { tree.literal("    Properties\n        Total Length: 0\n") }
        tree.literal("    Payload Length: ")
        tree.append(payload.count)
        tree.literal("\n    Message")
        TextTree.writePreview(of: payload, length: payload.count, limit: previewLimit, style: style, into: &tree)
        tree.literal("\n")
    }

    /// The fields' JSON object, as `JSONTree` writes the full decoder's fields.
    private static func writePublishJSON(_ publish: PlainPublish, _ bytes: UnsafeBufferPointer<UInt8>, length: Int,
                                         version: MQTTVersion, previewLimit: Int, into tree: inout ByteSink) {
        let payload = UnsafeBufferPointer(rebasing: bytes[publish.payloadStart...])
        writeHeaderJSON(bytes[0], remainingLength: length, into: &tree)
        tree.literal(",\"topic\":")
        JSONString.escape(bytes: UnsafeBufferPointer(rebasing: bytes[publish.topic]), into: &tree)
        if let id = publish.packetID {
            tree.literal(",\"packet_id\":")
            tree.append(id)
        }
        if version == .v5 { tree.literal(",\"properties\":{}") }
        tree.literal(",\"payload_length\":")
        tree.append(payload.count)
        tree.literal(",\"payload\":")
        // As `Preview.value` makes the field: text when the shown bytes are, else hex.
        let shown = UnsafeBufferPointer(rebasing: payload.prefix(previewLimit))
        if JSONString.writeText(shown, allowCutTail: shown.count < payload.count, into: &tree) == nil {
            tree.literal("\"")
            tree.appendHex(shown)
            tree.literal("\",\"payload_encoding\":\"hex\"")
        }
        tree.literal("}")
    }

    /// `PUBLISH id=N QoS q topic (n bytes)`, then `retain` and `dup`, as `parsePublish` words it.
    private static func writePublishSummary(_ publish: PlainPublish, _ bytes: UnsafeBufferPointer<UInt8>, flags: UInt8,
                                            into line: inout ByteSink) {
        line.literal("PUBLISH")
        if let id = publish.packetID {
            line.literal(" id=")
            line.append(id)
        }
        line.literal(" QoS ")
        line.append(publish.qos)
        line.literal(" ")
        line.append(bytes: UnsafeBufferPointer(rebasing: bytes[publish.topic]))
        line.literal(" (")
        line.append(bytes.count - publish.payloadStart)
        line.literal(" bytes)")
        if flags & 0x01 != 0 { line.literal(" retain") }
        if flags & 0x08 != 0 { line.literal(" dup") }
    }

    // MARK: Pieces every packet has

    /// The fixed header's lines (the type and its flags, bit by bit) and the remaining length.
    private static func writeHeaderText(_ first: UInt8, remainingLength: Int, into tree: inout ByteSink) {
        tree.append(fixedHeaderText[Int(first)])
        tree.literal("    Remaining Length: ")
        tree.append(remainingLength)
        tree.literal("\n")
    }

    private static func writeIdentifierText(_ id: Int, into tree: inout ByteSink) {
        tree.literal("    Message Identifier: ")
        tree.append(id)
        tree.literal("\n")
    }

    /// `{`, the fixed header's members (the type, and a PUBLISH's flags) and the remaining length.
    private static func writeHeaderJSON(_ first: UInt8, remainingLength: Int, into tree: inout ByteSink) {
        tree.literal("{")
        tree.append(fixedHeaderJSON[Int(first)])
        tree.literal(",\"remaining_length\":")
        tree.append(remainingLength)
    }

    /// The fixed-header field of each first byte as text lines and as JSON members: written from
    /// the full decoder's own fields, so the paths cannot word them differently. The text lines are
    /// immortal bytes: read for every packet, a String table cost a retain and a release a read.
    private static let fixedHeaderText = ImmortalTable((0...255).map { text([MQTTPacket.fixedHeaderField(UInt8($0))]) })
    private static let fixedHeaderJSON = ImmortalTable((0...255).map { json([MQTTPacket.fixedHeaderField(UInt8($0))], first: true) })

    /// A bare 5.0 acknowledgement's implied Success, by packet type, from the full decoder's field.
    private static let impliedSuccessText = ImmortalTable(MQTTPacket.impliedSuccess.map { text([$0]) })
    private static let impliedSuccessJSON = ImmortalTable(MQTTPacket.impliedSuccess.map { json([$0], first: false) })

    private static func text(_ fields: [Field]) -> String {
        var sink = ByteSink(capacity: 256)
        TextTree.write(fields, depth: 1, style: TextTree.Style(), into: &sink)
        return sink.take()
    }

    /// The members of `fields` without braces, with a leading comma unless `first`.
    private static func json(_ fields: [Field], first: Bool) -> String {
        var sink = ByteSink(capacity: 256)
        var isFirst = first
        JSONTree.writeMembers(fields, first: &isFirst, showSecrets: false, into: &sink)
        return sink.take()
    }
}
