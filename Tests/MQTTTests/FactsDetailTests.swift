import Dissection
@testable import MQTT
import Testing
import TestSupport

/// The fast path of `PDUDetail.facts` vouches only for packets the full decoder finds nothing
/// wrong with, and then gives the facts the full decoder's tree gives.
@Suite("MQTT facts detail")
struct MQTTFactsDetailTests {
    static let seeds: [(MQTTVersion, [UInt8])] = [
        (.v3_1_1, Fixture.publish311QoS1), (.v3_1_1, Fixture.publish311QoS0Retain), (.v3_1_1, Fixture.puback311),
        (.v3_1_1, Fixture.pubrec311), (.v3_1_1, Fixture.pubrel311), (.v3_1_1, Fixture.pubcomp311),
        (.v3_1_1, Fixture.pingreq), (.v3_1_1, Fixture.pingresp), (.v5, Fixture.publish5),
        (.v5, packet(0x34, str("a/b") + [0x00, 0x09, 0x00] + Array("hello".utf8))),
        (.v3_1, packet(0x30, str("x") + Array(repeating: 0x41, count: 300))),
        (.v5, [0x40, 0x02, 0x00, 0x01]), (.v5, [0x40, 0x03, 0x00, 0x01, 0x10]),
    ]

    @Test("fixtures and thousands of mutations: vouched-for packets decode cleanly to the same facts")
    func vouchesOnlyForCleanPackets() {
        var vouched = 0, declined = 0
        for (bytes, version, frame, full) in mutatedFrames(Self.seeds, rounds: 1500, seed: 0xFAC75, options: MQTTOptions()) {
            guard let fast = MQTTDecoder.facts(of: frame, version: version) else {
                declined += 1
                continue
            }
            vouched += 1
            #expect(full.problems.isEmpty, "\(bytes): \(full.problems.map(\.code))")
            #expect(fast.facts == PDUFacts(deriving: full), "\(bytes)")
            #expect(fast.wireLength == full.wireLength)
        }
        #expect(vouched > 1000)
        #expect(declined > 1000)
    }

    /// A connection's own packets, as a fleet of devices sends them once per connection.
    static let connectionSeeds: [(MQTTVersion, [UInt8])] = [
        (.v3_1_1, [0x20, 0x02, 0x00, 0x00]), (.v3_1_1, [0x20, 0x02, 0x01, 0x00]), (.v3_1_1, [0x20, 0x02, 0x00, 0x05]),
        (.v3_1, [0x20, 0x02, 0x00, 0x00]), (.v5, [0x20, 0x03, 0x00, 0x00, 0x00]),
        (.v3_1_1, packet(0x82, [0x00, 0x01] + str("sensors/+/temp") + [0x01] + str("sensors/#") + [0x01])),
        (.v3_1, packet(0x82, [0x00, 0x01] + str("legacy/#") + [0x02])),
        (.v5, packet(0x82, [0x00, 0x01, 0x00] + str("a/#") + [0x02] + str("$share/g/b") + [0x20])),
        (.v3_1_1, packet(0x90, [0x00, 0x01, 0x01, 0x80])), (.v5, packet(0x90, [0x00, 0x01, 0x00, 0x00, 0x02, 0x87])),
        (.v3_1_1, packet(0xA2, [0x00, 0x03] + str("a/+"))), (.v5, packet(0xA2, [0x00, 0x03, 0x00] + str("x") + str("y/#"))),
        (.v3_1_1, [0xB0, 0x02, 0x00, 0x03]), (.v5, packet(0xB0, [0x00, 0x03, 0x00, 0x00, 0x11])),
        (.v3_1_1, [0xE0, 0x00]), (.v5, [0xE0, 0x00]), (.v5, [0xE0, 0x01, 0x04]),
    ]

    @Test("a connection's CONNACK, SUBSCRIBE, SUBACK, UNSUBSCRIBE, UNSUBACK and DISCONNECT, and thousands of mutations: vouched-for packets decode cleanly to the same facts")
    func vouchesOnlyForCleanConnectionPackets() {
        var vouched: [String: Int] = [:], declined = 0
        for (bytes, version, frame, full) in mutatedFrames(Self.connectionSeeds, rounds: 800, seed: 0xC0AC, options: MQTTOptions()) {
            guard let fast = MQTTDecoder.facts(of: frame, version: version) else {
                declined += 1
                continue
            }
            vouched[fast.facts?.kind ?? "?", default: 0] += 1
            #expect(full.problems.isEmpty, "\(version) \(bytes): \(full.problems.map(\.code))")
            #expect(fast.facts == PDUFacts(deriving: full), "\(bytes)")
            #expect(fast.wireLength == full.wireLength)
        }
        for kind in ["CONNACK", "SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK"] {
            #expect(vouched[kind, default: 0] > 100, "\(kind): \(vouched)")
        }
        // Two bytes, nearly every mutation of which is another packet or a longer one.
        #expect(vouched["DISCONNECT", default: 0] >= 3, "\(vouched)")
        #expect(declined > 3000)
        // A 5.0 CONNACK (its properties set the Topic Alias Maximum) and a CONNECT always take the full decoder.
        let connack5 = [UInt8]([0x20, 0x03, 0x00, 0x00, 0x00])
        #expect(MQTTDecoder.facts(of: MQTTFrame(bytes: connack5, wireLength: connack5.count), version: .v5) == nil)
        let connect = Fixture.connect311
        #expect(MQTTDecoder.facts(of: MQTTFrame(bytes: connect, wireLength: connect.count), version: .v3_1_1) == nil)
    }

    @Test("a PUBLISH with a topic alias, a cut frame or a non-ASCII topic takes the full decoder")
    func declines() {
        let alias = packet(0x30, str("t") + props([0x23, 0x00, 0x01]) + [0x41])
        #expect(MQTTDecoder.facts(of: MQTTFrame(bytes: alias, wireLength: alias.count), version: .v5) == nil)
        let cut = Fixture.publish311QoS1
        #expect(MQTTDecoder.facts(of: MQTTFrame(bytes: Array(cut.dropLast()), wireLength: cut.count, missingBytes: 1), version: .v3_1_1) == nil)
        let accented = packet(0x30, str("café") + [0x41])
        #expect(MQTTDecoder.facts(of: MQTTFrame(bytes: accented, wireLength: accented.count), version: .v3_1_1) == nil)
    }
}
