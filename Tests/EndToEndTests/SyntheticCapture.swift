import Foundation

/// Builds small pcap files of TCP conversations (raw IPv4 link type unless told otherwise) for
/// tests: a handshake, payload segments each way, a close. Sequence numbers are tracked per
/// direction. The same records can also be written as one interface of a pcapng file.
struct SyntheticCapture {
    /// The link layer each packet is wrapped in, with its LINKTYPE_ value.
    enum Link: UInt32 {
        case raw = 101
        case ethernet = 1
        case ipv4 = 228
        case linuxSLL2 = 276
    }

    /// One captured packet: time, the bytes kept, the length on the wire. `micros` may pass a
    /// second (pcap readers clamp it), as the counter below simply grows.
    struct Record {
        var seconds: UInt32
        var micros: UInt32
        var extraNanoseconds: UInt32
        var data: [UInt8]
        var originalLength: Int
    }

    private(set) var records: [Record] = []
    private var seq: [Bool: UInt32] = [true: 1000, false: 5000]
    var clientPort: UInt16
    var serverPort: UInt16
    var snapLength: UInt32
    var link: Link
    /// IPv6 addresses 2001:db8::1 (client) and 2001:db8::2 (server) instead of 127.0.0.1.
    var ipv6: Bool
    /// Each IPv6 packet carries a hop-by-hop options header (8 bytes of PadN) before TCP.
    var hopByHop: Bool
    var time: UInt32 = 1_700_000_000
    var micros: UInt32 = 0
    /// Added to each packet's time below the microsecond (for nanosecond captures).
    var extraNanoseconds: UInt32 = 0

    init(clientPort: UInt16 = 50_000, serverPort: UInt16 = 1883, snapLength: UInt32 = 262_144,
         link: Link = .raw, ipv6: Bool = false, hopByHop: Bool = false) {
        self.clientPort = clientPort
        self.serverPort = serverPort
        self.snapLength = snapLength
        self.link = link
        self.ipv6 = ipv6
        self.hopByHop = hopByHop
    }

    /// The capture as a classic pcap file (microsecond timestamps).
    var bytes: [UInt8] {
        var b: [UInt8] = []
        le32(0xA1B2_C3D4, into: &b); b += [2, 0, 4, 0]; le32(0, into: &b); le32(0, into: &b)
        le32(snapLength, into: &b); le32(link.rawValue, into: &b)
        for r in records {
            le32(r.seconds, into: &b); le32(r.micros, into: &b)
            le32(UInt32(r.data.count), into: &b); le32(UInt32(r.originalLength), into: &b)
            b += r.data
        }
        return b
    }

    /// Replaces the records (to write several conversations interleaved as one capture); each
    /// record's time is made `spacing` microseconds (a millisecond unless told) after the one before.
    mutating func replaceRecords(_ new: [Record], spacing: Int = 1000) {
        records = new
        for i in records.indices {
            let micros = i * spacing
            records[i].seconds = time + UInt32(micros / 1_000_000)
            records[i].micros = UInt32(micros % 1_000_000)
        }
    }

    /// One TCP packet; `capture` limits the bytes recorded (snapshot length).
    mutating func packet(toServer: Bool, flags: UInt8, payload: [UInt8], sequence: UInt32? = nil, capture: Int? = nil, advance: Bool = true) {
        let s = sequence ?? seq[toServer]!
        let (sp, dp) = toServer ? (clientPort, serverPort) : (serverPort, clientPort)
        var tcp: [UInt8] = [UInt8(sp >> 8), UInt8(sp & 0xFF), UInt8(dp >> 8), UInt8(dp & 0xFF)]
        tcp += [UInt8(s >> 24), UInt8(s >> 16 & 0xFF), UInt8(s >> 8 & 0xFF), UInt8(s & 0xFF)]
        tcp += [0, 0, 0, 0, 0x50, flags, 0xFF, 0xFF, 0, 0, 0, 0]
        tcp += payload
        let p = linkHeader() + (ipv6 ? ipv6Header(toServer: toServer, tcpLength: tcp.count) : ipv4Header(tcpLength: tcp.count)) + tcp
        let kept = min(capture ?? p.count, p.count)
        micros += 1000
        records.append(Record(seconds: time, micros: micros, extraNanoseconds: extraNanoseconds, data: Array(p.prefix(kept)), originalLength: p.count))
        if advance && sequence == nil {
            var n = UInt32(payload.count)
            if flags & 0x03 != 0 { n += 1 } // SYN or FIN
            seq[toServer] = s &+ n
        }
    }

    private func ipv4Header(tcpLength: Int) -> [UInt8] {
        let total = 20 + tcpLength
        return [0x45, 0, UInt8(total >> 8 & 0xFF), UInt8(total & 0xFF), 0, 0, 0x40, 0, 64, 6, 0, 0,
                127, 0, 0, 1, 127, 0, 0, 1]
    }

    private func ipv6Header(toServer: Bool, tcpLength: Int) -> [UInt8] {
        let hbh: [UInt8] = hopByHop ? [6, 0,                  // next header TCP, length 0 (8 bytes)
                                       1, 4, 0, 0, 0, 0] : [] // PadN, 4 bytes of padding
        let payloadLength = hbh.count + tcpLength
        let client: [UInt8] = [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1] // 2001:db8::1
        let server: [UInt8] = [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [2] // 2001:db8::2
        var h: [UInt8] = [0x60, 0, 0, 0, UInt8(payloadLength >> 8), UInt8(payloadLength & 0xFF),
                          hopByHop ? 0 : 6, 64]                  // next header: hop-by-hop or TCP; hop limit
        h += toServer ? client + server : server + client
        return h + hbh
    }

    private func linkHeader() -> [UInt8] {
        let etherType: [UInt8] = ipv6 ? [0x86, 0xDD] : [0x08, 0x00]
        switch link {
        case .raw, .ipv4:
            return []
        case .ethernet:
            return [2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1] + etherType // destination, source MAC
        case .linuxSLL2:
            return etherType + [0, 0,                            // protocol, reserved
                                0, 0, 0, 1,                      // interface index
                                0, 1, 0, 6,                      // ARPHRD_ETHER, PACKET_HOST, address length 6
                                2, 0, 0, 0, 0, 1, 0, 0]          // address, padded to 8
        }
    }

    mutating func handshake() {
        packet(toServer: true, flags: 0x02, payload: [])
        packet(toServer: false, flags: 0x12, payload: [])
        packet(toServer: true, flags: 0x10, payload: [])
    }

    mutating func send(toServer: Bool, _ payload: [UInt8]) {
        packet(toServer: toServer, flags: 0x18, payload: payload)
    }

    mutating func close() {
        packet(toServer: true, flags: 0x11, payload: [])
        packet(toServer: false, flags: 0x11, payload: [])
    }

    /// Writes the capture to a temporary file.
    func write(name: String) throws -> String {
        try Self.write(bytes, name: name, suffix: "pcap")
    }

    static func write(_ bytes: [UInt8], name: String, suffix: String) throws -> String {
        let path = Scratch.directory + "\(name).\(suffix)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A little-endian pcapng file with one interface per capture, each with its own link type
    /// and `if_tsresol` (a power of ten: 3 ms, 6 µs, 9 ns). Every capture's records follow its
    /// interface's in turn, so give later captures later times.
    static func pcapng(_ interfaces: [(capture: SyntheticCapture, tsresol: UInt8)]) -> [UInt8] {
        var out: [UInt8] = []
        func block(_ type: UInt32, _ body: [UInt8]) {
            var body = body
            while body.count % 4 != 0 { body.append(0) }
            let length = UInt32(12 + body.count)
            le32(type, into: &out); le32(length, into: &out); out += body; le32(length, into: &out)
        }
        var shb: [UInt8] = []
        le32(0x1A2B_3C4D, into: &shb); shb += [1, 0, 0, 0] + [UInt8](repeating: 0xFF, count: 8) // version 1.0, length unknown
        block(0x0A0D_0D0A, shb)
        for (c, resolution) in interfaces {
            var idb: [UInt8] = [UInt8(c.link.rawValue & 0xFF), UInt8(c.link.rawValue >> 8), 0, 0]
            le32(c.snapLength, into: &idb)
            idb += [9, 0, 1, 0, resolution, 0, 0, 0]                   // if_tsresol, padded
            idb += [0, 0, 0, 0]                                        // opt_endofopt
            block(1, idb)
        }
        for (index, (c, resolution)) in interfaces.enumerated() {
            var perSecond: UInt64 = 1
            for _ in 0..<resolution { perSecond *= 10 }
            for r in c.records {
                let nanos = UInt64(r.micros) * 1000 + UInt64(r.extraNanoseconds)
                let ts = UInt64(r.seconds) * perSecond + nanos * perSecond / 1_000_000_000
                var epb: [UInt8] = []
                le32(UInt32(index), into: &epb)
                le32(UInt32(ts >> 32), into: &epb); le32(UInt32(ts & 0xFFFF_FFFF), into: &epb)
                le32(UInt32(r.data.count), into: &epb); le32(UInt32(r.originalLength), into: &epb)
                block(6, epb + r.data)
            }
        }
        return out
    }
}

private func le32(_ v: UInt32, into b: inout [UInt8]) {
    b += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
}

/// MQTT packets for synthetic captures.
enum MQTTBytes {
    static func string(_ s: String) -> [UInt8] {
        let u = Array(s.utf8)
        return [UInt8(u.count >> 8), UInt8(u.count & 0xFF)] + u
    }

    static func remainingLength(_ n: Int) -> [UInt8] {
        var n = n, out: [UInt8] = []
        repeat {
            var b = UInt8(n % 128); n /= 128
            if n > 0 { b |= 0x80 }
            out.append(b)
        } while n > 0
        return out
    }

    /// CONNECT 3.1.1 with a user name and password.
    static func connect(clientID: String, user: String? = nil, password: String? = nil) -> [UInt8] {
        var flags: UInt8 = 0x02
        if user != nil { flags |= 0x80 }
        if password != nil { flags |= 0x40 }
        var body = string("MQTT") + [4, flags, 0, 60] + string(clientID)
        if let user { body += string(user) }
        if let password { body += string(password) }
        return [0x10] + remainingLength(body.count) + body
    }

    static let connack: [UInt8] = [0x20, 0x02, 0x00, 0x00]

    static func publish(topic: String, payload: [UInt8], qos: Int = 0, id: UInt16 = 1) -> [UInt8] {
        var body = string(topic)
        if qos > 0 { body += [UInt8(id >> 8), UInt8(id & 0xFF)] }
        body += payload
        return [0x30 | UInt8(qos << 1)] + remainingLength(body.count) + body
    }

    static let disconnect: [UInt8] = [0xE0, 0x00]
}

extension MQTTBytes {
    /// A CONNECT of protocol level 3 (3.1, "MQIsdp"), 4 (3.1.1) or 5 (5.0, no properties), clean session.
    static func connect(clientID: String, level: UInt8) -> [UInt8] {
        var body = string(level == 3 ? "MQIsdp" : "MQTT") + [level, 0x02, 0, 60]
        if level == 5 { body += [0] }                              // property length 0
        body += string(clientID)
        return [0x10] + remainingLength(body.count) + body
    }

    /// A QoS 0 MQTT 5.0 PUBLISH: topic, property length and properties, payload.
    static func publish5(topic: String, properties: [UInt8], payload: [UInt8]) -> [UInt8] {
        let body = string(topic) + remainingLength(properties.count) + properties + payload
        return [0x30] + remainingLength(body.count) + body
    }
}
