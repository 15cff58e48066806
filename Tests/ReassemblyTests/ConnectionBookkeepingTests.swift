import Packets
import Testing
import TestSupport
@testable import Reassembly

/// The reassembler's bookkeeping of whole connections: which are flushed by the connection limit,
/// and how long a closed pair keeps stray packets from opening a new connection.
@Suite("Connection bookkeeping")
struct ConnectionBookkeepingTests {
    static let server = Endpoint(address: .v4(0x0A00_0001), port: 1883)

    static func client(_ i: Int) -> Endpoint { Endpoint(address: .v4(0x0A01_0000 + UInt32(i)), port: 40_000) }

    static func segment(_ i: Int, _ flags: TCPFlags, sequence: UInt32 = 100, _ text: String = "") -> TCPSegment {
        TCPSegment(source: client(i), destination: server, sequence: sequence, acknowledgement: 1, flags: flags, payload: Array(text.utf8)[...])
    }

    @Test("the connection limit flushes the least recently active tenth, oldest first, equal times by stream", arguments: [UInt64(1), 2, 3])
    func evictionOrder(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        let limit = 50
        var r = TCPReassembler(limits: ReassemblyLimits(maxConnections: limit, idleTimeout: 1e9))
        var events: [ReassemblyEvent] = []
        // The model: each open connection's client and last time, by stream.
        var open: [Int: (client: Int, lastSeen: Double)] = [:]
        var expected: [Int] = []
        var nextClient = 0, nextStream = 0
        for _ in 0..<3_000 {
            // Times out of order, and often equal (whole tenths of a second).
            let time = Double(generator.next() % 1_000) / 10
            if open.isEmpty || generator.next() % 3 == 0 {
                if open.count >= limit {
                    let victims = open.sorted { ($0.value.lastSeen, $0.key) < ($1.value.lastSeen, $1.key) }.prefix(limit / 10)
                    for (stream, _) in victims {
                        expected.append(stream)
                        open[stream] = nil
                    }
                }
                r.process(Self.segment(nextClient, [.syn]), time: time, into: &events)
                open[nextStream] = (nextClient, time)
                nextClient += 1
                nextStream += 1
            } else {
                // A bare ACK on an open connection: its last time moves.
                let streams = open.keys.sorted()
                let stream = streams[Int(generator.next() % UInt64(streams.count))]
                r.process(Self.segment(open[stream]!.client, [.ack], sequence: 101), time: time, into: &events)
                open[stream]!.lastSeen = time
            }
        }
        let flushed = events.compactMap { event -> Int? in
            if case .closed(let stream, .connectionLimit) = event { return stream } else { return nil }
        }
        #expect(flushed == expected)
        #expect(r.activeConnections == open.count)
    }

    /// Segments of client `i`'s connection: its SYN, its FIN both ways (closing it), data.
    static func closeBothWays(_ i: Int, at time: Double, _ r: inout TCPReassembler, _ events: inout [ReassemblyEvent]) {
        r.process(segment(i, [.syn]), time: time, into: &events)
        r.process(segment(i, [.fin, .ack], sequence: 101), time: time, into: &events)
        let fromServer = TCPSegment(source: server, destination: client(i), sequence: 500, acknowledgement: 102,
                                    flags: [.fin, .ack], payload: [])
        r.process(fromServer, time: time, into: &events)
    }

    static func opens(_ events: [ReassemblyEvent]) -> Int {
        events.filter { if case .opened = $0 { return true } else { return false } }.count
    }

    @Test("data on a closed pair opens a new connection only an idle timeout after the close")
    func strayDataAfterClose() {
        var r = TCPReassembler(limits: ReassemblyLimits(idleTimeout: 10))
        var events: [ReassemblyEvent] = []
        Self.closeBothWays(0, at: 0, &r, &events)
        #expect(r.activeConnections == 0)
        // Other pairs' packets move the capture's clock on, sweep after sweep.
        for t in 1...9 { r.process(Self.segment(100 + t, [.syn]), time: Double(t) / 2, into: &events) }
        r.process(Self.segment(0, [.ack], sequence: 102, "late"), time: 5, into: &events)
        #expect(Self.opens(events) == 10, "stray data 5 s after the close")
        r.process(Self.segment(0, [.ack], sequence: 102, "later"), time: 15, into: &events)
        #expect(Self.opens(events) == 11, "data 15 s after the close")
    }

    @Test("a pair closed, opened and closed again is remembered from its last close")
    func closedTwice() {
        var r = TCPReassembler(limits: ReassemblyLimits(idleTimeout: 10))
        var events: [ReassemblyEvent] = []
        Self.closeBothWays(0, at: 0, &r, &events)
        Self.closeBothWays(0, at: 8, &r, &events)
        #expect(Self.opens(events) == 2)
        // A sweep at 11 lets go of the first close (0), not the second (8).
        r.process(Self.segment(1, [.syn]), time: 11, into: &events)
        r.process(Self.segment(0, [.ack], sequence: 102, "stray"), time: 12, into: &events)
        #expect(Self.opens(events) == 3, "stray data 4 s after the second close")
        r.process(Self.segment(2, [.syn]), time: 19, into: &events)
        r.process(Self.segment(0, [.ack], sequence: 102, "new"), time: 19, into: &events)
        #expect(Self.opens(events) == 5, "data 11 s after the second close")
    }
}
