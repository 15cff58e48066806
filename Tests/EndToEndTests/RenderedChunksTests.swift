import Dissection
import Foundation
@testable import Pipeline
import Testing

/// The chunks between a worker and the caller's thread: what one thread writes, the other reads, whole and in order,
/// however the records fall across chunks, and with no more chunks than the fixed number.
@Suite struct RenderedChunksTests {
    /// The bytes of record `n`: from none to about three chunks' worth.
    static func record(_ n: Int) -> [UInt8] {
        let count = (n * 7919) % 100_000
        return (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) }
    }

    @Test("2,000 events written into 4 chunks on another thread, in pieces when long: each read whole and in order")
    func eventsInOrder() throws {
        let chunks = RenderedChunks(count: 4)
        let count = 2_000
        guard let producer = WorkerThread({
            var chunk = chunks.nextFree()
            for n in 0..<count {
                // Written in slices, each followed by a hand-over once the chunk is full, as the
                // workers do after each PDU.
                var rest = Self.record(n)[...]
                while !rest.isEmpty {
                    let slice = rest.prefix(9_000)
                    rest = rest.dropFirst(slice.count)
                    slice.withUnsafeBufferPointer { chunk.bytes.append(bytes: $0) }
                    if chunk.bytes.bytes.count >= RenderedChunks.chunkBytes {
                        chunk.records.append((chunk.bytes.bytes.count, .piece))
                        chunks.hand(chunk)
                        chunk = chunks.nextFree()
                    }
                }
                chunk.records.append((chunk.bytes.bytes.count, .eventEnd))
                if n % 50 == 49 {
                    chunk.records.append((chunk.bytes.bytes.count, .batchEnd))
                    chunks.hand(chunk)
                    chunk = chunks.nextFree()
                }
            }
        }) else { throw CancellationError() }
        var pieces = 0
        for n in 0..<count {
            var bytes: [UInt8] = []
            var kind = chunks.pop { bytes += $0 }
            while kind == .piece {
                pieces += 1
                kind = chunks.pop { bytes += $0 }
            }
            #expect(kind == .eventEnd)
            #expect(bytes == Self.record(n), "event \(n)")
            if n % 50 == 49 { #expect(chunks.pop { _ in } == .batchEnd) }
        }
        producer.join()
        #expect(pieces > 1_000, "events longer than a chunk went as pieces")
    }
}

