import Packets
@testable import Reassembly
import Testing
import TestSupport

/// `FlowTable` (the reassembler's connections and closed pairs by key) must behave as a
/// dictionary whatever the order of insertions and removals: removals shift the keys after them
/// back, and a wrong shift loses a key or finds a removed one.
@Suite("Flow table")
struct FlowTableTests {
    /// Keys that crowd a few home slots: IPv4 and IPv6 pairs differing in a port or an address.
    static func key(_ n: Int) -> FlowKey {
        let port = UInt16(40_000 + n % 300)
        if n % 3 == 0 {
            return FlowKey(Endpoint(address: .v6(0x2001_0DB8, UInt64(n / 300)), port: port), Endpoint(address: .v6(0x2001_0DB8, 1), port: 1883))
        }
        return FlowKey(Endpoint(address: .v4(0x0A00_0000 + UInt32(n / 300)), port: port), Endpoint(address: .v4(0x0A00_0001), port: 5672))
    }

    @Test("200,000 random insertions, replacements and removals over 3,000 keys: the same as a dictionary after each")
    func sameAsDictionary() {
        var table = FlowTable<Int>()
        var model: [FlowKey: Int] = [:]
        var random = SplitMix64(seed: 27)
        for step in 0..<200_000 {
            let key = Self.key(Int(random.next() % 3_000))
            switch random.next() % 3 {
            case 0, 1:
                table[key] = step
                model[key] = step
            default:
                #expect(table.removeValue(forKey: key) == model.removeValue(forKey: key))
            }
            #expect(table.count == model.count)
            // A probe of another key after each step: its slot may be the one just shifted.
            let probe = Self.key(Int(random.next() % 3_000))
            if table[probe] != model[probe] {
                Issue.record("step \(step): \(probe) is \(String(describing: table[probe])), not \(String(describing: model[probe]))")
                return
            }
        }
        var seen: [FlowKey: Int] = [:]
        table.forEach { key, value in seen[key] = value }
        #expect(seen == model)
        table.removeAll()
        #expect(table.count == 0 && table[Self.key(1)] == nil)
    }
}
