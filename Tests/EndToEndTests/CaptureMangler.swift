import Foundation
import TestSupport

/// Reorders a real capture the way captures themselves get out of causal order (`-i any`,
/// multi-queue NICs, taps, files merged with mergecap), for the reassembly tests: the packets
/// are all there, only not where causality puts them. Works on classic pcap files of Ethernet
/// and IPv4 (the samples); checksums are left as they are, as the tool does not check them.
///
/// Each operation keeps the capture's timestamps in place (the records are recorded in the
/// order they appear), moving only what the records carry.
struct CaptureMangler {
    struct Record {
        var seconds: UInt32
        var fraction: UInt32
        var data: [UInt8]
        var originalLength: UInt32
    }

    /// The parts of a TCP/IPv4 packet the mangler changes, read off a record.
    struct Segment {
        var ipOffset: Int
        var tcpOffset: Int
        var payloadOffset: Int
        var payloadEnd: Int
        var source: UInt64
        var destination: UInt64
        var sequence: UInt32
        var acknowledgement: UInt32
        var flags: UInt8

        var payloadLength: Int { payloadEnd - payloadOffset }
        /// Both directions of a connection share it.
        var connection: [UInt64] { [min(source, destination), max(source, destination)] }
    }

    var header: [UInt8]
    var records: [Record]
    var random: SplitMix64

    init(path: String, seed: UInt64) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        precondition(bytes.count >= 24 && bytes[0] == 0xD4 && bytes[1] == 0xC3, "a little-endian classic pcap file")
        header = Array(bytes[0..<24])
        records = []
        var offset = 24
        while offset + 16 <= bytes.count {
            let length = Int(Self.le32(bytes, offset + 8))
            guard offset + 16 + length <= bytes.count else { break }
            records.append(Record(seconds: Self.le32(bytes, offset), fraction: Self.le32(bytes, offset + 4),
                                  data: Array(bytes[(offset + 16)..<(offset + 16 + length)]), originalLength: Self.le32(bytes, offset + 12)))
            offset += 16 + length
        }
        random = SplitMix64(seed: seed)
    }

    var bytes: [UInt8] {
        var out = header
        for r in records {
            for v in [r.seconds, r.fraction, UInt32(r.data.count), r.originalLength] {
                out += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
            }
            out += r.data
        }
        return out
    }

    func write(to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    // MARK: - Operations

    /// Swaps neighbouring data segments of one direction (with probability `p` a pair), across
    /// whatever the other side sent between them: its ACKs and the replies they caused stay
    /// where they were, so each reply now comes before the request it answers.
    mutating func swapNeighbours(probability p: Double) -> Int {
        var swaps = 0
        for indices in dataSegmentsByDirection().values {
            var k = 0
            while k + 1 < indices.count {
                if Double.random(in: 0..<1, using: &random) < p {
                    let (i, j) = (indices[k], indices[k + 1])
                    let a = records[i].data, al = records[i].originalLength
                    records[i].data = records[j].data
                    records[i].originalLength = records[j].originalLength
                    records[j].data = a
                    records[j].originalLength = al
                    swaps += 1
                    k += 2
                } else {
                    k += 1
                }
            }
        }
        return swaps
    }

    /// Records record `from` after record `to` (a later one) instead: what lies between moves
    /// up one place, the timestamps stay in their places.
    mutating func delay(_ from: Int, after to: Int) {
        let times = records.map { ($0.seconds, $0.fraction) }
        records.insert(records.remove(at: from), at: to)
        for i in records.indices { (records[i].seconds, records[i].fraction) = times[i] }
    }

    /// Repeats data segments (probability `p` each) one to five records later.
    mutating func retransmit(probability p: Double) -> Int {
        var copies: [(after: Int, record: Record)] = []
        for (i, r) in records.enumerated() {
            guard let s = Self.segment(r.data), s.payloadLength > 0, Double.random(in: 0..<1, using: &random) < p else { continue }
            copies.append((min(records.count - 1, i + Int.random(in: 1...5, using: &random)), r))
        }
        insert(copies)
        return copies.count
    }

    /// Sends again, re-segmented, the second half of a data segment with the first half of the
    /// next one of its direction (probability `p` a pair): an overlap of both, a few records later.
    mutating func resegment(probability p: Double) -> Int {
        var copies: [(after: Int, record: Record)] = []
        for indices in dataSegmentsByDirection().values {
            for (i, j) in zip(indices, indices.dropFirst()) {
                guard let a = Self.segment(records[i].data), let b = Self.segment(records[j].data),
                      a.sequence &+ UInt32(a.payloadLength) == b.sequence, a.payloadLength >= 2, b.payloadLength >= 2,
                      Double.random(in: 0..<1, using: &random) < p else { continue }
                let payload = Array(records[i].data[(a.payloadOffset + a.payloadLength / 2)..<a.payloadEnd])
                    + Array(records[j].data[b.payloadOffset..<(b.payloadOffset + b.payloadLength / 2)])
                var data = Array(records[j].data[0..<b.payloadOffset]) + payload
                Self.put32(&data, b.tcpOffset + 4, a.sequence &+ UInt32(a.payloadLength / 2))
                Self.put16(&data, b.ipOffset + 2, UInt16(data.count - b.ipOffset))
                var record = records[j]
                record.data = data
                record.originalLength = UInt32(data.count)
                copies.append((min(records.count - 1, max(i, j) + Int.random(in: 1...3, using: &random)), record))
            }
        }
        insert(copies)
        return copies.count
    }

    /// Shifts every direction's sequence numbers (and the other side's acknowledgements of them)
    /// so that its stream crosses 2^32 about halfway.
    mutating func wrapSequenceNumbers() {
        var first: [UInt64: UInt32] = [:], span: [UInt64: Int] = [:]
        for r in records {
            guard let s = Self.segment(r.data) else { continue }
            let isn = first[s.source] ?? s.sequence
            first[s.source] = isn
            span[s.source] = max(span[s.source] ?? 0, Int(s.sequence &- isn) + s.payloadLength)
        }
        var shift: [UInt64: UInt32] = [:]
        for (source, isn) in first {
            shift[source] = (0 &- isn) &- UInt32(max(1, (span[source] ?? 0) / 2))
        }
        for i in records.indices {
            guard let s = Self.segment(records[i].data) else { continue }
            Self.put32(&records[i].data, s.tcpOffset + 4, s.sequence &+ (shift[s.source] ?? 0))
            if s.flags & 0x10 != 0 {
                Self.put32(&records[i].data, s.tcpOffset + 8, s.acknowledgement &+ (shift[s.destination] ?? 0))
            }
        }
    }

    // MARK: - Reading packets

    /// The records that carry TCP payload, by direction (source and destination), in order.
    func dataSegmentsByDirection() -> [[UInt64]: [Int]] {
        var out: [[UInt64]: [Int]] = [:]
        for (i, r) in records.enumerated() {
            guard let s = Self.segment(r.data), s.payloadLength > 0 else { continue }
            out[[s.source, s.destination], default: []].append(i)
        }
        return out
    }

    /// Inserts each record after the given index (later indices first, so earlier ones hold);
    /// it takes the timestamp of the record before it, as the capture keeps time in order.
    private mutating func insert(_ copies: [(after: Int, record: Record)]) {
        for (after, record) in copies.sorted(by: { $0.after > $1.after }) {
            var r = record
            r.seconds = records[after].seconds
            r.fraction = records[after].fraction
            records.insert(r, at: after + 1)
        }
    }

    static func segment(_ d: [UInt8]) -> Segment? {
        guard d.count >= 14 + 20, d[12] == 0x08, d[13] == 0x00 else { return nil }
        let ip = 14
        let ihl = Int(d[ip] & 0x0F) * 4
        guard d[ip] >> 4 == 4, d[ip + 9] == 6, d.count >= ip + ihl + 20 else { return nil }
        let total = Int(d[ip + 2]) << 8 | Int(d[ip + 3])
        let tcp = ip + ihl
        let dataOffset = Int(d[tcp + 12] >> 4) * 4
        let end = min(d.count, ip + total)
        guard tcp + dataOffset <= end else { return nil }
        func be32(_ o: Int) -> UInt32 { UInt32(d[o]) << 24 | UInt32(d[o + 1]) << 16 | UInt32(d[o + 2]) << 8 | UInt32(d[o + 3]) }
        func be16(_ o: Int) -> UInt64 { UInt64(d[o]) << 8 | UInt64(d[o + 1]) }
        return Segment(ipOffset: ip, tcpOffset: tcp, payloadOffset: tcp + dataOffset, payloadEnd: end,
                       source: UInt64(be32(ip + 12)) << 16 | be16(tcp), destination: UInt64(be32(ip + 16)) << 16 | be16(tcp + 2),
                       sequence: be32(tcp + 4), acknowledgement: be32(tcp + 8), flags: d[tcp + 13])
    }

    private static func le32(_ b: [UInt8], _ o: Int) -> UInt32 {
        UInt32(b[o]) | UInt32(b[o + 1]) << 8 | UInt32(b[o + 2]) << 16 | UInt32(b[o + 3]) << 24
    }

    private static func put32(_ d: inout [UInt8], _ o: Int, _ v: UInt32) {
        d[o] = UInt8(v >> 24); d[o + 1] = UInt8(v >> 16 & 0xFF); d[o + 2] = UInt8(v >> 8 & 0xFF); d[o + 3] = UInt8(v & 0xFF)
    }

    private static func put16(_ d: inout [UInt8], _ o: Int, _ v: UInt16) {
        d[o] = UInt8(v >> 8); d[o + 1] = UInt8(v & 0xFF)
    }
}
