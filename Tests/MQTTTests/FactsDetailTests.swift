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
