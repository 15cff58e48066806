import Dissection

extension AMQPFrameDecoder {
    /// The fast path of `PDUDetail.json`: the frames the text fast path takes (`decodeText`),
    /// written straight into their JSON object (`DissectedPDU.jsonTree`, braces included) and
    /// summary, the same bytes `JSONTree` writes for the full decoder's fields, with what the
    /// connection state needs; nil when the frame needs the full decoder.
    ///
    /// `tree` and `line` (the summary line) are buffers reused from frame to frame (a
    /// connection's), emptied here.
    func decodeJSON(_ frame: AMQPRawFrame, tree: inout ByteSink, line summaryLine: inout ByteSink) -> Decoded? {
        guard frame.isWhole, let end = frame.frameEnd, end == AMQPSpec.frameEnd, frame.channel != 0,
              let typeName = frame.type.name else { return nil }
        tree.removeAll()
        summaryLine.removeAll()
        var decoded = Decoded(pdu: Self.placeholder)
        tree.literal("{\"frame_type\":\"")
        tree.append(typeName)
        tree.literal("\",\"channel\":")
        tree.append(Int(frame.channel))
        tree.literal(",\"size\":")
        tree.append(Int(frame.size))
        switch frame.type {
        case .method:
            guard let method = writeMethodJSON(frame.payload, into: &tree) else { return nil }
            decoded.method = method
        case .header:
            guard let header = writeHeader(frame.payload, style: TextTree.Style(), json: true, into: &tree, parts: &summaryLine) else { return nil }
            decoded.header = header
        case .body:
            let size = Int(frame.size)
            tree.literal(",\"body\":")
            _ = frame.payload.withUnsafeBufferPointer {
                writePreviewJSON($0, length: size, limit: options.bodyPreviewBytes, key: "body", into: &tree)
            }
            tree.literal(",\"body_length\":")
            tree.append(size)
        default:
            return nil
        }
        tree.literal("}")
        Self.writeSummary(of: frame, decoded, detailed: options.summaryDetail, into: &summaryLine)
        decoded.pdu = DissectedPDU(protocolName: "amqp", summaryBytes: summaryLine.bytes, writtenTree: tree.bytes, format: .json,
                                   wireLength: frame.wireLength)
        return decoded
    }

    /// A frequent method's members (`frequentMethod`): class, method, and its arguments; nil for
    /// a value of another kind than numbers, short strings and bits (the full decoder's).
    private func writeMethodJSON(_ payload: ArraySlice<UInt8>, into tree: inout ByteSink) -> AMQPMethodDecoder.Result? {
        guard let method = frequentMethod(payload), let id = method.id, let spec = method.spec else { return nil }
        tree.literal(",\"class_id\":")
        tree.append(Int(id.classID))
        tree.literal(",\"method_id\":")
        tree.append(Int(id.methodID))
        tree.literal(",\"method\":")
        JSONString.escape(id.description, into: &tree)
        if spec.arguments.isEmpty { return method }
        tree.literal(",\"arguments\":{")
        var first = true
        for entry in method.values.entries {
            let arg = entry.spec
            switch entry.value {
            case .bool(let set):
                member(arg.key, first: &first, into: &tree)
                tree.literal(set ? "true" : "false")
            case .int(let v):
                // A long-long above Int.max is clamped in the values, where the full decoder
                // writes the wire's digits as a string: Int.max goes to the full decoder.
                if arg.type == .longlong, v == Int.max { return nil }
                member(arg.key, first: &first, into: &tree)
                tree.append(v)
            case .string(let s):
                member(arg.key, first: &first, into: &tree)
                JSONString.escape(s, into: &tree)
            default:
                return nil
            }
        }
        tree.literal("}")
        return method
    }

    /// A field table of scalar entries as the JSON member `"key":{…}` (nothing for an empty
    /// table, which the full decoder's field leaves out too). Returns the number of entries; nil
    /// for what `writeTable` leaves to the full decoder.
    func writeTableJSON(_ r: inout ByteReader, key: String, first: inout Bool, into tree: inout ByteSink) -> Int? {
        guard options.effectiveTableDepth >= 1, let length = r.readUInt32(), let content = r.readBytes(Int(length)) else { return nil }
        if content.isEmpty { return 0 }
        member(key, first: &first, into: &tree)
        tree.literal("{")
        var t = ByteReader(content)
        var count = 0
        while !t.isAtEnd {
            guard let entry = Self.scalarEntry(&t) else { return nil }
            // `"name":value`, as `JSONTree` writes the full decoder's entry.
            if count > 0 { tree.literal(",") }
            t.bytes[entry.name].withUnsafeBufferPointer { JSONString.escape(bytes: $0, then: UInt8(ascii: ":"), into: &tree) }
            switch entry.value {
            case .bool(let v):
                tree.literal(v ? "true" : "false")
            case .int(let v):
                tree.append(v)
            case .longString(let indices):
                let hex = t.bytes[indices].withUnsafeBufferPointer {
                    writePreviewJSON($0, length: $0.count, limit: AMQPOptions.longStringPreviewBytes, key: nil, into: &tree)
                }
                if hex {
                    // `name_encoding`, as `JSONTree` names it.
                    tree.literal(",")
                    JSONString.escape(String(decoding: t.bytes[entry.name], as: UTF8.self) + "_encoding", into: &tree)
                    tree.literal(":\"hex\"")
                }
            }
            count += 1
        }
        tree.literal("}")
        return count
    }

    /// The JSON value of `Preview.value(of: bytes, length:, limit:)`: the text quoted, or the
    /// shown bytes in hex, quoted, followed by `,"KEY_encoding":"hex"` when `key` is given.
    /// Returns whether it was hex.
    @discardableResult
    func writePreviewJSON(_ bytes: UnsafeBufferPointer<UInt8>, length: Int, limit: Int, key: StaticString?,
                          into tree: inout ByteSink) -> Bool {
        let shown = UnsafeBufferPointer(rebasing: bytes.prefix(max(0, limit)))
        if JSONString.writeText(shown, allowCutTail: shown.count < bytes.count || shown.count < length, into: &tree) != nil {
            return false
        }
        tree.literal("\"")
        tree.appendHex(shown)
        tree.literal("\"")
        if let key {
            tree.literal(",\"")
            tree.literal(key)
            tree.literal("_encoding\":\"hex\"")
        }
        return true
    }

    /// `"key":`, after a comma unless it is the object's first member.
    func member(_ key: String, first: inout Bool, into tree: inout ByteSink) {
        if !first { tree.literal(",") }
        first = false
        JSONString.key(key, into: &tree)
    }
}
