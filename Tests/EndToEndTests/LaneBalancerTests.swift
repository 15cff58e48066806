import Foundation
@testable import Pipeline
import Testing

/// The balancer's choice at the end of a window, given the threads' waits and how long the
/// reading thread spent dissecting lane 1.
@Suite struct LaneBalancerTests {
    /// One window: lane 1 has one connection (stream 7) with all its bytes, lane 0 another
    /// (stream 8) with a little; the caller's thread waited `callerWaited` of the window, the
    /// reading thread nothing, and the reading thread spent `laneOneDissected` dissecting.
    /// The waits are given as shares of the window as it turns out (its length is the clock's).
    func decision(callerWaited: Double, laneOneDissected: Double) throws -> LaneMigration? {
        var balancer = LaneBalancer(policy: .byWaits)
        var waitedSoFar = (reader: UInt64(0), dissector: UInt64(0))
        return try decision(&balancer, &waitedSoFar, callerWaited: callerWaited, readerWaited: 0, laneOneDissected: laneOneDissected)
    }

    /// `waitedSoFar`: the threads' waits before this window (the balancer is given running totals).
    func decision(_ balancer: inout LaneBalancer, _ waitedSoFar: inout (reader: UInt64, dissector: UInt64), callerWaited: Double,
                  readerWaited: Double, laneOneDissected: Double) throws -> LaneMigration? {
        let start = DispatchTime.now().uptimeNanoseconds
        Thread.sleep(forTimeInterval: 0.05)
        let window = Double(DispatchTime.now().uptimeNanoseconds - start)
        let waited = (reader: waitedSoFar.reader + UInt64(readerWaited * window),
                      dissector: waitedSoFar.dissector + UInt64(callerWaited * window))
        waitedSoFar = waited
        var move: LaneMigration?
        for _ in 0..<LaneBalancer.windowBatches {
            balancer.add(1_000, stream: 7, lane: 1)
            balancer.add(10, stream: 8, lane: 0)
            move = balancer.batchDone(Batch(), waited: waited, laneOneDissected: UInt64(laneOneDissected * window))
        }
        return move
    }

    @Test("A lone busy connection in lane 1 moves to the caller's thread when the reading thread spends part of its time reading")
    func loneConnectionMoves() throws {
        // The caller waited 90% of the window; lane 1's dissecting is 80% of the reading thread's
        // time: moving it leaves the reading thread 20% and the caller's thread about 90%, less
        // than the 100% the reading thread has now.
        let move = try #require(try decision(callerWaited: 0.9, laneOneDissected: 0.8))
        #expect(move.stream == 7)
        #expect(move.to == 0)
    }

    @Test("A lone busy connection in lane 1 stays when its lane takes all of the reading thread's time")
    func loneConnectionStays() throws {
        // Dissecting lane 1 takes the whole window: moving its one connection would only move
        // the whole load to the other thread.
        #expect(try decision(callerWaited: 0.9, laneOneDissected: 1.0) == nil)
    }

    @Test("Balanced threads: nothing moves")
    func balancedStays() throws {
        #expect(try decision(callerWaited: 0.05, laneOneDissected: 0.8) == nil)
    }

    @Test("The share of new connections in lane 1 moves towards the thread that waited, window by window, within its bounds")
    func newConnectionShare() throws {
        var balancer = LaneBalancer(policy: .byWaits)
        var waited = (reader: UInt64(0), dissector: UInt64(0))
        #expect(balancer.newConnectionShare == LaneBalancer.shareUnits / 2)
        // The caller's thread waited 60% of the window (the reading thread is the busier): fewer
        // new connections for lane 1, about 60% of 32 fewer.
        _ = try decision(&balancer, &waited, callerWaited: 0.6, readerWaited: 0, laneOneDissected: 0.5)
        let fewer = balancer.newConnectionShare
        #expect(fewer < LaneBalancer.shareUnits / 2 && fewer >= LaneBalancer.shareUnits / 2 - 22, "\(fewer)")
        // Again: down to none, not below.
        for _ in 0..<3 { _ = try decision(&balancer, &waited, callerWaited: 0.9, readerWaited: 0, laneOneDissected: 0.5) }
        #expect(balancer.newConnectionShare == 0)
        // The reading thread waiting instead: up again, to all at most.
        for _ in 0..<4 { _ = try decision(&balancer, &waited, callerWaited: 0, readerWaited: 0.9, laneOneDissected: 0.5) }
        #expect(balancer.newConnectionShare == LaneBalancer.shareUnits)
    }
}
