import Dissection

/// Decodes a method frame's payload (AMQP 0-9-1 §4.2.4): class id, method id, and the
/// arguments of that method, read into its generated struct (`AMQPMethod`). The field tree is a
/// view of the result (`AMQPMethod+FieldTree.swift`); the problems are found here.
package struct AMQPMethodDecoder {
    package struct Result {
        package var id: AMQPMethodID?
        package var spec: AMQPMethodSpec?
        package var problems: [Problem] = []
        /// The typed method; nil when the frame ends before its ids. The connection's state
        /// reads it by argument (`AMQPMethod.routingKey`, `.deliveryTag`...).
        package var method: AMQPMethod?
        /// The bytes the arguments were read from, up to where reading stopped.
        package var argumentsRange: Range<Int> = 11..<11

        /// The arguments read, in wire order, made from `method` when asked (the views' field
        /// tree, which makes the values by name from them too): none is made per frame otherwise.
        package var arguments: [AMQPArgument] { method?.argumentList ?? [] }
    }

    package let options: AMQPOptions

    /// `payload` starts at PDU offset 7. `isWhole` is false when the framer held only a prefix
    /// (a limit or a gap), so running out of bytes is the capture's doing, not the peer's.
    package func decode(_ payload: ArraySlice<UInt8>, isWhole: Bool) -> Result {
        var recent: RecentStrings?, names: RecentStrings?
        return decode(payload, isWhole: isWhole, recent: &recent, names: &names)
    }

    /// `decode`, its short strings found among `recent` (the connection's) first, and its field
    /// tables' entry names among `names`, and kept there.
    package func decode(_ payload: ArraySlice<UInt8>, isWhole: Bool, recent: inout RecentStrings?,
                        names: inout RecentStrings?) -> Result {
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
        let arguments = r.readRest()
        // Read inside the arguments' buffer: the reader reads short strings where they lie.
        result.method = arguments.withUnsafeBufferPointer { buffer -> AMQPMethod in
            var args = AMQPArgumentReader(arguments, base: 11, options: options, address: buffer.baseAddress)
            // Moved in and back, never copied: a copy would be copied again at its first change.
            swap(&args.recent, &recent)
            swap(&args.recentNames, &names)
            defer {
                swap(&args.recent, &recent)
                swap(&args.recentNames, &names)
            }
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
            result.problems += args.problems
            return method
        }
        return result
    }

    private func shortProblem(_ isWhole: Bool, _ what: String, range: Range<Int>) -> Problem {
        if isWhole {
            return Problem(.error, .methodTruncated, what, reference: "AMQP 0-9-1 §4.2.4", range: range)
        }
        return Problem(.warning, .notCaptured, "\(what): the rest of the frame was not captured or not held", range: range)
    }
}
