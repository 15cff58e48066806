import AMQP
import Dissection

/// The field tree of field tables and arrays: a view of `AMQPFieldTable`, deciding nothing about
/// the bytes (the decoder reported the problems). In the text tree each entry's label names its
/// type (`x-max-length (int32)`); JSON has the name alone.
extension AMQPFieldTable {
    /// The table as one field with its entries as children; `range` is the table's with its
    /// length. `depthLimit` is the nesting limit the decoder applied (named when it skipped).
    /// `textLines`: whether the fields carry their text lines and typed labels (`AMQPOptions.textLines`).
    func field(key: FieldKey, label: String, range: Range<Int>, depthLimit: Int, textLines: Bool = true) -> Field {
        var field = Field(key, label, range: range)
        if let skippedBytes {
            field.value = .string("(nested deeper than \(depthLimit) levels: \(skippedBytes) bytes not decoded)")
            return field
        }
        field.children.reserveCapacity(entries.count)
        for entry in entries {
            guard case .undecoded = entry.value else {
                field.children.append(entry.value.field(key: FieldKey(dynamic: entry.name), name: entry.name, range: entry.range, depthLimit: depthLimit,
                                                         textLines: textLines))
                continue
            }
            field.children.append(Field(FieldKey(dynamic: entry.name), entry.name, .string("(undecoded)"), range: entry.range))
        }
        if field.children.isEmpty, textLines {
            field.line = "\(label): (empty table)"
        }
        return field
    }
}

extension AMQPFieldValue {
    /// The value as a field: `name` is the entry's name (`[2]` for an array's third item).
    func field(key: FieldKey, name: String, range: Range<Int>, depthLimit: Int, textLines: Bool = true) -> Field {
        func make(_ type: String, _ value: FieldValue, line: @autoclosure () -> String? = nil) -> Field {
            // The label with its type is for the text tree only.
            Field(key, textLines ? AMQPText.typedLabel(name, type) : name, value, line: textLines ? line() : nil, range: range)
        }
        switch self {
        case .boolean(let v): return make("boolean", .bool(v))
        case .int8(let v): return make("int8", .int(Int(v)))
        case .uint8(let v): return make("uint8", .int(Int(v)))
        case .int16(let v): return make("int16", .int(Int(v)))
        case .uint16(let v): return make("uint16", .int(Int(v)))
        case .int32(let v): return make("int32", .int(Int(v)))
        case .uint32(let v): return make("uint32", .int(Int(v)))
        case .int64(let v): return make("int64", .int(Int(v)))
        case .float(let v): return make("float", .string(String(describing: v)))
        case .double(let v): return make("double", .string(String(describing: v)))
        case .decimal(let scale, let mantissa):
            return make("decimal", .string(AMQPText.decimal(Int64(mantissa), scale: Int(scale))))
        case .longString(let s):
            return make("string", Preview.value(of: s.bytes, length: s.declaredLength, limit: AMQPOptions.longStringPreviewBytes))
        case .bytes(let s):
            return make("bytes", .bytes(preview: Array(s.bytes.prefix(AMQPOptions.longStringPreviewBytes)), length: s.declaredLength))
        case .timestamp(let v):
            let seconds = Int(clamping: v)
            return make("timestamp", .int(seconds), line: AMQPText.timestampLine(AMQPText.typedLabel(name, "timestamp"), number: UInt64(max(0, seconds)), seconds: v))
        case .void:
            return make("void", .none, line: "\(name) (void)")
        case .table(let table):
            return table.field(key: key, label: "\(name) (table)", range: range, depthLimit: depthLimit, textLines: textLines)
        case .array(let array):
            var field = make("array", .none)
            if let skippedBytes = array.skippedBytes {
                field.value = .string("(nested deeper than \(depthLimit) levels: \(skippedBytes) bytes not decoded)")
                return field
            }
            field.isList = true
            field.children.reserveCapacity(array.items.count)
            for (index, item) in array.items.enumerated() {
                field.children.append(item.value.field(key: FieldKey(dynamic: String(index)), name: "[\(index)]", range: item.range, depthLimit: depthLimit,
                                                       textLines: textLines))
            }
            if field.children.isEmpty, textLines { field.line = "\(name) (array): (empty)" }
            return field
        case .undecoded:
            return Field(key, name, .string("(undecoded)"), range: range)
        }
    }
}
