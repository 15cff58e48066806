import Dissection

/// The second stage's cursor over one PDU: reads MQTT's wire types into the typed packet's
/// values, each with its byte range (offsets from the PDU start), and records problems.
///
/// Reads stop at the end of the current region: the packet (its remaining length) or a
/// property list (its property length). A read that runs past a region's declared end is a
/// problem in the bytes; one that runs past the held bytes only (a truncated or over-limit
/// PDU) is noted once, and the packet's parser stops there.
struct PacketParser {
    enum Region {
        case packet
        /// A property list, by its label (`Properties`, `Will Properties`).
        case properties(String)
    }

    let bytes: ArraySlice<UInt8>
    let wireLength: Int
    let version: MQTTVersion
    let spec: Spec
    let type: MQTTPacketType
    let flags: UInt8
    /// Offset of the variable header: the fixed header's length.
    let bodyStart: Int
    var offset: Int
    /// Declared end of the current region.
    var regionEnd: Int
    var region: Region = .packet
    var problems: [Problem] = []
    /// Problems beyond `maxProblems`, counted, not kept: a hostile packet must not cost memory per byte.
    var omittedProblems = 0
    /// The Topic Alias Maximum of a CONNECT's or CONNACK's properties read whole (0 when absent).
    var topicAliasMaximum: Int?
    /// At most this many problems are kept per packet.
    static let maxProblems = 32
    /// A read ran past the held bytes: the rest of the packet is not decoded.
    private(set) var ranOutOfHeldBytes = false
    /// A read ran past the remaining length.
    private(set) var ranPastContent = false

    /// Where `bytes` lie: the decoder parses inside their `withUnsafeBufferPointer`, which the
    /// parser must not outlive. Topic names are read there: a slice of the bytes per name
    /// retained and released the packet's array.
    let address: UnsafePointer<UInt8>

    init(bytes: ArraySlice<UInt8>, wireLength: Int, bodyStart: Int, version: MQTTVersion,
         type: MQTTPacketType, flags: UInt8, address: UnsafePointer<UInt8>) {
        self.bytes = bytes
        self.address = address
        self.wireLength = wireLength
        self.version = version
        self.spec = Spec(version: version)
        self.type = type
        self.flags = flags
        self.bodyStart = bodyStart
        self.offset = bodyStart
        self.regionEnd = wireLength
    }

    /// End of the held bytes of the packet.
    var heldEnd: Int { min(bytes.count, wireLength) }
    /// Reads may go up to here.
    var limit: Int { min(regionEnd, heldEnd) }
    /// Bytes left in the region, held or not.
    var remainingInRegion: Int { max(0, regionEnd - offset) }
    var isAtRegionEnd: Bool { offset >= regionEnd }
    var stopped: Bool { ranOutOfHeldBytes || ranPastContent }

    func byte(at i: Int) -> UInt8 { bytes[bytes.startIndex + i] }

    /// The held bytes within `range` (clamped to what is held).
    func slice(_ range: Range<Int>) -> ArraySlice<UInt8> {
        let lower = min(max(0, range.lowerBound), bytes.count)
        let upper = min(max(lower, range.upperBound), bytes.count)
        return bytes[(bytes.startIndex + lower)..<(bytes.startIndex + upper)]
    }

    // MARK: Problems

    mutating func problem(_ severity: Problem.Severity, _ code: ProblemCode, _ message: String,
                          _ reference: String? = nil, range: Range<Int>? = nil) {
        if problems.count < PacketParser.maxProblems {
            problems.append(Problem(severity, code, message, reference: reference, range: range))
        } else {
            omittedProblems += 1
        }
    }

    /// Whether one more problem would be kept (callers may skip building its message otherwise).
    var canRecordProblem: Bool { problems.count < PacketParser.maxProblems }

    /// The problems to report: those kept, and a note saying how many more there were.
    var reportedProblems: [Problem] {
        guard omittedProblems > 0 else { return problems }
        return problems + [Problem(.note, .problemsOmitted, "\(omittedProblems) more problems in this packet are not listed")]
    }

    mutating func error(_ code: ProblemCode, _ message: String, _ reference: String? = nil, range: Range<Int>? = nil) {
        problem(.error, code, message, reference, range: range)
    }

    /// Whether `n` more bytes can be read; reports why not.
    mutating func need(_ n: Int, _ what: @autoclosure () -> String) -> Bool {
        if n >= 0, offset <= limit, n <= limit - offset { return true }
        if offset &+ n > regionEnd {
            switch region {
            case .packet:
                if !ranPastContent {
                    ranPastContent = true
                    error(.remainingLengthShort,
                          "The \(what()) runs past the end of the packet: the remaining length (\(wireLength - bodyStart) bytes) is too short for the content",
                          spec.remainingLength, range: offset..<max(offset, min(heldEnd, wireLength)))
                }
            case .properties(let label):
                error(.propertyLengthShort,
                      "The \(what()) runs past the end of the \(label.lowercased()) (property length too short)",
                      "MQTT 5.0 §2.2.2.1", range: offset..<max(offset, limit))
            }
        } else if !ranOutOfHeldBytes {
            ranOutOfHeldBytes = true
            problem(.note, .notHeld,
                    "The \(what()) and what follows are not decoded: the packet's bytes were not all captured or kept",
                    range: offset..<max(offset, limit))
        }
        return false
    }

    // MARK: Integers

    mutating func readUInt8(_ what: @autoclosure () -> String) -> UInt8? {
        guard need(1, what()) else { return nil }
        defer { offset += 1 }
        return byte(at: offset)
    }

    mutating func readUInt16(_ what: @autoclosure () -> String) -> UInt16? {
        guard need(2, what()) else { return nil }
        defer { offset += 2 }
        return UInt16(byte(at: offset)) << 8 | UInt16(byte(at: offset + 1))
    }

    mutating func readUInt32(_ what: @autoclosure () -> String) -> UInt32? {
        guard need(4, what()) else { return nil }
        defer { offset += 4 }
        var v: UInt32 = 0
        for i in 0..<4 { v = v << 8 | UInt32(byte(at: offset + i)) }
        return v
    }

    /// A Variable Byte Integer inside the body (property length, subscription identifier).
    mutating func readVariableByteInteger(_ what: @autoclosure () -> String) -> Int? {
        let start = offset
        let available = slice(offset..<max(offset, limit))
        switch VariableByteInteger.decode(available) {
        case .needMore:
            _ = need(available.count + 1, what())
            return nil
        case .tooLong:
            error(.malformedVariableByteInteger,
                  "The \(what()) is a Variable Byte Integer longer than 4 bytes: a Malformed Packet",
                  "MQTT 5.0 §1.5.5", range: start..<(start + 4))
            offset = limit
            ranPastContent = true
            return nil
        case .value(let v, let n, let minimal):
            offset += n
            if !minimal {
                error(.nonMinimalVariableByteInteger,
                      "The \(what()) is encoded in more bytes than needed",
                      "MQTT 5.0 §1.5.5", range: start..<offset)
            }
            return v
        }
    }

    // MARK: Strings and binary data

    /// A UTF-8 Encoded String: 2-byte length, then UTF-8 without U+0000 (MQTT 5.0 §1.5.4, 3.1.1 §1.5.3).
    mutating func readString(_ what: @autoclosure () -> String) -> (value: String, range: Range<Int>)? {
        let start = offset
        guard let length = readUInt16("length of the \(what())") else { return nil }
        guard need(Int(length), what()) else { return nil }
        let body = slice(offset..<(offset + Int(length)))
        offset += Int(length)
        let range = start..<offset
        if let text = Preview.validUTF8(body) {
            if body.contains(0) {
                error(.utf8Null, "The \(what()) contains the null character U+0000", spec.utf8String, range: range)
            }
            return (text, range)
        }
        error(.invalidUtf8, "The \(what()) is not well-formed UTF-8", spec.utf8String, range: range)
        return (String(decoding: body, as: UTF8.self), range)
    }

    /// A PUBLISH's Topic Name: `readString`, the String taken from `recent` when these bytes
    /// were a topic lately.
    /// `plain`: every byte is printable ASCII other than the wildcards `+` and `#` (so it holds no
    /// null character and no wildcard: `checkTopicName` need not look again), as most topics are.
    mutating func readTopicName(_ recent: inout RecentStrings) -> TopicName? {
        let start = offset
        guard let length = readUInt16("length of the topic name") else { return nil }
        guard need(Int(length), "topic name") else { return nil }
        let from = offset
        offset += Int(length)
        let range = start..<offset
        var valid = true
        // `need` keeps the name within the held bytes.
        let name = UnsafeBufferPointer(start: address + from, count: Int(length))
        let plain = ByteWords.isPrintableASCII(name, without: UInt8(ascii: "+"), UInt8(ascii: "#"))
        let text = recent.string(name) { bytes in
            if let text = Preview.validUTF8(bytes) { return text }
            valid = false
            return String(decoding: bytes, as: UTF8.self)
        }
        if !valid {
            error(.invalidUtf8, "The topic name is not well-formed UTF-8", spec.utf8String, range: range)
        } else if !plain, name.contains(0) {
            error(.utf8Null, "The topic name contains the null character U+0000", spec.utf8String, range: range)
        }
        return TopicName(value: text, range: range, plain: plain)
    }

    /// Binary Data: 2-byte length, then bytes (MQTT 5.0 §1.5.6).
    mutating func readBinary(_ what: @autoclosure () -> String) -> (value: ArraySlice<UInt8>, range: Range<Int>)? {
        let start = offset
        guard let length = readUInt16("length of the \(what())") else { return nil }
        guard need(Int(length), what()) else { return nil }
        let body = slice(offset..<(offset + Int(length)))
        offset += Int(length)
        return (body, start..<offset)
    }

    // MARK: Packet identifier

    /// MQTT 5.0 §2.2.1 / 3.1.1 §2.3.1: a non-zero 16-bit identifier.
    mutating func packetIdentifier() -> Ranged<Int>? {
        let start = offset
        guard let id = readUInt16("packet identifier") else { return nil }
        if id == 0 {
            error(.zeroPacketId, "The packet identifier is 0; it must be non-zero", spec.packetIdentifier, range: start..<offset)
        }
        return Ranged(Int(id), start..<offset)
    }

    // MARK: Payload

    /// The rest of the region: the held bytes and the full length.
    mutating func readRest() -> (held: ArraySlice<UInt8>, length: Int, start: Int) {
        let start = offset
        let length = remainingInRegion
        let held = slice(offset..<max(offset, limit))
        offset = regionEnd
        return (held, length, start)
    }
}

/// A topic name as `PacketParser.readTopicName` read it. A struct, not a tuple: an optional tuple
/// holding a String was destroyed through the generic Optional's value witness (about 210
/// instructions a PUBLISH; callgrind, the bench capture's MQTT part).
struct TopicName {
    var value: String
    var range: Range<Int>
    /// Every byte printable ASCII other than `+` and `#`.
    var plain: Bool
}
