import AMQP
import Dissection

/// The field tree of a method frame's method: a view of `AMQPMethod`. It reads the typed
/// arguments and their byte ranges and decides nothing about the bytes (the decoder found the
/// problems); names, labels and the text tree's bit lines come from the method table.
extension AMQPMethod {
    /// Appends the method's fields to a frame's: class, method id, method name, and the
    /// arguments (`argumentsRange`: the bytes they were read from, up to where reading stopped).
    /// `arguments` is `argumentList`, when the caller has made it already.
    func appendFields(to fields: inout [Field], arguments: [AMQPArgument]? = nil, argumentsRange: Range<Int>, options: AMQPOptions) {
        let id = self.id
        // Text lines only where they are printed (`AMQPOptions.textLines`).
        let textLines = options.textLines
        fields.append(Field("class_id", "Class", .int(Int(id.classID)), line: textLines ? AMQPTextLines.classID(id.classID) : nil, range: 7..<9))
        fields.append(Field("method_id", "Method-Id", .int(Int(id.methodID)), line: textLines ? AMQPTextLines.methodID(id) : nil, range: 9..<11))
        fields.append(Field("method", "Method", .string(id.description), range: 7..<11))
        guard let spec = id.spec else {
            if case .unknown(_, _, let rest) = self, !rest.value.isEmpty {
                fields.append(Field("arguments_raw", "Undecoded arguments",
                                    Preview.value(of: rest.value, length: rest.value.count, limit: options.bodyPreviewBytes),
                                    range: rest.range))
            }
            return
        }
        let arguments = arguments ?? argumentList
        guard !arguments.isEmpty else { return }
        let depthLimit = options.effectiveTableDepth
        var argumentFields: [Field] = []
        argumentFields.reserveCapacity(arguments.count)
        // The failed method of a close names the class read just before it.
        var closeClassID: UInt16?
        for i in arguments.indices {
            let arg = spec.arguments[i]
            // Names for the numbers people look up: reply codes, the failed method of a close.
            // Only these fields are changed after they are made (a field changed is copied into
            // the array, one made in the append is moved).
            switch arg.name {
            case "reply-code":
                guard case .short(let code) = arguments[i] else { break }
                var field = arguments[i].field(arg, bitLines: nil, depthLimit: depthLimit, textLines: options.textLines)
                // The name is the frame's `reason` in JSON (`AMQPFrameSummary.reasonField`); here, the text line.
                if textLines { field.line = "\(arg.label): \(AMQPReplyCode(rawValue: code.value))" }
                argumentFields.append(field)
                continue
            case "class-id":
                if case .short(let classID) = arguments[i] { closeClassID = classID.value }
            case "method-id" where spec.methodName == "close":
                guard let classID = closeClassID, classID != 0, case .short(let methodID) = arguments[i] else { break }
                var field = arguments[i].field(arg, bitLines: nil, depthLimit: depthLimit, textLines: options.textLines)
                let failed = AMQPMethodID(classID: classID, methodID: methodID.value)
                if textLines { field.line = "\(arg.label): \(methodID.value) (\(failed))" }
                field.children = [Field("failed_method", "Failed method", .string(failed.description), jsonOnly: true)]
                argumentFields.append(field)
                continue
            default:
                break
            }
            argumentFields.append(arguments[i].field(arg, bitLines: textLines ? spec.bitLines[i] : nil, depthLimit: depthLimit,
                                                       textLines: options.textLines))
        }
        fields.append(Field("arguments", "Arguments", range: argumentsRange, children: argumentFields))
    }
}

extension AMQPArgument {
    /// The argument's field: named by `arg` (its spec), a bit shown by `bitLines` (the method
    /// spec's) in the text tree, a long string that carries credentials as a secret.
    /// `textLines`: whether it carries its text line (`AMQPOptions.textLines`).
    func field(_ arg: AMQPArgumentSpec, bitLines: (clear: String, set: String)?, depthLimit: Int, textLines: Bool = true) -> Field {
        switch self {
        case .bit(let bit):
            return Field(arg.key, arg.label, .bool(bit.value), line: bitLines.map { bit.value ? $0.set : $0.clear }, range: bit.range)
        case .octet(let v):
            return Field(arg.key, arg.label, .int(Int(v.value)), range: v.range)
        case .short(let v):
            return Field(arg.key, arg.label, .int(Int(v.value)), range: v.range)
        case .long(let v):
            return Field(arg.key, arg.label, .int(Int(v.value)), range: v.range)
        case .longlong(let v):
            // The field shows the wire's unsigned value.
            return Field(arg.key, arg.label, v.value <= UInt64(Int.max) ? .int(Int(v.value)) : .string(String(v.value)), range: v.range)
        case .timestamp(let v):
            return Field(arg.key, arg.label, .int(Int(clamping: v.value)),
                         line: textLines ? AMQPText.timestampLine(arg.label, number: v.value, seconds: v.value) : nil, range: v.range)
        case .shortString(let v):
            return Field(arg.key, arg.label, .string(v.value), range: v.range)
        case .longString(let v):
            let value: FieldValue
            if AMQPArgumentReader.secretArguments.contains(arg.name) {
                value = .secret(AMQPText.escaped(v.value.bytes.prefix(AMQPOptions.longStringPreviewBytes)))
            } else {
                value = Preview.value(of: v.value.bytes, length: v.value.declaredLength, limit: AMQPOptions.longStringPreviewBytes)
            }
            return Field(arg.key, arg.label, value, range: v.range)
        case .table(let table):
            return table.value.field(key: arg.key, label: arg.label, range: table.range, depthLimit: depthLimit, textLines: textLines)
        }
    }
}
