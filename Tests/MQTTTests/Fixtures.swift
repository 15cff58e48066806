@testable import MQTT
@testable import MQTTViews
import Dissection
import TestSupport

// Byte-building helpers: fixtures below spell out every field; these only do the
// arithmetic (string lengths, remaining length) that is easy to get wrong by hand.

/// A UTF-8 string or binary field: 2-byte big-endian length, then the bytes.
func str(_ s: String) -> [UInt8] {
    let b = Array(s.utf8)
    return [UInt8(b.count >> 8), UInt8(b.count & 0xFF)] + b
}

/// A control packet: the first byte, the minimal remaining length, the body.
func packet(_ first: UInt8, _ body: [UInt8]) -> [UInt8] {
    [first] + VariableByteInteger.encode(body.count) + body
}

/// A v5 property list: its length, then the properties.
func props(_ body: [UInt8]) -> [UInt8] {
    VariableByteInteger.encode(body.count) + body
}

/// Bytes from a hex dump as tshark prints them (`tcp.payload`), e.g. `"40020007"`.
func hex(_ s: String) -> [UInt8] {
    let digits = Array(s.utf8)
    precondition(digits.count % 2 == 0, "odd number of hex digits")
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<($0 + 2)], as: UTF8.self), radix: 16)! }
}

enum Fixture {
    // MARK: MQTT 3.1.1

    static let connect311: [UInt8] = packet(0x10,          // CONNECT, flags 0
        str("MQTT") +                                        // protocol name
        [0x04,                                               // protocol level 4 (3.1.1)
         0xC2,                                               // connect flags: user name, password, clean session
         0x00, 0x3C] +                                       // keep alive 60
        str("sensor-1") +                                    // client id
        str("alice") +                                       // user name
        str("s3cret"))                                       // password

    static let connack311Accepted: [UInt8] = [
        0x20, 0x02,                                          // CONNACK, remaining length 2
        0x01,                                                // acknowledge flags: session present
        0x00,                                                // return code 0: accepted
    ]

    static let connack311NotAuthorized: [UInt8] = [
        0x20, 0x02,                                          // CONNACK, remaining length 2
        0x00,                                                // acknowledge flags: none
        0x05,                                                // return code 5: not authorized
    ]

    static let publish311QoS1: [UInt8] = packet(0x32,     // PUBLISH, QoS 1
        str("sensors/kitchen/temp") +                        // topic name
        [0x00, 0x07] +                                       // packet id 7
        Array("21.5".utf8))                                  // payload

    static let publish311QoS0Retain: [UInt8] = packet(0x31, // PUBLISH, QoS 0, retain
        str("a/b") +                                         // topic name
        Array("hi".utf8))                                    // payload

    static let puback311: [UInt8] = [0x40, 0x02, 0x00, 0x07]     // PUBACK, length 2, packet id 7
    static let pubrec311: [UInt8] = [0x50, 0x02, 0x00, 0x08]     // PUBREC, length 2, packet id 8
    static let pubrel311: [UInt8] = [0x62, 0x02, 0x00, 0x08]     // PUBREL (flags 0b0010), length 2, packet id 8
    static let pubcomp311: [UInt8] = [0x70, 0x02, 0x00, 0x08]    // PUBCOMP, length 2, packet id 8

    static let subscribe311: [UInt8] = packet(0x82,       // SUBSCRIBE, flags 0b0010
        [0x00, 0x03] +                                       // packet id 3
        str("a/+/c") + [0x01] +                              // filter, requested QoS 1
        str("x/#") + [0x00])                                 // filter, requested QoS 0

    static let suback311: [UInt8] = [
        0x90, 0x04,                                          // SUBACK, remaining length 4
        0x00, 0x03,                                          // packet id 3
        0x01,                                                // granted QoS 1
        0x80,                                                // failure
    ]

    static let unsubscribe311: [UInt8] = packet(0xA2,     // UNSUBSCRIBE, flags 0b0010
        [0x00, 0x04] +                                       // packet id 4
        str("a/b") + str("c"))                               // filters

    static let unsuback311: [UInt8] = [0xB0, 0x02, 0x00, 0x04]   // UNSUBACK, length 2, packet id 4
    static let pingreq: [UInt8] = [0xC0, 0x00]                   // PINGREQ, length 0
    static let pingresp: [UInt8] = [0xD0, 0x00]                  // PINGRESP, length 0
    static let disconnect311: [UInt8] = [0xE0, 0x00]             // DISCONNECT, length 0

    // MARK: MQTT 3.1

    static let connect31: [UInt8] = packet(0x10,           // CONNECT
        str("MQIsdp") +                                      // protocol name (3.1)
        [0x03,                                               // protocol level 3
         0x2E,                                               // flags: will retain, will QoS 1, will flag, clean session
         0x00, 0x0A] +                                       // keep alive 10
        str("old-client") +                                  // client id
        str("last/will") +                                   // will topic
        str("gone"))                                         // will message

    static let connack31: [UInt8] = [
        0x20, 0x02,                                          // CONNACK, remaining length 2
        0x00,                                                // reserved (3.1)
        0x02,                                                // return code 2: identifier rejected
    ]

    // MARK: MQTT 5.0

    static let connect5: [UInt8] = packet(0x10,            // CONNECT
        str("MQTT") +                                        // protocol name
        [0x05,                                               // protocol level 5
         0x06,                                               // flags: will flag, clean start
         0x00, 0x3C] +                                       // keep alive 60
        props([0x11, 0x00, 0x00, 0x00, 0x78,                 // session expiry interval 120
               0x22, 0x00, 0x0A,                             // topic alias maximum 10
               0x26] + str("region") + str("eu") +           // user property region=eu
              [0x26] + str("region") + str("us")) +          // user property region=us (repeatable)
        str("sensor-1") +                                    // client id
        props([0x18, 0x00, 0x00, 0x00, 0x05]) +              // will properties: will delay interval 5
        str("status/sensor-1") +                             // will topic
        str("offline"))                                      // will payload

    static let connack5: [UInt8] = packet(0x20,            // CONNACK
        [0x00,                                               // acknowledge flags
         0x00] +                                             // reason code 0x00: success
        props([0x22, 0x00, 0x05,                             // topic alias maximum 5
               0x12] + str("auto-1")))                       // assigned client identifier

    static let connack5Refused: [UInt8] = packet(0x20,     // CONNACK
        [0x00,                                               // acknowledge flags
         0x87] +                                             // reason code 0x87: not authorized
        props([0x1F] + str("no")))                           // reason string

    static let publish5: [UInt8] = packet(0x33,            // PUBLISH, QoS 1, retain
        str("sensors/kitchen/temp") +                        // topic name
        [0x00, 0x09] +                                       // packet id 9
        props([0x01, 0x01,                                   // payload format indicator 1 (UTF-8)
               0x02, 0x00, 0x00, 0x0E, 0x10,                 // message expiry interval 3600
               0x03] + str("text/plain") +                   // content type
              [0x08] + str("reply/here") +                   // response topic
              [0x09, 0x00, 0x02, 0xAB, 0xCD,                 // correlation data ab cd
               0x0B, 0x81, 0x01,                             // subscription identifier 129 (varint)
               0x0B, 0x02,                                   // subscription identifier 2 (repeatable in PUBLISH)
               0x26] + str("k") + str("v1") +                // user property k=v1
              [0x26] + str("k") + str("v2")) +               // user property k=v2
        Array("21.5".utf8))                                  // payload

    static let puback5Short: [UInt8] = [0x40, 0x02, 0x00, 0x09]  // PUBACK, length 2 (reason 0x00 omitted), id 9
    static let puback5Reason: [UInt8] = [
        0x40, 0x03,                                          // PUBACK, remaining length 3
        0x00, 0x09,                                          // packet id 9
        0x10,                                                // reason 0x10: no matching subscribers (no properties)
    ]
    static let pubrec5: [UInt8] = packet(0x50,             // PUBREC
        [0x00, 0x0A,                                         // packet id 10
         0x00] +                                             // reason 0x00: success
        props([0x1F] + str("ok")))                           // reason string
    static let pubrel5: [UInt8] = [
        0x62, 0x03,                                          // PUBREL, flags 0b0010, remaining length 3
        0x00, 0x0A,                                          // packet id 10
        0x92,                                                // reason 0x92: packet identifier not found
    ]
    static let pubcomp5: [UInt8] = [
        0x70, 0x04,                                          // PUBCOMP, remaining length 4
        0x00, 0x0A,                                          // packet id 10
        0x00,                                                // reason 0x00
        0x00,                                                // property length 0
    ]

    static let subscribe5: [UInt8] = packet(0x82,          // SUBSCRIBE, flags 0b0010
        [0x00, 0x03] +                                       // packet id 3
        props([0x0B, 0x07]) +                                // subscription identifier 7
        str("a/+/c") + [0x2D] +                              // options: QoS 1, no local, retain as published, retain handling 2
        str("x/#") + [0x00])                                 // options: QoS 0

    static let suback5: [UInt8] = packet(0x90,             // SUBACK
        [0x00, 0x03] +                                       // packet id 3
        props([]) +                                          // no properties
        [0x01,                                               // granted QoS 1
         0x87])                                              // not authorized

    static let unsubscribe5: [UInt8] = packet(0xA2,        // UNSUBSCRIBE, flags 0b0010
        [0x00, 0x04] +                                       // packet id 4
        props([0x26] + str("why") + str("done")) +           // user property
        str("a/b"))                                          // filter

    static let unsuback5: [UInt8] = packet(0xB0,           // UNSUBACK
        [0x00, 0x04] +                                       // packet id 4
        props([]) +                                          // no properties
        [0x00,                                               // success
         0x11])                                              // no subscription existed

    static let disconnect5Short: [UInt8] = [0xE0, 0x00]          // DISCONNECT, length 0: normal disconnection
    static let disconnect5: [UInt8] = packet(0xE0,         // DISCONNECT
        [0x8E] +                                             // reason 0x8E: session taken over
        props([0x11, 0x00, 0x00, 0x00, 0x00]))               // session expiry interval 0

    static let auth5: [UInt8] = packet(0xF0,               // AUTH
        [0x18] +                                             // reason 0x18: continue authentication
        props([0x15] + str("SCRAM-SHA-1") +                  // authentication method
              [0x16, 0x00, 0x03, 0x01, 0x02, 0x03]))         // authentication data 01 02 03
}

extension DissectedPDU {
    func int(_ key: String) -> Int? { field(key)?.value.intValue }
    func string(_ key: String) -> String? { field(key)?.value.stringValue }
    func bool(_ key: String) -> Bool? {
        if case .bool(let b)? = field(key)?.value { return b }
        return nil
    }
    var problemCodes: [String] { problems.map(\.code.rawValue) }
    var errorCodes: [String] { problems.filter { $0.severity == .error }.map(\.code.rawValue) }
}

extension Field {
    /// The children of a list field, as the elements JSON would show.
    var elements: [Field] { children }
    func child(_ key: String) -> Field? { children.first { $0.key == key } }
}

func decode(_ bytes: [UInt8], _ version: MQTTVersion) -> DissectedPDU {
    MQTTDecoder.decode(bytes, version: version)
}

/// Every frame the framer finds in `chunks` (then `finish`), with skipped counts.
func frames(_ chunks: [ArraySlice<UInt8>], maxHeld: Int = 1 << 20, midStream: Bool = false) -> [MQTTFramer.Step] {
    var framer = MQTTFramer(maxHeldPDUBytes: maxHeld, startsMidStream: midStream)
    var out: [MQTTFramer.Step] = []
    for chunk in chunks {
        framer.append(chunk)
        while case let step = framer.next(), step != .needMore { out.append(step) }
    }
    framer.finish()
    while case let step = framer.next(), step != .needMore { out.append(step) }
    return out
}


/// Each seed whole, then `rounds - 1` times with one byte changed, as a frame the framer would
/// make from a segment (a slice of the packet that need not start at index 0, with the packet's
/// other bytes around it), with the full decoder's PDU: the fast paths' tests feed these to a
/// fast path and compare with the full decoder.
func mutatedFrames(_ seeds: [(MQTTVersion, [UInt8])], rounds: Int, seed: UInt64,
                   options: MQTTOptions) -> [(bytes: [UInt8], version: MQTTVersion, frame: MQTTFrame, full: DissectedPDU)] {
    var rng = SplitMix64(seed: seed)
    var out: [(bytes: [UInt8], version: MQTTVersion, frame: MQTTFrame, full: DissectedPDU)] = []
    for (version, seed) in seeds {
        for round in 0..<rounds {
            var bytes = seed
            if round > 0 {
                let at = Int(rng.next() % UInt64(bytes.count))
                bytes[at] = rng.next() % 3 == 0 ? bytes[at] ^ (1 << UInt8(rng.next() % 8)) : UInt8(truncatingIfNeeded: rng.next())
            }
            let prefix = round % 4
            let packet = [UInt8](repeating: 0xEE, count: prefix) + bytes + [0xEE, 0xEE]
            let frame = MQTTFrame(held: packet[prefix..<(prefix + bytes.count)], wireLength: bytes.count)
            var state = MQTTDirectionState()
            let full = MQTTDecoder.decode(frame, version: version, state: &state, options: options)
            out.append((bytes, version, frame, full))
        }
    }
    return out
}
