import Foundation

/// Builds small pcap files of TCP conversations (raw IPv4 link type) for tests: a handshake,
/// payload segments each way, a close. Sequence numbers are tracked per direction.
struct SyntheticCapture {
    private(set) var bytes: [UInt8]
    private var seq: [Bool: UInt32] = [true: 1000, false: 5000]
    var clientPort: UInt16
    var serverPort: UInt16
    var time: UInt32 = 1_700_000_000
    var micros: UInt32 = 0

    init(clientPort: UInt16 = 50_000, serverPort: UInt16 = 1883, snapLength: UInt32 = 262_144) {
        self.clientPort = clientPort
        self.serverPort = serverPort
        bytes = []
        le32(0xA1B2_C3D4); bytes += [2, 0, 4, 0]; le32(0); le32(0); le32(snapLength); le32(101) // LINKTYPE_RAW
    }

    private mutating func le32(_ v: UInt32) { bytes += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }

    /// One IPv4/TCP packet; `capture` limits the bytes recorded (snapshot length).
    mutating func packet(toServer: Bool, flags: UInt8, payload: [UInt8], sequence: UInt32? = nil, capture: Int? = nil, advance: Bool = true) {
        let s = sequence ?? seq[toServer]!
        let total = 20 + 20 + payload.count
        var p: [UInt8] = [0x45, 0, UInt8(total >> 8 & 0xFF), UInt8(total & 0xFF), 0, 0, 0x40, 0, 64, 6, 0, 0,
                          127, 0, 0, 1, 127, 0, 0, 1]
        let (sp, dp) = toServer ? (clientPort, serverPort) : (serverPort, clientPort)
        p += [UInt8(sp >> 8), UInt8(sp & 0xFF), UInt8(dp >> 8), UInt8(dp & 0xFF)]
        p += [UInt8(s >> 24), UInt8(s >> 16 & 0xFF), UInt8(s >> 8 & 0xFF), UInt8(s & 0xFF)]
        p += [0, 0, 0, 0, 0x50, flags, 0xFF, 0xFF, 0, 0, 0, 0]
        p += payload
        let kept = min(capture ?? p.count, p.count)
        micros += 1000
        le32(time); le32(micros); le32(UInt32(kept)); le32(UInt32(p.count))
        bytes += p.prefix(kept)
        if advance && sequence == nil {
            var n = UInt32(payload.count)
            if flags & 0x03 != 0 { n += 1 } // SYN or FIN
            seq[toServer] = s &+ n
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
        let path = NSTemporaryDirectory() + "proto-dissect-\(ProcessInfo.processInfo.processIdentifier)-\(name).pcap"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
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
