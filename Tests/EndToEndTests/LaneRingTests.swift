import Foundation
@testable import Pipeline
import Testing

/// The ring between the lanes: what one thread pushes, the other pops, whole and in order,
/// however the records wrap round the end and however long they are.
@Suite struct LaneRingTests {
    /// The bytes of record `n`: its length varies from none to three times the longest record.
    static func record(_ n: Int) -> [UInt8] {
        let count = (n * 7919) % 3_100
        return (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) }
    }

    @Test("2,000 records through a 4 KB ring from another thread: each whole, in order, with its kind and cost")
    func recordsInOrder() throws {
        let ring = LaneRing(capacity: 1 << 12)
        let count = 2_000
        guard let producer = WorkerThread({
            for n in 0..<count {
                Self.record(n).withUnsafeBytes { ring.push($0, kind: n % 5 == 4 ? .batchEnd : .eventEnd, cost: UInt64(n)) }
            }
        }) else { throw CancellationError() }
        var pieces = 0
        for n in 0..<count {
            var bytes: [UInt8] = []
            var popped = ring.pop { bytes += $0 }
            while popped.kind == .piece {
                pieces += 1
                #expect(popped.cost == 0)
                popped = ring.pop { bytes += $0 }
            }
            #expect(popped.kind == (n % 5 == 4 ? .batchEnd : .eventEnd))
            #expect(popped.cost == UInt64(n))
            #expect(bytes == Self.record(n), "record \(n)")
        }
        producer.join()
        #expect(pieces > 1_000, "records longer than a quarter of the ring went as pieces")
    }
}
