import Dissection

extension MQTTDecoder {
    /// The fast path of `PDUDetail.text`: a PUBLISH, PUBACK, PUBREC, PUBREL, PUBCOMP, PINGREQ or
    /// PINGRESP written straight into its text tree (`DissectedPDU.textTree`) and summary, the
    /// same bytes the full decoder's field tree prints as, without building the tree; nil when
    /// the packet needs the full decoder. It takes the packets the facts fast path takes (see
    /// `facts(of:version:)`: no problem to report, no session state changed) and leaves the rest,
    /// which the full decoder then reports.
    ///
    /// `tree` and `line` are buffers reused from packet to packet (a connection's), emptied here.
    static func textTree(of frame: MQTTFrame, version: MQTTVersion, style: TextTree.Style, options: MQTTOptions,
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
                return writePublish(bytes, length: length, body: 1 + n, flags: flags, version: version, style: style,
                                    previewLimit: max(0, options.payloadPreviewBytes), tree: &tree, line: &line)
            case .puback, .pubrec, .pubrel, .pubcomp:
                guard let id = bareAcknowledgementID(bytes, type: type, flags: flags, length: length, body: 1 + n) else { return false }
                writeHeader(bytes[0], remainingLength: length, into: &tree)
                writeIdentifier(id, into: &tree)
                if version == .v5 { tree.append(impliedSuccessText[Int(type.rawValue)]) }
                line.append(type.name)
                line.literal(" id=")
                line.append(id)
                return true
            case .pingreq, .pingresp:
                guard flags == 0, length == 0 else { return false }
                writeHeader(bytes[0], remainingLength: 0, into: &tree)
                line.append(type.name)
                return true
            default:
                return false
            }
        }
        guard written else { return nil }
        return DissectedPDU(protocolName: "mqtt", summary: line.take(), fields: [], wireLength: frame.held.count,
                            textTree: Array(tree.bytes))
    }

    /// PUBLISH (MQTT 5.0 §3.3, 3.1.1 §3.3) of the plain kind the fast paths take (`PlainPublish`).
    private static func writePublish(_ bytes: UnsafeBufferPointer<UInt8>, length: Int, body: Int, flags: UInt8,
                                     version: MQTTVersion, style: TextTree.Style, previewLimit: Int,
                                     tree: inout ByteSink, line: inout ByteSink) -> Bool {
        guard let publish = PlainPublish(bytes, body: body, flags: flags, version: version) else { return false }
        let qos = publish.qos, id = publish.packetID
        let topic = UnsafeBufferPointer(rebasing: bytes[publish.topic])
        let payload = UnsafeBufferPointer(rebasing: bytes[publish.payloadStart...])

        writeHeader(bytes[0], remainingLength: length, into: &tree)
        tree.literal("    Topic: ")
        tree.append(bytes: topic)
        tree.literal("\n")
        if let id { writeIdentifier(id, into: &tree) }
        if version == .v5 { tree.literal("    Properties\n        Total Length: 0\n") }
        tree.literal("    Payload Length: ")
        tree.append(payload.count)
        tree.literal("\n    Message")
        TextTree.writePreview(of: payload, length: payload.count, limit: previewLimit, style: style, into: &tree)
        tree.literal("\n")

        // `PUBLISH id=N QoS q topic (n bytes)`, then `retain` and `dup`, as `parsePublish` words it.
        line.literal("PUBLISH")
        if let id {
            line.literal(" id=")
            line.append(id)
        }
        line.literal(" QoS ")
        line.append(qos)
        line.literal(" ")
        line.append(bytes: topic)
        line.literal(" (")
        line.append(payload.count)
        line.literal(" bytes)")
        if flags & 0x01 != 0 { line.literal(" retain") }
        if flags & 0x08 != 0 { line.literal(" dup") }
        return true
    }

    /// The fixed header's lines (the type and its flags, bit by bit) and the remaining length.
    private static func writeHeader(_ first: UInt8, remainingLength: Int, into tree: inout ByteSink) {
        tree.append(fixedHeaderText[Int(first)])
        tree.literal("    Remaining Length: ")
        tree.append(remainingLength)
        tree.literal("\n")
    }

    private static func writeIdentifier(_ id: Int, into tree: inout ByteSink) {
        tree.literal("    Message Identifier: ")
        tree.append(id)
        tree.literal("\n")
    }

    /// The fixed-header field of each first byte as text lines: written from the full decoder's
    /// own fields, so the two paths cannot word them differently.
    private static let fixedHeaderText: [String] = (0...255).map { text([fixedHeaderField(UInt8($0))]) }

    /// A bare 5.0 acknowledgement's implied Success line, by packet type, from the full decoder's field.
    private static let impliedSuccessText: [String] = PacketParser.impliedSuccess.map { text([$0]) }

    private static func text(_ fields: [Field]) -> String {
        var sink = ByteSink(capacity: 256)
        TextTree.write(fields, depth: 1, style: TextTree.Style(), into: &sink)
        return sink.take()
    }
}
