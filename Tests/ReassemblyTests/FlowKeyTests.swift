import Packets
import Reassembly
import Testing

@Suite("Flow keys")
struct FlowKeyTests {
    private static func v4(_ a: UInt32, _ port: UInt16) -> Endpoint { Endpoint(address: .v4(a), port: port) }
    private static func v6(_ hi: UInt64, _ lo: UInt64, _ port: UInt16) -> Endpoint { Endpoint(address: .v6(hi, lo), port: port) }

    @Test("both directions of a connection are one key, with one hash")
    func directions() {
        let a = Self.v4(0x7F00_0001, 41_946), b = Self.v4(0x7F00_0001, 1883)
        #expect(FlowKey(a, b) == FlowKey(b, a))
        #expect(FlowKey(a, b).hashValue == FlowKey(b, a).hashValue)
        let c = Self.v6(0x2001_0DB8_0000_0000, 1, 5672), d = Self.v6(0x2001_0DB8_0000_0000, 2, 50_000)
        #expect(FlowKey(c, d) == FlowKey(d, c) && FlowKey(c, d).hashValue == FlowKey(d, c).hashValue)
    }

    @Test("thousands of flows that differ in one address bit, one port or the address family are told apart")
    func manyFlows() {
        var table: [FlowKey: Int] = [:]
        var keys: [FlowKey] = []
        for i in 0..<2000 {
            let port = UInt16(30_000 + i % 500)
            keys.append(FlowKey(Self.v4(0x7F00_0001, port), Self.v4(0x7F00_0001 + UInt32(i / 500), 1883)))
            // The same numbers as IPv6 addresses: another key each.
            keys.append(FlowKey(Self.v6(0, 0x7F00_0001, port), Self.v6(0, 0x7F00_0001 + UInt64(i / 500), 1883)))
        }
        for (n, key) in keys.enumerated() { table[key] = n }
        #expect(table.count == keys.count)
        for (n, key) in keys.enumerated() { #expect(table[key] == n) }
    }
}
