import Dissection

/// The field tree as the text format shows it: one line per field, indented four spaces per
/// level, `label: value` or the field's own `line`. The text renderer writes PDU trees with it.
public enum TextTree {
    /// What changes how values read.
    public struct Style: Sendable, Equatable {
        /// How many bytes of a binary value are shown as hex.
        public var hexPreviewBytes: Int
        /// Credentials shown as they are, instead of `hiddenSecret`.
        public var showSecrets: Bool

        public init(hexPreviewBytes: Int = 64, showSecrets: Bool = false) {
            self.hexPreviewBytes = hexPreviewBytes
            self.showSecrets = showSecrets
        }
    }

    /// The lines of `fields` and their children, the roots indented by `depth` levels. Read
    /// through pointers: never copied (a copy retains each field's strings and arrays, then
    /// releases them).
    public static func write(_ fields: [Field], depth: Int, style: Style, into out: inout ByteSink) {
        fields.withUnsafeBufferPointer { fields in
            guard let base = fields.baseAddress else { return }
            for i in fields.indices { field(base + i, depth: depth, style: style, into: &out) }
        }
    }

    private static func field(_ f: UnsafePointer<Field>, depth: Int, style: Style, into out: inout ByteSink) {
        if f.pointee.jsonOnly { return }
        out.append(spaces: 4 * depth)
        if let line = f.pointee.line {
            out.append(line)
        } else {
            out.append(f.pointee.label)
            writeValue(f.pointee.value, style: style, into: &out)
        }
        out.literal("\n")
        if !f.pointee.children.isEmpty { write(f.pointee.children, depth: depth + 1, style: style, into: &out) }
    }

    /// `: value` (nothing for no value).
    public static func writeValue(_ v: FieldValue, style: Style, into out: inout ByteSink) {
        switch v {
        case .none:
            return
        case .bool(let b):
            out.literal(b ? ": True" : ": False")
        case .int(let i):
            out.literal(": ")
            out.append(i)
        case .string(let s):
            out.literal(": ")
            out.append(s.isEmpty ? "\"\"" : s)
        case .text(let s, let length):
            out.literal(": ")
            JSONString.escape(s, into: &out)
            writeCut(s.utf8.count < length, length: length, into: &out)
        case .bytes(let preview, let length):
            out.literal(": ")
            preview.withUnsafeBufferPointer { writeHex($0, length: length, style: style, into: &out) }
        case .json(let bytes):
            out.literal(": ")
            bytes.withUnsafeBufferPointer { out.append(bytes: $0) }
        case .secret(let s):
            out.literal(": ")
            if style.showSecrets {
                out.append(s)
            } else {
                out.append(hiddenSecret)
                out.literal(" (use --show-secrets)")
            }
        }
    }

    /// After a quoted text preview: `…` if it is cut, then ` (N bytes)`.
    @inlinable
    public static func writeCut(_ cut: Bool, length: Int, into out: inout ByteSink) {
        if cut { out.literal("…") }
        out.literal(" (")
        out.append(length)
        out.literal(length == 1 ? " byte)" : " bytes)")
    }

    /// A binary preview: its first `style.hexPreviewBytes` bytes in hex, `…` if that is not all of
    /// `length`, then ` (N bytes, hex)`.
    public static func writeHex(_ preview: UnsafeBufferPointer<UInt8>, length: Int, style: Style, into out: inout ByteSink) {
        let shown = UnsafeBufferPointer(rebasing: preview.prefix(max(0, style.hexPreviewBytes)))
        out.appendHex(shown)
        if shown.count < length { out.literal("…") }
        out.literal(" (")
        out.append(length)
        out.literal(length == 1 ? " byte, hex)" : " bytes, hex)")
    }
}

/// The placeholder printed for a hidden credential.
public let hiddenSecret = "<hidden>"
