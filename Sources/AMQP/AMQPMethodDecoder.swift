import Dissection

/// Decodes a method frame's payload (AMQP 0-9-1 §4.2.4): class id, method id, and the
/// arguments the generated method table lists for that method.
struct AMQPMethodDecoder {
    struct Result {
        var id: AMQPMethodID?
        var spec: AMQPMethodSpec?
        var values = AMQPArgumentValues()
        var problems: [Problem] = []
    }

    let options: AMQPOptions

    /// `payload` starts at PDU offset 7. `isWhole` is false when the framer held only a prefix
    /// (a limit or a gap), so running out of bytes is the capture's doing, not the peer's. The
    /// fields are appended to `fields` (the frame's), not copied there from an array of their own.
    func decode(_ payload: ArraySlice<UInt8>, isWhole: Bool, into fields: inout [Field]) -> Result {
        var result = Result()
        var r = ByteReader(payload)
        guard let classID = r.readUInt16(), let methodID = r.readUInt16() else {
            result.problems.append(shortProblem(isWhole, "method frame too short for its class and method ids",
                                                range: 7..<(7 + payload.count)))
            return result
        }
        let id = AMQPMethodID(classID: classID, methodID: methodID)
        result.id = id
        fields.append(Field("class_id", "Class", .int(Int(classID)),
                                   line: AMQPTextLines.classID(classID),
                                   range: 7..<9))
        fields.append(Field("method_id", "Method-Id", .int(Int(methodID)),
                                   line: AMQPTextLines.methodID(id),
                                   range: 9..<11))
        fields.append(Field("method", "Method", .string(id.description), range: 7..<11))
        guard let spec = id.spec else {
            // AMQP 0-9-1 §4.2.4: an unknown method is a 503 command-invalid connection error.
            result.problems.append(Problem(.error, "unknown-method",
                                           "class \(classID) method \(methodID) is not an AMQP 0-9-1 method; its arguments cannot be decoded",
                                           reference: "AMQP 0-9-1 §4.2.4", range: 7..<11))
            if r.remaining > 0 {
                let rest = r.readRest()
                fields.append(Field("arguments_raw", "Undecoded arguments",
                                           Preview.value(of: rest, length: rest.count, limit: options.bodyPreviewBytes),
                                           range: 11..<(11 + rest.count)))
            }
            return result
        }
        result.spec = spec
        var args = AMQPArgumentReader(r.readRest(), base: 11, options: options)
        args.values.reserve(spec.arguments.count)
        var argumentFields: [Field] = []
        argumentFields.reserveCapacity(spec.arguments.count)
        for (i, arg) in spec.arguments.enumerated() {
            guard var field = args.read(arg, bitLines: spec.bitLines[i]) else {
                args.problems.append(shortProblem(isWhole, "\(spec.fullName) ends before its \(arg.name) argument (\(arg.type.rawValue))",
                                                  range: (11 + args.reader.offset)..<(7 + payload.count)))
                break
            }
            annotate(&field, arg: arg, in: spec, values: args.values)
            argumentFields.append(field)
        }
        args.finishBits()
        if isWhole, args.reader.remaining > 0 {
            let left = args.reader.remaining
            args.problems.append(Problem(.error, "trailing-bytes",
                                         "\(left) bytes left over after the last argument of \(spec.fullName)",
                                         reference: "AMQP 0-9-1 §4.2.4", range: (11 + args.reader.offset)..<(11 + args.reader.offset + left)))
        }
        if !argumentFields.isEmpty {
            fields.append(Field("arguments", "Arguments", range: 11..<(11 + args.reader.offset), children: argumentFields))
        }
        result.values = args.values
        result.problems += args.problems
        return result
    }

    /// Adds names to the numbers people look up: reply codes (the text line; JSON has the name
    /// as the frame's `reason`, see `AMQPFrameDecoder.reasonField`), the failed method of a close.
    private func annotate(_ field: inout Field, arg: AMQPArgumentSpec, in spec: AMQPMethodSpec, values: AMQPArgumentValues) {
        switch arg.name {
        case "reply-code":
            guard let code = values.int("reply-code") else { return }
            field.line = "\(arg.label): \(AMQPReplyCode(rawValue: UInt16(truncatingIfNeeded: code)))"
        case "method-id" where spec.methodName == "close":
            guard let classID = values.int("class-id"), let methodID = values.int("method-id"), classID != 0 else { return }
            let failed = AMQPMethodID(classID: UInt16(truncatingIfNeeded: classID), methodID: UInt16(truncatingIfNeeded: methodID))
            field.line = "\(arg.label): \(methodID) (\(failed))"
            field.children = [Field("failed_method", "Failed method", .string(failed.description), jsonOnly: true)]
        default:
            return
        }
    }

    private func shortProblem(_ isWhole: Bool, _ what: String, range: Range<Int>) -> Problem {
        if isWhole {
            return Problem(.error, "method-truncated", what, reference: "AMQP 0-9-1 §4.2.4", range: range)
        }
        return Problem(.warning, "not-captured", "\(what): the rest of the frame was not captured or not held", range: range)
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

    /// `summary(spec, values)`, appended to `line`: for the frequent methods without a String.
    static func writeSummary(_ spec: AMQPMethodSpec, _ values: AMQPArgumentValues, into line: inout ByteSink) {
        switch (spec.classID, spec.methodID) {
        case (10, 11), (10, 21), (10, 50), (20, 40), (60, 50):
            line.append(summary(spec, values))
        default:
            line.append(spec.fullName)
            appendSummaryParts(values, to: &line)
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
