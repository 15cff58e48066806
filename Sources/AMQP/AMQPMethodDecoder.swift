import Dissection

/// Decodes a method frame's payload (AMQP 0-9-1 §4.2.4): class id, method id, and the
/// arguments of that method, read into its generated struct (`AMQPMethod`). The field tree is a
/// view of the result (`AMQPMethod+FieldTree.swift`); the problems are found here.
struct AMQPMethodDecoder {
    struct Result {
        var id: AMQPMethodID?
        var spec: AMQPMethodSpec?
        /// The arguments by spec name, for connection state and summaries (made from `method`).
        var values = AMQPArgumentValues()
        var problems: [Problem] = []
        /// The typed method; nil when the frame ends before its ids.
        var method: AMQPMethod?
        /// The bytes the arguments were read from, up to where reading stopped.
        var argumentsRange: Range<Int> = 11..<11
        /// `method.argumentList`, made once for `values` and the field tree.
        var arguments: [AMQPArgument] = []
    }

    let options: AMQPOptions

    /// `payload` starts at PDU offset 7. `isWhole` is false when the framer held only a prefix
    /// (a limit or a gap), so running out of bytes is the capture's doing, not the peer's.
    func decode(_ payload: ArraySlice<UInt8>, isWhole: Bool) -> Result {
        var result = Result()
        var r = ByteReader(payload)
        guard let classID = r.readUInt16(), let methodID = r.readUInt16() else {
            result.problems.append(shortProblem(isWhole, "method frame too short for its class and method ids",
                                                range: 7..<(7 + payload.count)))
            return result
        }
        let id = AMQPMethodID(classID: classID, methodID: methodID)
        result.id = id
        guard let spec = id.spec else {
            // AMQP 0-9-1 §4.2.4: an unknown method is a 503 command-invalid connection error.
            result.problems.append(Problem(.error, .unknownMethod,
                                           "class \(classID) method \(methodID) is not an AMQP 0-9-1 method; its arguments cannot be decoded",
                                           reference: "AMQP 0-9-1 §4.2.4", range: 7..<11))
            let rest = r.readRest()
            result.method = .unknown(classID: classID, methodID: methodID, arguments: Ranged(rest, 11..<(11 + rest.count)))
            result.argumentsRange = 11..<(11 + rest.count)
            return result
        }
        result.spec = spec
        var args = AMQPArgumentReader(r.readRest(), base: 11, options: options)
        // Every method of the spec has its case: the table and the structs are generated together.
        let method = AMQPMethod.decodeArguments(id, &args) ?? .unknown(classID: classID, methodID: methodID, arguments: Ranged([], 11..<11))
        if args.count < spec.arguments.count {
            let arg = spec.arguments[args.count]
            args.problems.append(shortProblem(isWhole, "\(spec.fullName) ends before its \(arg.name) argument (\(arg.type.rawValue))",
                                              range: args.offset..<(7 + payload.count)))
        }
        args.finishBits()
        if isWhole, args.reader.remaining > 0 {
            let left = args.reader.remaining
            args.problems.append(Problem(.error, .trailingBytes,
                                         "\(left) bytes left over after the last argument of \(spec.fullName)",
                                         reference: "AMQP 0-9-1 §4.2.4", range: args.offset..<(args.offset + left)))
        }
        result.argumentsRange = 11..<args.offset
        result.arguments = method.argumentList
        result.values = AMQPArgumentValues(result.arguments, of: spec)
        result.method = method
        result.problems += args.problems
        return result
    }

    private func shortProblem(_ isWhole: Bool, _ what: String, range: Range<Int>) -> Problem {
        if isWhole {
            return Problem(.error, .methodTruncated, what, reference: "AMQP 0-9-1 §4.2.4", range: range)
        }
        return Problem(.warning, .notCaptured, "\(what): the rest of the frame was not captured or not held", range: range)
    }
}

extension AMQPMethodDecoder {
    /// The summary line: `basic.publish exchange=x routing-key=y mandatory`.
    static func summary(_ spec: AMQPMethodSpec, _ values: AMQPArgumentValues) -> String {
        switch (spec.classID, spec.methodID) {
        case (10, 11), (10, 21):
            var parts = [spec.fullName]
            if let mechanism = values.string("mechanism") { parts.append("mechanism=\(AMQPText.summaryValue(mechanism))") }
            if let user = AMQPSASL.user(mechanism: values.string("mechanism"), response: values["response"]) {
                parts.append("user=\(AMQPText.summaryValue(user))")
            }
            return parts.joined(separator: " ")
        case (10, 50), (20, 40), (60, 50):
            var parts = [spec.fullName]
            if let code = values.int("reply-code") {
                let reply = AMQPReplyCode(rawValue: UInt16(truncatingIfNeeded: code))
                let text = values.string("reply-text") ?? ""
                if let name = reply.name, code != 200, !text.hasPrefix(name) {
                    parts.append("\(code) \(name)")
                } else {
                    parts.append(String(code))
                }
                if !text.isEmpty { parts.append(AMQPText.summaryValue(text, limit: 100).trimmingQuotes) }
            }
            if spec.methodName == "close", let classID = values.int("class-id"), classID != 0,
               let methodID = values.int("method-id") {
                let failed = AMQPMethodID(classID: UInt16(truncatingIfNeeded: classID), methodID: UInt16(truncatingIfNeeded: methodID))
                parts.append("(\(failed))")
            }
            guard spec.methodName == "return" else { return parts.joined(separator: " ") }
            var line = ByteSink(capacity: 128)
            line.append(parts.joined(separator: " "))
            appendSummaryParts(values, skipping: ["reply-code", "reply-text"], to: &line)
            return line.take()
        default:
            // The frequent case (basic.publish, deliver, ack…): built as bytes, no parts array.
            var line = ByteSink(capacity: 96)
            line.append(spec.fullName)
            appendSummaryParts(values, to: &line)
            return line.take()
        }
    }

    /// The arguments people read in a summary, each as ` name=value` (a set bit as ` name`),
    /// straight into `line`: not the zero ticket, empty strings, tables, secrets, or long strings
    /// that are empty, longer than 60 bytes or not text.
    private static func appendSummaryParts(_ values: AMQPArgumentValues, skipping: Set<String> = [], to line: inout ByteSink) {
        for entry in values.entries where skipping.isEmpty || !skipping.contains(entry.spec.name) {
            let arg = entry.spec, value = entry.value
            // ` name=`, before the value.
            func name(_ line: inout ByteSink) {
                line.literal(" ")
                line.append(arg.name)
                line.literal("=")
            }
            switch value {
            case .bool(let set):
                if set {
                    line.literal(" ")
                    line.append(arg.name)
                }
            case .int(let v):
                // The ticket of access control is deprecated and always zero.
                if arg.name == "ticket" && v == 0 { continue }
                name(&line)
                line.append(v)
            case .string(let s):
                if !s.isEmpty {
                    name(&line)
                    line.append(AMQPText.summaryValue(s))
                }
            case .longString(let bytes, let length):
                if AMQPArgumentReader.secretArguments.contains(arg.name) || length == 0 || length > 60 { continue }
                if let text = Preview.utf8Text(bytes) {
                    name(&line)
                    line.append(AMQPText.summaryValue(text))
                }
            case .table:
                continue
            }
        }
    }
}

extension String {
    /// The string without the quotes `summaryValue` adds around spaced text.
    fileprivate var trimmingQuotes: String {
        guard count >= 2, hasPrefix("\""), hasSuffix("\"") else { return self }
        return String(dropFirst().dropLast())
    }
}
