/// One node of a dissection's field tree: what a byte range of a PDU means.
///
/// Renderers turn the tree into text (an indented, annotated tree) or JSON
/// (`key: value` pairs) without knowing anything of the wire format.
///
/// JSON shape, decided by the node alone:
/// - a value and no children: `"key": value`;
/// - a value and children (flag bits, say): `"key": value` and the children's pairs beside it;
/// - no value, children: `"key": { children }`, or `"key": [ … ]` when `isList` is set, where
///   each child becomes one element (its value, or an object of its own children).
public struct Field: Sendable, Equatable {
    /// Machine name, snake_case; the JSON key.
    @inlinable public var key: String { fieldKey.string }
    /// The key with whether it is known to need no escaping in JSON (`FieldKey.isPlain`): JSON
    /// then writes it as it is, unchecked.
    public let fieldKey: FieldKey
    /// Human label for the text tree.
    public var label: String
    public var value: FieldValue
    /// A full text line that replaces `label: value` in the text tree (e.g. `.... ..1. = Clean Session: Set`).
    /// An empty line is no line.
    public var line: String? {
        get { lineText.isEmpty ? nil : lineText }
        set { lineText = newValue ?? "" }
    }
    /// `line`, empty for none. Not an optional: a struct with an optional string stored in it is
    /// copied, then the original destroyed, each time a new one is appended to an array (Swift
    /// 6.3, -O); without one it is moved (callgrind, 2.6 MB AMQP capture: json 544M → 487M
    /// instructions).
    @usableFromInline var lineText: String
    /// Offsets of the bytes this field covers, relative to the start of the PDU.
    public var range: Range<Int>?
    public var children: [Field]
    /// Render children as a JSON array rather than an object.
    public var isList: Bool
    /// Shown in the text tree only, left out of JSON (a bit-by-bit line that repeats a value, say).
    public var textOnly: Bool
    /// In JSON only, left out of the text tree (a name that the text line already shows, say).
    public var jsonOnly: Bool

    // Inlinable: a decoder (another module) then builds the field without a call, and a field
    // built in an `append` call is moved into the array (see `lineText`). A field kept in a `var`
    // and changed before it is appended is still copied once: build it with `let` where it is hot.
    @inlinable
    public init(_ key: FieldKey, _ label: String, _ value: FieldValue = .none, line: @autoclosure () -> String? = nil,
                range: Range<Int>? = nil, children: [Field] = [], isList: Bool = false, textOnly: Bool = false,
                jsonOnly: Bool = false) {
        self.fieldKey = key
        self.label = label
        self.value = value
        self.lineText = line() ?? ""
        self.range = range
        self.children = children
        self.isList = isList
        self.textOnly = textOnly
        self.jsonOnly = jsonOnly
    }

    /// The first field with this key, searching depth-first.
    public func find(_ key: String) -> Field? {
        if self.key == key { return self }
        return Field.find(key, in: children)
    }

    /// The first field with this key in `fields` or below them, depth-first. The fields passed
    /// over are read where they are: iterating the array copied each one (its strings and
    /// children retained and released), thousands of instructions a search in a CONNECT's tree.
    public static func find(_ key: String, in fields: [Field]) -> Field? {
        for i in fields.indices {
            if fields[i].key == key { return fields[i] }
            if !fields[i].children.isEmpty, let found = find(key, in: fields[i].children) { return found }
        }
        return nil
    }
}

/// A field's key, and whether it is known to need no escaping in JSON (no quote, backslash or
/// control byte). Keys written in the source are names chosen here, snake_case, and are taken as
/// plain unchecked (asserted in debug builds); keys made at run time (a field-table entry's name
/// from the wire) are checked when written (`init(dynamic:)`), or once when made
/// (`init(checking:)`, for keys made once and written often). Checking every key as it was
/// written cost 4% of the JSON of the bench's first 20,000 packets (callgrind: 2,569.0M against
/// 2,461.1M instructions).
/// Keys are equal when their strings are: `isPlain` is what is known of the string, not part of it.
public struct FieldKey: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let string: String
    public let isPlain: Bool

    public static func == (a: FieldKey, b: FieldKey) -> Bool { a.string == b.string }
    public func hash(into hasher: inout Hasher) { hasher.combine(string) }

    /// A key written in the source.
    @inlinable
    public init(stringLiteral value: String) {
        string = value
        isPlain = true
        assert(FieldKey.plain(value), "a key literal that JSON must escape: \(value)")
    }

    /// A key made at run time, checked when written. (Labelled: `FieldKey("…")` with a literal
    /// would be the literal's initializer.)
    @inlinable
    public init(dynamic string: String) {
        self.string = string
        isPlain = false
    }

    /// A key made at run time and checked now: for keys made once and written often.
    public init(checking string: String) {
        self.string = string
        isPlain = FieldKey.plain(string)
    }

    public var description: String { string }

    /// No byte is a control byte, a quote or a backslash (`ByteWords.jsonPlain`).
    @usableFromInline static func plain(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { ByteWords.jsonPlain($0) }
    }
}

/// The typed value of a field.
public enum FieldValue: Sendable, Equatable {
    case none
    case bool(Bool)
    case int(Int)
    case string(String)
    /// A bounded preview of bytes, with the full length (the preview may be shorter).
    case bytes(preview: [UInt8], length: Int)
    /// Text that was valid UTF-8 on the wire, as a bounded preview with its full byte length.
    case text(preview: String, length: Int)
    /// A credential: hidden by renderers unless the user asked for secrets.
    case secret(String)
    /// A JSON value written already (UTF-8, valid JSON): JSON shows it as it is, text its bytes.
    /// An AMQP message repeats its content header's `properties` object this way, as the header
    /// frame's JSON wrote it, rather than decoding the header again.
    case json([UInt8])

    public var intValue: Int? {
        if case .int(let v) = self { return v }
        return nil
    }

    public var stringValue: String? {
        switch self {
        case .string(let s): return s
        case .text(let s, _): return s
        default: return nil
        }
    }
}
