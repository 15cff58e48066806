import Dissection
import Foundation
import MQTT
import Packets
@testable import Pipeline
import Testing

/// Connections' states handed between the lanes, both ways at once.
@Suite struct StreamHandoffTests {
    static func state(_ n: Int) -> StreamStage.StreamState {
        let time = Timestamp(seconds: Int64(n), nanoseconds: 0)
        return StreamStage.StreamState(info: ConnectionInfo(startedMidStream: false, serverPort: 1883), protocolName: "mqtt",
                                       client: Endpoint(address: .v4(UInt32(n)), port: 40_000),
                                       server: Endpoint(address: .v4(1), port: 1883), firstSeen: time)
    }

    @Test("20,000 rounds of a state given each way while the other thread waits: each taker gets the state given for its stream",
          .timeLimit(.minutes(1)))
    func bothWays() throws {
        let lane = SecondLane(stage: StreamStage(registry: ProtocolRegistry(), maxPDUs: nil), render: { _, _ in })
        let handoff = lane.handoff
        let rounds = 20_000
        let states = (0..<(2 * rounds)).map(Self.state)
        final class Mismatches: @unchecked Sendable { var count = 0 }
        let readerMismatches = Mismatches()
        // The reading thread's part: gives stream 2r to lane 0, then waits for 2r + 1.
        guard let reader = WorkerThread({
            for r in 0..<rounds {
                handoff.give(2 * r, states[2 * r], to: 0)
                if handoff.take(2 * r + 1, lane: 1, unlessStopped: lane) !== states[2 * r + 1] { readerMismatches.count += 1 }
            }
        }) else { throw CancellationError() }
        var mismatches = 0
        for r in 0..<rounds {
            if handoff.take(2 * r, lane: 0, unlessStopped: lane) !== states[2 * r] { mismatches += 1 }
            handoff.give(2 * r + 1, states[2 * r + 1], to: 1)
        }
        reader.join()
        #expect(mismatches == 0 && readerMismatches.count == 0)
        // A connection with no state (closed since, or of no protocol) is handed over as none.
        handoff.give(-1, nil, to: 0)
        #expect(handoff.take(-1, lane: 0, unlessStopped: lane) == nil)
    }

    @Test("a stop wakes a lane waiting for a state that will not come")
    func stopWakesTaker() throws {
        let lane = SecondLane(stage: StreamStage(registry: ProtocolRegistry(), maxPDUs: nil), render: { _, _ in })
        let handoff = lane.handoff
        final class Taken: @unchecked Sendable { var state: StreamStage.StreamState? = StreamHandoffTests.state(0) }
        let taken = Taken()
        guard let taker = WorkerThread({ taken.state = handoff.take(7, lane: 1, unlessStopped: lane) }) else { throw CancellationError() }
        usleep(20_000)
        lane.stop()
        taker.join()
        #expect(taken.state == nil)
    }
}
