import Dissection
import Testing

@Suite("Protocol registry")
struct ProtocolRegistryTests {
    private struct Idle: StreamDissector {
        mutating func receive(_ bytes: ArraySlice<UInt8>, from direction: Direction, into output: inout [DissectedPDU]) {}
        mutating func gap(_ count: Int, in direction: Direction, into output: inout [DissectedPDU]) {}
        mutating func finish(_ direction: Direction, into output: inout [DissectedPDU]) {}
    }

    @Test("a port is assigned exactly when it has a protocol, over every port, after registering and --decode-as")
    func assignedMatchesNames() {
        var registry = ProtocolRegistry()
        registry.register("mqtt", ports: [1883, 0, 63, 64]) { _ in Idle() }
        registry.register("amqp", ports: [5672, 65535]) { _ in Idle() }
        let assigned = [registry.assign(port: 8883, to: "mqtt"),
                        registry.assign(port: 1883, to: "amqp"), // reassigned: still assigned
                        registry.assign(port: 9999, to: "http")] // unknown protocol: not assigned
        #expect(assigned == [true, true, false])
        for port in UInt16.min...UInt16.max {
            #expect(registry.isAssigned(port: port) == (registry.protocolName(forPort: port) != nil), "port \(port)")
        }
        #expect(registry.assignedPorts == [0, 63, 64, 1883, 5672, 8883, 65535])
    }
}
