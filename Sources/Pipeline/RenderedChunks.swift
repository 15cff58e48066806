import Dissection

/// Bytes a worker rendered, and where each event's bytes end: a chunk of them, handed to
/// the caller's thread whole and given back once copied out.
final class RenderedChunk {
    enum Kind {
        /// Part of an event's bytes; more follow in the next chunk.
        case piece
        /// The last of an event's bytes (maybe none).
        case eventEnd
        /// The worker is done with its batch.
        case batchEnd
    }

    // Used by one thread at a time, handed over under the round trip's lock.
    @exclusivity(unchecked) var bytes = ByteSink(capacity: RenderedChunks.chunkCapacity)
    /// Where each record's bytes end (they start where the one before ended); the last one
    /// ends with `bytes` when the chunk is handed over.
    // Appended to by the producer before the hand-over, read and emptied by the consumer after it.
    @exclusivity(unchecked) var records: [(end: Int, kind: Kind)] = []
    /// Events a spanning analysis reads (`SpanningAnalysis`), each with the record whose bytes
    /// hold its own (the next record made after it), in order.
    // Appended to by the producer before the hand-over, read and emptied by the consumer after it.
    @exclusivity(unchecked) var forwarded: [(record: Int, event: OutputEvent)] = []
}

/// The chunks between a worker and the caller's thread: a fixed number going round
/// (`RoundTrip`), so memory stays flat however far the worker runs ahead (it waits for a free
/// chunk), each rendered into in place and copied once, into the output.
// Unchecked: a chunk belongs to one thread at a time, handed over through a `RoundTrip`.
final class RenderedChunks: @unchecked Sendable {
    /// A chunk is handed over once it holds this many bytes (or at the end of a batch).
    static let chunkBytes = 32 << 10
    /// A chunk's buffer: room for the PDU that takes it past `chunkBytes`, most often.
    static let chunkCapacity = chunkBytes + (4 << 10)
    static let count = 32
    /// A chunk given back with more room than this is made anew at its usual size.
    static let keptBytes = 4 * chunkBytes

    private let roundTrip: RoundTrip<RenderedChunk>
    // The consumer's alone: the chunk being copied out, and its next record.
    @exclusivity(unchecked) private var reading: RenderedChunk?
    // The consumer's alone, used only in `pop`, whose `body` never calls back into these chunks.
    @exclusivity(unchecked) private var nextRecord = 0
    /// The next forwarded event of the chunk being copied out.
    // The consumer's alone, used only in `pop`, whose callbacks never call back into these chunks.
    @exclusivity(unchecked) private var nextForwarded = 0

    init(count: Int = RenderedChunks.count) {
        roundTrip = RoundTrip((0..<count).map { _ in RenderedChunk() })
    }

    /// Producer: an empty chunk, waiting for one.
    func nextFree() -> RenderedChunk { roundTrip.nextFree().0 }

    /// Producer: hands a chunk over; its last record ends with its bytes.
    func hand(_ chunk: RenderedChunk) {
        assert(chunk.records.last?.end == chunk.bytes.bytes.count)
        roundTrip.hand(chunk)
    }

    /// Consumer: the next record's bytes handed to `body` (none for an empty record), waiting
    /// for a chunk when need be, and the events forwarded with it to `forwarded`, in order;
    /// returns the record's kind.
    func pop(_ body: (UnsafeBufferPointer<UInt8>) -> Void, forwarded: (OutputEvent) -> Void = { _ in }) -> RenderedChunk.Kind {
        let chunk: RenderedChunk
        if let reading {
            chunk = reading
        } else {
            chunk = roundTrip.nextFilled()
            reading = chunk
            nextRecord = 0
            nextForwarded = 0
        }
        let from = nextRecord == 0 ? 0 : chunk.records[nextRecord - 1].end
        let record = chunk.records[nextRecord]
        while nextForwarded < chunk.forwarded.count, chunk.forwarded[nextForwarded].record == nextRecord {
            forwarded(chunk.forwarded[nextForwarded].event)
            nextForwarded += 1
        }
        if record.end > from { body(UnsafeBufferPointer(rebasing: chunk.bytes.bytes[from..<record.end])) }
        nextRecord += 1
        if nextRecord == chunk.records.count {
            reading = nil
            giveBack(chunk)
        }
        return record.kind
    }

    private func giveBack(_ chunk: RenderedChunk) {
        // A chunk grows past its size by the last PDU rendered into it; one grown by a very
        // large PDU (a frame of thousands of table entries) is not kept that large.
        if chunk.bytes.capacity > Self.keptBytes { chunk.bytes = ByteSink(capacity: Self.chunkCapacity) }
        chunk.bytes.removeAll()
        chunk.records.removeAll(keepingCapacity: true)
        chunk.forwarded.removeAll(keepingCapacity: true)
        roundTrip.giveBack(chunk)
    }
}
