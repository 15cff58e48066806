import Dissection

/// One connection's bytes as a fuzz input spells them, for the decoder and views targets: a
/// selector byte, then records that say which direction's bytes come next, and how many, or
/// that bytes were lost.
///
///     byte 0        the selector: each target reads its own bits as options
///     then records, until the input ends, each a header byte h and what follows it:
///       h & 0x80    the direction: 0 client to server, 1 server to client
///       h & 0x7F    1...126: that many stream bytes follow (one segment)
///                   127: a two-byte big-endian length follows, then that many stream bytes
///                   0: a gap: one byte n follows, and n + 1 bytes of the direction were lost
///     a record the input's end cuts short takes what there is
///
/// Both directions then end (`finish`). The fuzzer so chooses how the bytes are split into
/// segments and how the directions interleave, and a seed can be a real conversation in its
/// real order (scripts/make-fuzz-seeds.sh writes them from samples/).
public struct FuzzedConnection {
    /// The input's first byte (0 for an empty input).
    public let selector: UInt8
    private let records: ArraySlice<UInt8>

    public init(_ data: [UInt8]) {
        selector = data.first ?? 0
        records = data.dropFirst()
    }

    /// What one record asks for.
    public enum Record {
        case bytes(ArraySlice<UInt8>, Direction)
        case gap(Int, Direction)
    }

    /// Calls `body` with each record in order (not `finish`: a caller ends the directions).
    public func forEachRecord(_ body: (Record) -> Void) {
        var i = records.startIndex
        while i < records.endIndex {
            let header = records[i]
            i += 1
            let direction: Direction = header & 0x80 == 0 ? .toServer : .toClient
            var length = Int(header & 0x7F)
            if length == 0 {
                guard i < records.endIndex else { return }
                body(.gap(Int(records[i]) + 1, direction))
                i += 1
                continue
            }
            if length == 127 {
                let high = i < records.endIndex ? Int(records[i]) : 0
                let low = i + 1 < records.endIndex ? Int(records[i + 1]) : 0
                length = high << 8 | low
                i = min(i + 2, records.endIndex)
            }
            let end = min(i + length, records.endIndex)
            body(.bytes(records[i..<end], direction))
            i = end
        }
    }

    /// Feeds every record to `dissector`, then ends both directions. `limit` (at least 1) is
    /// how many PDUs a `receive` or `receiveMore` call may make, as the pipeline limits them.
    /// `take` gets the PDUs of each call that made any.
    public func feed<D: StreamDissector>(to dissector: inout D, limit: Int = .max, _ take: ([DissectedPDU]) -> Void) {
        var out: [DissectedPDU] = []
        func flush() {
            if !out.isEmpty {
                take(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        forEachRecord { record in
            switch record {
            case .gap(let count, let direction):
                dissector.gap(count, in: direction, into: &out)
                flush()
            case .bytes(let bytes, let direction):
                var more = dissector.receive(bytes, from: direction, into: &out, limit: limit)
                flush()
                while more {
                    more = dissector.receiveMore(from: direction, into: &out, limit: limit)
                    flush()
                }
            }
        }
        dissector.finish(.toServer, into: &out)
        flush()
        dissector.finish(.toClient, into: &out)
        flush()
    }
}
