import Dissection

/// The field tree as the JSON format shows it (see `Field` for the shape): the JSON renderer
/// writes PDU trees with it.
public enum JSONTree {
    /// The pairs of `fields` inside braces.
    public static func writeObject(_ fields: [Field], showSecrets: Bool, into out: inout ByteSink) {
        out.literal("{")
        var first = true
        writeMembers(fields, first: &first, showSecrets: showSecrets, into: &out)
        out.literal("}")
    }

    public static func writeMembers(_ fields: [Field], first: inout Bool, showSecrets: Bool, into out: inout ByteSink) {
        // Through pointers: each field is read where it is, never copied (a copy retains its
        // strings and arrays, then releases them).
        fields.withUnsafeBufferPointer { fields in
            guard let base = fields.baseAddress else { return }
            for i in fields.indices where !fields[i].textOnly { member(base + i, first: &first, showSecrets: showSecrets, into: &out) }
        }
    }

    private static func member(_ f: UnsafePointer<Field>, first: inout Bool, showSecrets: Bool, into out: inout ByteSink) {
        let hasValue: Bool
        if case .none = f.pointee.value { hasValue = false } else { hasValue = true }
        if !hasValue && f.pointee.children.isEmpty { return }
        if !first { out.literal(",") }
        first = false
        // A key written in the source (`FieldKey`) is quoted as it is, not checked.
        if f.pointee.fieldKey.isPlain,
           let _: Void = f.pointee.key.utf8.withContiguousStorageIfAvailable({ out.append(quoted: $0, then: UInt8(ascii: ":")) }) {
        } else {
            JSONString.key(f.pointee.key, into: &out)
        }
        if f.pointee.isList {
            list(f.pointee.children, showSecrets: showSecrets, into: &out)
        } else if !hasValue {
            writeObject(f.pointee.children, showSecrets: showSecrets, into: &out)
        } else {
            writeValue(f.pointee.value, showSecrets: showSecrets, into: &out)
            // Bytes that are not text are shown as hex: say so, since "00ff" could be either.
            if case .bytes = f.pointee.value {
                out.literal(",")
                encodingKey(f.pointee.key, into: &out)
                out.literal(":\"hex\"")
            }
            if !f.pointee.children.isEmpty { writeMembers(f.pointee.children, first: &first, showSecrets: showSecrets, into: &out) }
        }
    }

    /// `"KEY_encoding"`: the key's bytes and the suffix written in place (a key joined to the
    /// suffix made a String per binary field, on the heap once longer than 15 bytes).
    /// A key that needs escaping (a name from the wire) is joined and escaped as before.
    private static func encodingKey(_ key: String, into out: inout ByteSink) {
        var utf8 = key
        let written = utf8.withUTF8 { bytes in
            guard ByteWords.jsonPlain(bytes) else { return false }
            out.append(byte: 0x22)
            out.append(bytes: bytes)
            out.literal("_encoding\"")
            return true
        }
        if !written { JSONString.escape(key + "_encoding", into: &out) }
    }

    private static func list(_ items: [Field], showSecrets: Bool, into out: inout ByteSink) {
        out.literal("[")
        var first = true
        for item in items where !item.textOnly {
            if !first { out.literal(",") }
            first = false
            if item.isList {
                list(item.children, showSecrets: showSecrets, into: &out)
            } else if item.children.isEmpty {
                writeValue(item.value, showSecrets: showSecrets, into: &out)
            } else if case .none = item.value {
                writeObject(item.children, showSecrets: showSecrets, into: &out)
            } else {
                out.literal("{")
                var f = false
                writeMembers([item], first: &f, showSecrets: showSecrets, into: &out)
                out.literal("}")
            }
        }
        out.literal("]")
    }

    /// A value as JSON: `null`, a boolean, a number, or a string (bytes as hex).
    public static func writeValue(_ v: FieldValue, showSecrets: Bool, into out: inout ByteSink) {
        switch v {
        case .none: out.literal("null")
        case .bool(let b): if b { out.literal("true") } else { out.literal("false") }
        case .int(let i): out.append(i)
        case .string(let s): JSONString.escape(s, into: &out)
        case .text(let s, _): JSONString.escape(s, into: &out)
        case .bytes(let preview, _):
            // Hex digits need no escaping: written straight into the sink, no String made.
            out.append(byte: 0x22)
            preview.withUnsafeBufferPointer { out.appendHex($0) }
            out.append(byte: 0x22)
        case .secret(let s): JSONString.escape(showSecrets ? s : hiddenSecret, into: &out)
        case .json(let bytes): bytes.withUnsafeBufferPointer { out.append(bytes: $0) }
        }
    }
}
