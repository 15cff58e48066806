import Dissection

/// A table's input as bytes, passed from one thread to another. In a run in lanes
/// (`Pipeline.runInLanes`) each lane dissects its own connections on its own thread; a table sums
/// every connection, and counting into two tables merged at the end would have to apply the row
/// limits and the "first seen" rules across them. Instead the second lane writes what a table
/// counts of each event as a record (`TableRecordWriter`), and the one `TableRenderer`, on the
/// caller's thread, counts the records in their place among the first lane's events
/// (`TableRecordReader`): the tables are those one renderer makes from the events themselves.
///
/// Only bytes cross: strings a table counts by (kinds, topics, queues, exchanges, routing keys)
/// are written once, then named by number; a connection's endpoints go with its first record
/// from the lane. Passing references to the events' facts instead cost more than it saved: every
/// PDU's facts and endpoints were made on one core and read and freed on the other.
enum TableRecord {
    enum Tag: UInt8 {
        /// An event the caller's lane counted as it came: only the lane's weight.
        case counted = 0
        /// A string named by the next number.
        case string = 1
        case pdu = 2
        /// A note's problem.
        case problem = 3
        case closed = 4
    }

    /// Which optional facts a PDU record carries, in this order after its fixed part.
    struct Present: OptionSet {
        let rawValue: UInt16
        static let topic = Present(rawValue: 1 << 0)
        static let payloadLength = Present(rawValue: 1 << 1)
        static let qos = Present(rawValue: 1 << 2)
        /// No value: the bit is the flag.
        static let retained = Present(rawValue: 1 << 3)
        static let clientID = Present(rawValue: 1 << 4)
        static let connectVersion = Present(rawValue: 1 << 5)
        static let version = Present(rawValue: 1 << 6)
        static let channel = Present(rawValue: 1 << 7)
        static let queue = Present(rawValue: 1 << 8)
        static let ackedCount = Present(rawValue: 1 << 9)
        static let identity = Present(rawValue: 1 << 10)
        static let message = Present(rawValue: 1 << 11)
        static let close = Present(rawValue: 1 << 12)
        static let problems = Present(rawValue: 1 << 13)
        /// The connection's endpoints and protocol: the lane's first record of it.
        static let introduction = Present(rawValue: 1 << 14)
        static let toClient = Present(rawValue: 1 << 15)
    }

    /// The most bytes a PDU record's fixed-width part takes: tag, flags, stream, time, kind, and
    /// topic, payload length, QoS, channel, queue and acknowledged count when present.
    static let maxFixedPart = 1 + 2 + 8 + 13 + 4 + 4 + 8 + 8 + 8 + 4 + 8

    /// Strings named by number at most, and their bytes at most: past either, a string is
    /// written in full each time, so both threads' tables of names stay bounded however many
    /// distinct topics a capture has. Longer strings are always written in full (an MQTT topic can
    /// be 64 KB).
    static let maxNamedStrings = 16_384
    static let maxNamedBytes = 1 << 20
    static let maxNamedLength = 256
    /// Connections remembered as introduced at most: past it, the set is emptied (a connection
    /// that moves to the caller's lane and closes there is never seen closing here), and a
    /// connection introduced again only repeats its endpoints.
    static let maxIntroduced = 4_096
    /// The number that says "written in full, here".
    static let inline = UInt32.max
}

/// Writes records of a table's input into the second lane's bytes: one writer per run, used by
/// the lane's thread alone.
public final class TableRecordWriter {
    /// A string as a key (`DigestKey`: hashed by FNV-1a, as the table's topic rows are).
    private typealias Key = DigestKey

    // The lane's thread alone.
    @exclusivity(unchecked) private var numbers: [Key: UInt32] = [:]
    /// The strings numbered lately, by their digest's low bits: most lookups end here, with one
    /// digest and one comparison (equal strings made from the same literal compare at once).
    @exclusivity(unchecked) private var recent = [(digest: UInt64, number: UInt32, name: String)](repeating: (0, 0, ""), count: recentSlots)
    private static let recentSlots = 1024
    /// Connections whose endpoints went with a record already (forgotten when they close).
    @exclusivity(unchecked) private var introduced: Set<Int> = []
    @exclusivity(unchecked) private var lastIntroduced = -1
    /// Bytes of the strings named so far.
    @exclusivity(unchecked) private(set) var namedBytes = 0

    /// Connections remembered as introduced (for the tests: it stays bounded).
    var introducedCount: Int { introduced.count }

    /// The bounds of `TableRecord` (tests make them small).
    private let maxNamedStrings: Int, maxNamedBytes: Int, maxNamedLength: Int, maxIntroduced: Int

    public convenience init() { self.init(maxNamedStrings: TableRecord.maxNamedStrings) }

    init(maxNamedStrings: Int, maxNamedBytes: Int = TableRecord.maxNamedBytes, maxNamedLength: Int = TableRecord.maxNamedLength,
         maxIntroduced: Int = TableRecord.maxIntroduced) {
        self.maxNamedStrings = maxNamedStrings
        self.maxNamedBytes = maxNamedBytes
        self.maxNamedLength = maxNamedLength
        self.maxIntroduced = maxIntroduced
    }

    /// Writes the record of what `TableRenderer.render` would count of `event`.
    public func write(_ event: OutputEvent, into sink: inout ByteSink) {
        switch event {
        case .pdu(let event):
            let ctx = event.context, direction = event.direction, pdu = event.pdu
            let facts = pdu.summaryFacts
            // Few PDUs have any of a message, an identity or a close: one question spares the three.
            let rare = facts.hasIdentityMessageOrClose
            // Strings first: a string's number is given before the record that uses it.
            let kind = number(facts.kind, into: &sink)
            let topic = facts.topic.map { number($0, into: &sink) }
            let queue = facts.queue.map { number($0, into: &sink) }
            // The rare facts are looked at only when there are any: an optional struct of
            // strings, even nil, is destroyed through the runtime's generic value witnesses.
            // A message's strings' numbers, when it has one.
            var messageNumbers: (UInt32?, UInt32?, UInt32?)?
            var hasIdentity = false, hasClose = false
            if rare {
                if let m = facts.message {
                    messageNumbers = (m.method.map { number($0, into: &sink) }, m.exchange.map { number($0, into: &sink) },
                                      m.routingKey.map { number($0, into: &sink) })
                }
                hasIdentity = facts.identity != nil
                hasClose = facts.close != nil
            }
            let payloadLength = facts.payloadLength, qos = facts.qos, channel = facts.channel, ackedCount = facts.ackedCount
            let clientID = facts.clientID, connectVersion = facts.connectVersion, version = facts.version
            let problems = pdu.problems
            var present: TableRecord.Present = []
            if topic != nil { present.insert(.topic) }
            if payloadLength != nil { present.insert(.payloadLength) }
            if qos != nil { present.insert(.qos) }
            if facts.retained { present.insert(.retained) }
            if clientID != nil { present.insert(.clientID) }
            if connectVersion != nil { present.insert(.connectVersion) }
            if version != nil { present.insert(.version) }
            if channel != nil { present.insert(.channel) }
            if queue != nil { present.insert(.queue) }
            if ackedCount != nil { present.insert(.ackedCount) }
            if hasIdentity { present.insert(.identity) }
            if messageNumbers != nil { present.insert(.message) }
            if hasClose { present.insert(.close) }
            if !problems.isEmpty { present.insert(.problems) }
            if direction == .toClient { present.insert(.toClient) }
            // Most records are of the same connection as the one before: no set lookup then.
            if ctx.stream != lastIntroduced, introduced.count >= maxIntroduced { introduced.removeAll() }
            let introducing = ctx.stream != lastIntroduced && introduced.insert(ctx.stream).inserted
            lastIntroduced = ctx.stream
            if introducing { present.insert(.introduction) }

            // The fixed-width part, stored in place with one capacity check; then the rest.
            sink.appendInPlace(maximum: TableRecord.maxFixedPart) { p in
                var at = 0
                func put<T: FixedWidthInteger>(_ value: T) {
                    p.storeBytes(of: value, toByteOffset: at, as: T.self)
                    at += MemoryLayout<T>.size
                }
                put(TableRecord.Tag.pdu.rawValue)
                put(present.rawValue)
                put(Int64(ctx.stream))
                put(ctx.time.seconds)
                put(ctx.time.nanoseconds)
                put(UInt8(truncatingIfNeeded: ctx.time.fractionalDigits))
                put(kind)
                if let topic { put(topic) }
                if let payloadLength { put(Int64(payloadLength)) }
                if let qos { put(Int64(qos)) }
                if let channel { put(Int64(channel)) }
                if let queue { put(queue) }
                if let ackedCount { put(Int64(ackedCount)) }
                return at
            }
            // Strings with no number are written in full after it, in the same order.
            if kind == TableRecord.inline { Self.string(facts.kind, into: &sink) }
            if topic == TableRecord.inline, let name = facts.topic { Self.string(name, into: &sink) }
            if queue == TableRecord.inline, let name = facts.queue { Self.string(name, into: &sink) }
            if introducing {
                let endpoints = ctx.endpoints
                Self.string(endpoints.source, into: &sink)
                Self.string(endpoints.destination, into: &sink)
                Self.string(pdu.protocolName, into: &sink)
            }
            if let clientID { Self.string(clientID, into: &sink) }
            if let connectVersion { Self.string(connectVersion, into: &sink) }
            if let version { Self.string(version, into: &sink) }
            if hasIdentity, let identity = facts.identity {
                Self.strings([identity.saslUser, identity.vhost, identity.product, identity.productVersion, identity.platform], into: &sink)
            }
            if let messageNumbers, let message = facts.message {
                var mask: UInt8 = 0
                if message.method != nil { mask |= 1 }
                if message.exchange != nil { mask |= 2 }
                if message.routingKey != nil { mask |= 4 }
                sink.append(byte: mask)
                if let n = messageNumbers.0, let s = message.method { name(n, s, into: &sink) }
                if let n = messageNumbers.1, let s = message.exchange { name(n, s, into: &sink) }
                if let n = messageNumbers.2, let s = message.routingKey { name(n, s, into: &sink) }
                Self.optional(message.bodySize, into: &sink)
            }
            if hasClose, let close = facts.close {
                Self.optional(close.replyCode, into: &sink)
                Self.strings([close.replyCodeName, close.replyText, close.failedMethod], into: &sink)
            }
            if !problems.isEmpty {
                Self.raw(UInt32(problems.count), into: &sink)
                for p in problems {
                    Self.string(p.code, into: &sink)
                    Self.string(p.description, into: &sink)
                }
            }
        case .streamNote(_, let p), .captureNote(let p):
            sink.append(byte: TableRecord.Tag.problem.rawValue)
            Self.string(p.code, into: &sink)
            Self.string(p.description, into: &sink)
        case .connectionClosed(let c):
            introduced.remove(c.stream)
            if lastIntroduced == c.stream { lastIntroduced = -1 }
            sink.append(byte: TableRecord.Tag.closed.rawValue)
            Self.raw(Int64(c.stream), into: &sink)
            Self.string(c.client, into: &sink)
            Self.string(c.server, into: &sink)
            Self.string(c.protocolName, into: &sink)
            Self.time(c.firstSeen, into: &sink)
            Self.time(c.lastSeen, into: &sink)
            Self.raw(Int64(c.bytesToServer), into: &sink)
            Self.raw(Int64(c.bytesToClient), into: &sink)
        }
    }

    /// The number of `s`, writing its definition first if it has none yet; `TableRecord.inline`
    /// when the numbers are all taken (the string is then written where it is used).
    private func number(_ s: String, into sink: inout ByteSink) -> UInt32 {
        let key = Key(s)
        let slot = Int(truncatingIfNeeded: key.digest) & (Self.recentSlots - 1)
        if recent[slot].digest == key.digest, recent[slot].name == s { return recent[slot].number }
        if let n = numbers[key] {
            recent[slot] = (key.digest, n, s)
            return n
        }
        let length = s.utf8.count
        guard numbers.count < maxNamedStrings, length <= maxNamedLength,
              namedBytes + length <= maxNamedBytes else { return TableRecord.inline }
        let n = UInt32(numbers.count)
        numbers[key] = n
        namedBytes += length
        recent[slot] = (key.digest, n, s)
        sink.append(byte: TableRecord.Tag.string.rawValue)
        Self.string(s, into: &sink)
        return n
    }

    /// Where a string is used: its number, and the string itself when it has none (`TableRecord.inline`).
    private func name(_ number: UInt32, _ s: String, into sink: inout ByteSink) {
        Self.raw(number, into: &sink)
        if number == TableRecord.inline { Self.string(s, into: &sink) }
    }

    private static func raw<T: FixedWidthInteger>(_ value: T, into sink: inout ByteSink) {
        withUnsafeBytes(of: value) { sink.append(bytes: $0.bindMemory(to: UInt8.self)) }
    }

    private static func time(_ t: Timestamp, into sink: inout ByteSink) {
        raw(t.seconds, into: &sink)
        raw(t.nanoseconds, into: &sink)
        sink.append(byte: UInt8(t.fractionalDigits))
    }

    private static func string(_ s: String, into sink: inout ByteSink) {
        raw(UInt32(s.utf8.count), into: &sink)
        sink.append(s)
    }

    private static func optional(_ value: Int?, into sink: inout ByteSink) {
        sink.append(byte: value == nil ? 0 : 1)
        if let value { raw(Int64(value), into: &sink) }
    }

    /// A byte saying which of `values` follow, then those.
    private static func strings(_ values: [String?], into sink: inout ByteSink) {
        var mask: UInt8 = 0
        for (i, v) in values.enumerated() where v != nil { mask |= 1 << UInt8(i) }
        sink.append(byte: mask)
        for case let v? in values { string(v, into: &sink) }
    }
}

/// Reads the records of a table's input back into the table, in order: one reader per run, on
/// the caller's thread, for the records of one `TableRecordWriter` and the marks of
/// `TableRenderer.count(_:markingIn:)`.
public final class TableRecordReader {
    // The caller's thread alone.
    @exclusivity(unchecked) private var strings: [String] = []
    /// The facts of the record being read: one box, reset for each.
    @exclusivity(unchecked) private var facts = PDUFacts(kind: "")

    public init() {}

    /// Counts the records in `bytes` into `table`: whole records, as written.
    public func read(_ bytes: UnsafeBufferPointer<UInt8>, into table: inout TableRenderer) {
        var r = Reader(bytes: bytes)
        while !r.atEnd {
            switch TableRecord.Tag(rawValue: r.byte()) {
            case .counted:
                continue
            case .string:
                strings.append(r.string())
            case .pdu:
                let present = TableRecord.Present(rawValue: r.raw(UInt16.self))
                let stream = Int(r.raw(Int64.self))
                let time = r.time()
                // The fixed-width part first, then the strings written in full, as written.
                let kind = r.raw(UInt32.self)
                let topic = present.contains(.topic) ? r.raw(UInt32.self) : nil
                let payloadLength = present.contains(.payloadLength) ? Int(r.raw(Int64.self)) : nil
                let qos = present.contains(.qos) ? Int(r.raw(Int64.self)) : nil
                let channel = present.contains(.channel) ? Int(r.raw(Int64.self)) : nil
                let queue = present.contains(.queue) ? r.raw(UInt32.self) : nil
                let ackedCount = present.contains(.ackedCount) ? Int(r.raw(Int64.self)) : nil
                facts.reset(kind: named(kind, &r))
                if let topic { facts.topic = named(topic, &r) }
                if let queue { facts.queue = named(queue, &r) }
                if let payloadLength { facts.payloadLength = payloadLength }
                if let qos { facts.qos = qos }
                if present.contains(.retained) { facts.retained = true }
                if let channel { facts.channel = channel }
                if let ackedCount { facts.ackedCount = ackedCount }
                var source = "", destination = "", protocolName = ""
                if present.contains(.introduction) {
                    source = r.string()
                    destination = r.string()
                    protocolName = r.string()
                }
                if present.contains(.clientID) { facts.clientID = r.string() }
                if present.contains(.connectVersion) { facts.connectVersion = r.string() }
                if present.contains(.version) { facts.version = r.string() }
                if present.contains(.identity) {
                    let s = r.strings(5)
                    var identity = PDUFacts.ClientIdentity()
                    identity.saslUser = s[0]
                    identity.vhost = s[1]
                    identity.product = s[2]
                    identity.productVersion = s[3]
                    identity.platform = s[4]
                    facts.identity = identity
                }
                if present.contains(.message) {
                    let mask = r.byte()
                    let method = mask & 1 != 0 ? named(r.raw(UInt32.self), &r) : nil
                    let exchange = mask & 2 != 0 ? named(r.raw(UInt32.self), &r) : nil
                    let routingKey = mask & 4 != 0 ? named(r.raw(UInt32.self), &r) : nil
                    facts.message = PDUFacts.MessageFacts(method: method, exchange: exchange, routingKey: routingKey,
                                                          bodySize: r.optional())
                }
                if present.contains(.close) {
                    let code = r.optional()
                    let s = r.strings(3)
                    facts.close = PDUFacts.CloseFacts(replyCode: code, replyCodeName: s[0], replyText: s[1], failedMethod: s[2])
                }
                // A connection's first record from the lane introduces it; a table that has no
                // row for it yet has seen none of its PDUs, so it asks for these only then.
                table.notePDU(facts, stream: stream, time: time, direction: present.contains(.toClient) ? .toClient : .toServer,
                              source: source, destination: destination, protocolName: protocolName)
                if present.contains(.problems) {
                    for _ in 0..<Int(r.raw(UInt32.self)) {
                        // Read before counting: the example is asked for only the first time.
                        let code = r.string(), example = r.string()
                        table.noteProblem(code: code, example: example)
                    }
                }
            case .problem:
                let code = r.string(), example = r.string()
                table.noteProblem(code: code, example: example)
            case .closed:
                let stream = Int(r.raw(Int64.self))
                let client = r.string(), server = r.string(), protocolName = r.string()
                let first = r.time(), last = r.time()
                let toServer = Int(r.raw(Int64.self)), toClient = Int(r.raw(Int64.self))
                table.noteClosed(ConnectionSummary(stream: stream, client: client, server: server, protocolName: protocolName,
                                                   firstSeen: first, lastSeen: last, bytesToServer: toServer,
                                                   bytesToClient: toClient, closeReason: ""))
            case nil:
                preconditionFailure("not a table record: records are read whole, as they were written")
            }
        }
    }

    /// The string named `number`, or the one written in full next.
    private func named(_ number: UInt32, _ r: inout Reader) -> String {
        number == TableRecord.inline ? r.string() : strings[Int(number)]
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var at = 0

        var atEnd: Bool { at >= bytes.count }

        mutating func byte() -> UInt8 {
            defer { at += 1 }
            return bytes[at]
        }

        mutating func raw<T: FixedWidthInteger>(_: T.Type) -> T {
            precondition(at + MemoryLayout<T>.size <= bytes.count, "a table record ends early")
            defer { at += MemoryLayout<T>.size }
            return UnsafeRawPointer(bytes.baseAddress!).loadUnaligned(fromByteOffset: at, as: T.self)
        }

        mutating func time() -> Timestamp {
            let seconds = raw(Int64.self), nanoseconds = raw(UInt32.self)
            return Timestamp(seconds: seconds, nanoseconds: nanoseconds, fractionalDigits: Int(byte()))
        }

        mutating func string() -> String {
            let n = Int(raw(UInt32.self))
            precondition(at + n <= bytes.count, "a table record ends early")
            defer { at += n }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[at..<at + n]), as: UTF8.self)
        }

        /// A byte saying which of `count` strings follow, then those.
        mutating func strings(_ count: Int) -> [String?] {
            let mask = byte()
            return (0..<count).map { i in mask >> UInt8(i) & 1 == 1 ? string() : nil }
        }

        mutating func optional() -> Int? {
            byte() == 0 ? nil : Int(raw(Int64.self))
        }
    }
}

extension TableRenderer {
    /// Counts `event` as `render` does, and writes one byte for it into `sink` (which
    /// `TableRecordReader` passes over): a run in lanes weighs a lane's work by the bytes it writes.
    public mutating func count(_ event: OutputEvent, markingIn sink: inout ByteSink) {
        var nothing = ""
        render(event, into: &nothing)
        sink.append(byte: TableRecord.Tag.counted.rawValue)
    }
}
