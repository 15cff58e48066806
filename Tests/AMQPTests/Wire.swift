@testable import AMQP
@testable import AMQPViews
import Dissection

/// Builders for AMQP 0-9-1 wire bytes, so fixtures read as what they mean.
enum Wire {
    static let protocolHeader: [UInt8] = [0x41, 0x4D, 0x51, 0x50, 0, 0, 9, 1] // "AMQP" 0 0 9 1

    static func u16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
    static func u32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * $0)) } }
    static func u64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * $0)) } }
    static func shortstr(_ s: String) -> [UInt8] { [UInt8(s.utf8.count)] + Array(s.utf8) }
    static func longstr(_ bytes: [UInt8]) -> [UInt8] { u32(UInt32(bytes.count)) + bytes }
    static func longstr(_ s: String) -> [UInt8] { longstr(Array(s.utf8)) }

    /// A field table: the long-uint length and the entries (each `shortstr name, type, value`).
    static func table(_ entries: [(String, [UInt8])]) -> [UInt8] {
        let body = entries.flatMap { shortstr($0.0) + $0.1 }
        return u32(UInt32(body.count)) + body
    }

    static func frame(_ type: UInt8, channel: UInt16, _ payload: [UInt8], end: UInt8 = 0xCE) -> [UInt8] {
        [type] + u16(channel) + u32(UInt32(payload.count)) + payload + [end]
    }

    static func method(_ classID: UInt16, _ methodID: UInt16, channel: UInt16, _ arguments: [UInt8]) -> [UInt8] {
        frame(1, channel: channel, u16(classID) + u16(methodID) + arguments)
    }

    static func contentHeader(channel: UInt16, bodySize: UInt64, flags: UInt16 = 0, properties: [UInt8] = []) -> [UInt8] {
        frame(2, channel: channel, u16(60) + u16(0) + u64(bodySize) + u16(flags) + properties)
    }

    static func body(channel: UInt16, _ text: String) -> [UInt8] {
        frame(3, channel: channel, Array(text.utf8))
    }

    static let heartbeat: [UInt8] = frame(8, channel: 0, [])

    static func publish(channel: UInt16, exchange: String, routingKey: String, mandatory: Bool = false) -> [UInt8] {
        method(60, 40, channel: channel, u16(0) + shortstr(exchange) + shortstr(routingKey) + [mandatory ? 1 : 0])
    }

    static func tune(_ methodID: UInt16, channelMax: UInt16, frameMax: UInt32, heartbeat: UInt16) -> [UInt8] {
        method(10, methodID, channel: 0, u16(channelMax) + u32(frameMax) + u16(heartbeat))
    }

    static func close(classID: UInt16 = 20, methodID: UInt16 = 40, channel: UInt16, code: UInt16, text: String,
                      failedClass: UInt16, failedMethod: UInt16) -> [UInt8] {
        method(classID, methodID, channel: channel, u16(code) + shortstr(text) + u16(failedClass) + u16(failedMethod))
    }
}


extension DissectedPDU {
    func has(_ code: String) -> Bool { problems.contains { $0.code.rawValue == code } }
    /// A value at a dotted path of keys: `arguments.routing_key`.
    func value(_ path: String) -> FieldValue? {
        var level = fields
        var found: Field?
        for key in path.split(separator: ".") {
            guard let f = level.first(where: { $0.key == key }) else { return nil }
            found = f
            level = f.children
        }
        return found?.value
    }
}

/// Runs bytes through a connection dissector, one direction.
func dissect(_ bytes: [UInt8], from direction: Direction = .toServer, midStream: Bool = false,
             options: AMQPOptions = AMQPOptions()) -> [DissectedPDU] {
    var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: midStream, serverPort: 5672), options: options)
    var out: [DissectedPDU] = []
    d.receive(bytes[...], from: direction, into: &out)
    d.finish(direction, into: &out)
    return out
}
