import Dissection
@testable import MQTT
@testable import MQTTViews
import Testing
import TestSupport

/// Two views of one typed packet: what a table counts (`MQTTPacket.counted`) and the field
/// tree text and JSON show. A packet is counted only when the decoder found no problem in it,
/// and then its counted values are the facts `PDUFacts(deriving:)` reads off its tree.
@Suite("MQTT counted view against the field tree view")
struct MQTTFactsDetailTests {
    static let seeds: [(MQTTVersion, [UInt8])] = [
        (.v3_1_1, Fixture.publish311QoS1), (.v3_1_1, Fixture.publish311QoS0Retain), (.v3_1_1, Fixture.puback311),
        (.v3_1_1, Fixture.pubrec311), (.v3_1_1, Fixture.pubrel311), (.v3_1_1, Fixture.pubcomp311),
        (.v3_1_1, Fixture.pingreq), (.v3_1_1, Fixture.pingresp), (.v5, Fixture.publish5),
        (.v5, packet(0x34, str("a/b") + [0x00, 0x09, 0x00] + Array("hello".utf8))),
        (.v3_1, packet(0x30, str("x") + Array(repeating: 0x41, count: 300))),
        (.v5, [0x40, 0x02, 0x00, 0x01]), (.v5, [0x40, 0x03, 0x00, 0x01, 0x10]),
        (.v5, packet(0x30, str("t") + props([0x23, 0x00, 0x01]) + [0x41])),
        (.v3_1_1, packet(0x30, str("café") + [0x41])),
    ]

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
        (.v3_1_1, Fixture.connect311),
    ]

    @Test("fixtures and thousands of mutations: a packet is counted only without problems, and then as its tree's facts",
          arguments: [(seeds, 1500, UInt64(0xFAC75)), (connectionSeeds, 800, UInt64(0xC0AC))])
    func countedEqualsTree(seeds: [(MQTTVersion, [UInt8])], rounds: Int, seed: UInt64) {
        var counted: [String: Int] = [:], declined = 0
        for (bytes, version, frame, full) in mutatedFrames(seeds, rounds: rounds, seed: seed, options: MQTTOptions()) {
            var state = MQTTDirectionState()
            let packet = MQTTDecoder.decodePacket(frame, version: version, state: &state)
            guard let c = packet.counted() else {
                declined += 1
                // A CONNECT, SUBSCRIBE or UNSUBSCRIBE goes as a box (its facts, or its kind and typed
                // packet for the broker model); the kind is the tree's.
                let boxed = [MQTTPacketType.connect, .subscribe, .unsubscribe].contains(packet.type)
                #expect(!full.problems.isEmpty || boxed || packet.header != .complete, "\(bytes)")
                if boxed, full.problems.isEmpty, packet.header == .complete, let box = packet.countedConnect() {
                    #expect(box.summaryFacts.kind == PDUFacts(deriving: full).kind, "\(bytes)")
                    if packet.type != .connect { #expect(box.packet is MQTTPacket) }
                }
                continue
            }
            counted[c.kind, default: 0] += 1
            #expect(full.problems.isEmpty, "\(version) \(bytes): \(full.problems.map(\.code.rawValue))")
            #expect(MQTTPacket.box(c, type: packet.type).facts == PDUFacts(deriving: full), "\(bytes)")
            #expect(c.wireLength == full.wireLength)
        }
        #expect(counted.values.reduce(0, +) > seeds.count * rounds / 5, "\(counted)")
        #expect(declined > seeds.count * rounds / 5)
    }

    @Test("a CONNECT, a cut frame and a packet with a problem are not counted; an aliased PUBLISH counts its alias's topic")
    func declines() {
        let connect = Fixture.connect311
        var state = MQTTDirectionState()
        #expect(MQTTDecoder.decodePacket(MQTTFrame(bytes: connect, wireLength: connect.count), version: .v3_1_1, state: &state).counted() == nil)
        let cut = Fixture.publish311QoS1
        #expect(MQTTDecoder.decodePacket(MQTTFrame(bytes: Array(cut.dropLast()), wireLength: cut.count, missingBytes: 1),
                                         version: .v3_1_1, state: &state).counted() == nil)
        let zeroID = packet(0x32, str("a") + [0x00, 0x00] + [0x41])
        #expect(MQTTDecoder.decodePacket(zeroID[...], version: .v3_1_1, state: &state).counted() == nil)
        // The alias is set by the first PUBLISH of the direction, then stands for the topic.
        let set = packet(0x30, str("t/1") + props([0x23, 0x00, 0x07]) + [0x41])
        let use = packet(0x30, str("") + props([0x23, 0x00, 0x07]) + [0x41, 0x42])
        var aliases = MQTTDirectionState()
        #expect(MQTTDecoder.decodePacket(set[...], version: .v5, state: &aliases).counted()?.topic == "t/1")
        let used = MQTTDecoder.decodePacket(use[...], version: .v5, state: &aliases).counted()
        #expect(used?.topic == "t/1")
        #expect(used?.payloadLength == 2)
    }
}
