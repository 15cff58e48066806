import Dissection

/// Reads one frame, without connection state, into its typed values (`AMQPDecodedFrame`), and
/// finds a protocol header's problems. The connection dissector adds what needs state
/// (frame-max, message assembly, request context); its view shows the result.
package struct AMQPFrameDecoder {
    package let options: AMQPOptions
    /// The short strings of the methods decoded lately (`AMQPArgumentReader.recent`). Never nil
    /// here: optional as the reader holds it, where nil (a method decoded alone) makes each string.
    private var recentStrings: RecentStrings? = RecentStrings()
    /// The field tables' entry names read lately (`AMQPFieldTableDecoder.recentNames`); never nil.
    private var recentNames: RecentStrings? = RecentStrings()

    package init(options: AMQPOptions) { self.options = options }

    /// The problems of a protocol header (nil when the bytes are not one) beyond the framer's.
    package static func protocolHeaderProblems(_ header: AMQPProtocolHeader?, problems: [Problem]) -> [Problem] {
        var problems = problems
        guard let header else {
            problems.append(Problem(.error, .badProtocolHeader, "not an AMQP protocol header", reference: "AMQP 0-9-1 §4.2.2"))
            return problems
        }
        switch header.family {
        case .amqp091:
            break
        case .amqp0x:
            problems.append(Problem(.note, .otherVersion,
                                    "\(header.versionName) is not 0-9-1; the frames are decoded as 0-9-1, which older versions resemble but do not match",
                                    reference: "AMQP 0-9-1 §4.2.2", range: 4..<8))
        case .amqp10:
            problems.append(Problem(.note, .amqp10,
                                    "\(header.versionName) is a different protocol from 0-9-1; the rest of this direction is not dissected",
                                    reference: "AMQP 1.0 §2.2", range: 0..<8))
        case .unknown:
            problems.append(Problem(.warning, .unknownVersion, "unknown AMQP protocol version",
                                    reference: "AMQP 0-9-1 §4.2.2", range: 4..<8))
        }
        return problems
    }

    /// A frame's typed values and the problems in its bytes (the framer's first): no field
    /// tree, no connection state. The field tree is a view of the result
    /// (`AMQPFrameView`), as is what a table counts.
    package mutating func decode(_ frame: AMQPRawFrame, problems framing: [Problem]) -> AMQPDecodedFrame {
        var decoded = AMQPDecodedFrame(frame: frame, problems: framing)
        decode(into: &decoded)
        return decoded
    }

    /// `decode` into a frame made of the raw frame and its framing problems, in place: a frame
    /// returned was copied once more on its way (its arrays and strings retained, then released).
    package mutating func decode(into decoded: inout AMQPDecodedFrame) {
        let frame = decoded.frame
        let size = Int(frame.size)
        switch frame.type {
        case .method:
            let result = AMQPMethodDecoder(options: options).decode(frame.payload, isWhole: frame.isWhole, recent: &recentStrings,
                                                                names: &recentNames)
            decoded.problems += result.problems
            // AMQP 0-9-1 §4.2.3 / §2.3.5: channel 0 is the connection's; connection methods use no other.
            if let spec = result.spec, (spec.classID == 10) != (frame.channel == 0) {
                decoded.problems.append(Problem(.error, .wrongChannel,
                                                spec.classID == 10
                                                    ? "\(spec.fullName) must be sent on channel 0, not \(frame.channel)"
                                                    : "\(spec.fullName) cannot be sent on channel 0, which belongs to the connection",
                                                reference: "AMQP 0-9-1 §4.2.3", range: 1..<3))
            }
            decoded.method = result
        case .header:
            let result = AMQPContentHeaderDecoder(options: options).decode(frame.payload, isWhole: frame.isWhole, names: &recentNames)
            decoded.problems += result.problems
            if frame.channel == 0 {
                decoded.problems.append(Problem(.error, .wrongChannel, "content header on channel 0, which carries no content",
                                                reference: "AMQP 0-9-1 §4.2.3", range: 1..<3))
            }
            decoded.header = result
        case .body:
            if frame.channel == 0 {
                decoded.problems.append(Problem(.error, .wrongChannel, "content body on channel 0, which carries no content",
                                                reference: "AMQP 0-9-1 §4.2.3", range: 1..<3))
            }
        case .heartbeat:
            // AMQP 0-9-1 §4.2.7: heartbeat frames have channel 0 and no payload.
            if frame.channel != 0 {
                decoded.problems.append(Problem(.error, .heartbeatChannel, "heartbeat on channel \(frame.channel); heartbeats must use channel 0",
                                                reference: "AMQP 0-9-1 §4.2.7", range: 1..<3))
            }
            if size != 0 {
                decoded.problems.append(Problem(.error, .heartbeatPayload, "heartbeat carries \(size) payload bytes; it must carry none",
                                                reference: "AMQP 0-9-1 §4.2.7", range: 3..<7))
            }
        default:
            decoded.problems.append(Problem(.error, .unknownFrameType, "frame type \(frame.type) is not defined by AMQP 0-9-1",
                                            reference: "AMQP 0-9-1 §4.2.3", range: 0..<1))
        }
        // AMQP 0-9-1 §4.2.3: frame-end must be 0xCE, else the frame is malformed.
        if let end = frame.frameEnd, end != AMQPSpec.frameEnd {
            decoded.problems.append(Problem(.error, .badFrameEnd,
                                            "frame-end is \(AMQPHex.string(UInt64(end), digits: 2)), not 0xCE: the frame's size or bytes are wrong; looking for the next frame boundary",
                                            reference: "AMQP 0-9-1 §4.2.3", range: (7 + size)..<(8 + size)))
        }
    }

    package static func explain(_ spec: AMQPMethodSpec, _ method: AMQPMethod,
                         requests: [AMQPMethodID: AMQPMethod]) -> String? {
        guard spec.methodName == "close" || (spec.classID == 60 && spec.methodName == "return"),
              let code = method.replyCode else { return nil }
        var failed: AMQPMethodID?
        if let classID = method.classID, let methodID = method.methodID, classID != 0 {
            failed = AMQPMethodID(classID: UInt16(truncatingIfNeeded: classID), methodID: UInt16(truncatingIfNeeded: methodID))
        }
        let context = AMQPCloseExplanation.Context(replyCode: code, replyText: method.replyText ?? "",
                                                   failedMethod: failed, request: failed.flatMap { requests[$0] })
        return AMQPCloseExplanation.explain(context)
    }
}
