#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads pcap (either byte order, micro- or nanosecond timestamps) and pcapng (several sections
/// and interfaces, each interface with its own link type and timestamp resolution) from a file
/// or standard input, sequentially.
///
/// This is a reader of its own rather than libpcap's `pcap_open_offline`: libpcap refuses pcapng
/// files whose interfaces have different link types, and it cannot say which record of a file
/// is cut off. libpcap is still used for BPF filters and live capture.
public struct CaptureFileReader: PacketSource {
    public let name: String
    /// Whether the whole input is already there (a regular file, bytes in memory), so reading
    /// ahead never waits on a writer; false for a pipe, a terminal or a device (standard input
    /// from `tcpdump -w -`), whose packets should be handled as they come.
    public let inputIsComplete: Bool
    private var stream: ByteStream
    private var format: Format = .unknown
    private var recordNumber = 0
    /// Largest record accepted; a bigger claimed length means the file is damaged.
    public static let maxRecordBytes = 16 << 20

    private enum Format {
        case unknown
        case pcap(bigEndian: Bool, nanos: Bool, linkType: Int32)
        case pcapng(bigEndian: Bool)
    }

    /// The interfaces the current pcapng section has described, in order. Kept beside `format`,
    /// not in it: read out of the enum for every block, the array was retained and released
    /// per packet.
    private var interfaces: [Interface] = []

    private struct Interface {
        var linkType: Int32
        /// Timestamp units per second.
        var unitsPerSecond: UInt64
    }

    /// Opens a file; `-` is standard input.
    public init(path: String) throws {
        try self.init(path: path, chunk: 1 << 20)
    }

    /// `chunk`: the size of the reads from the file (tests make it small, so that records
    /// straddle reads).
    init(path: String, chunk: Int) throws {
        let fd: Int32
        if path == "-" {
            name = "standard input"
            fd = 0
        } else {
            name = path
            fd = open(path, O_RDONLY)
            if fd < 0 {
                throw CaptureError(.unreadable, source: path, "cannot open: \(String(cString: strerror(errno)))")
            }
        }
        var st = stat()
        let type = fstat(fd, &st) == 0 ? st.st_mode & S_IFMT : 0
        if type == S_IFDIR {
            if path != "-" { _ = closeDescriptor(fd) }
            throw CaptureError(.unreadable, source: name, "is a directory, not a capture file")
        }
        inputIsComplete = type == S_IFREG
        stream = ByteStream(fd: fd, ownsDescriptor: path != "-", chunk: chunk)
        try readFileHeader()
    }

    /// Reads a capture held in memory; `name` is used in messages.
    public init(bytes: [UInt8], name: String) throws {
        self.name = name
        inputIsComplete = true
        stream = ByteStream(bytes: bytes)
        try readFileHeader()
    }

    public func close() { stream.close() }

    private func fail(_ kind: CaptureError.Kind, _ message: String) -> CaptureError {
        CaptureError(kind, source: name, message)
    }

    /// What a read is for, to name it when the file ends early (built only on failure).
    private enum Part {
        case fileHeader, recordHeader, record, block
    }

    private mutating func fillOrFail(_ count: Int, _ part: Part) throws {
        let got: Int
        do { got = try stream.fill(count) } catch let e as CaptureError {
            throw fail(.unreadable, "read error: \(e.message)")
        }
        if got < count {
            let what: String
            switch part {
            case .fileHeader: what = "the pcap file header"
            case .recordHeader: what = "the header of record \(recordNumber + 1)"
            case .record: what = "record \(recordNumber + 1)"
            case .block: what = "the pcapng block after record \(recordNumber)"
            }
            throw fail(.cutShort, "\(what) is cut off after \(got) of \(count) bytes (the file ends early)")
        }
    }

    private mutating func readFileHeader() throws {
        let got = try stream.fill(4)
        if got == 0 { throw fail(.unreadable, "is empty: not a pcap or pcapng capture") }
        let m = Array(stream.peek(4))
        let magicBE = m.count == 4 ? UInt32(m[0]) << 24 | UInt32(m[1]) << 16 | UInt32(m[2]) << 8 | UInt32(m[3]) : 0
        switch magicBE {
        case 0xA1B2_C3D4, 0xD4C3_B2A1, 0xA1B2_3C4D, 0x4D3C_B2A1:
            try fillOrFail(24, .fileHeader)
            let h = stream.read(24)
            let big = magicBE == 0xA1B2_C3D4 || magicBE == 0xA1B2_3C4D
            let nanos = magicBE == 0xA1B2_3C4D || magicBE == 0x4D3C_B2A1
            let network = u32(h, 20, big)
            // The upper bits of the link-type field carry FCS information (pcap spec §4).
            format = .pcap(bigEndian: big, nanos: nanos, linkType: Int32(network & 0x0FFF_FFFF))
        case 0x0A0D_0D0A:
            format = .pcapng(bigEndian: false)
            // The section header is read as the first block.
        default:
            let shown = m.map { String($0, radix: 16) }.joined(separator: " ")
            throw fail(.unreadable, "not a pcap or pcapng capture (starts with bytes \(shown))")
        }
    }

    public mutating func next() throws -> CapturedPacket? {
        var packet = CapturedPacket.empty
        return try next(into: &packet) ? packet : nil
    }

    public mutating func next(into packet: inout CapturedPacket) throws -> Bool {
        switch format {
        case .unknown:
            return false
        case .pcap(let big, let nanos, let linkType):
            let got = try stream.fill(16)
            if got == 0 { return false }
            try fillOrFail(16, .recordHeader)
            // The record header is read where it is: no array is made of it.
            let (seconds, frac, caplen, origlen) = stream.withPeek(16) { h in
                (u32(h, 0, big), u32(h, 4, big), Int(u32(h, 8, big)), Int(u32(h, 12, big)))
            }
            stream.skip(16)
            if caplen > Self.maxRecordBytes {
                throw fail(.cutShort, "record \(recordNumber + 1) claims \(caplen) captured bytes, more than \(Self.maxRecordBytes): the file is damaged here")
            }
            try fillOrFail(caplen, .record)
            recordNumber += 1
            packet = CapturedPacket(number: recordNumber, seconds: Int64(seconds),
                                    nanoseconds: nanos ? min(frac, 999_999_999) : min(frac, 999_999) * 1000,
                                    precision: nanos ? .nanoseconds : .microseconds, linkType: linkType,
                                    originalLength: max(origlen, caplen), bytes: stream.read(caplen))
            return true
        case .pcapng:
            guard let next = try nextPcapngPacket() else { return false }
            packet = next
            return true
        }
    }

    private mutating func nextPcapngPacket() throws -> CapturedPacket? {
        while true {
            let got = try stream.fill(8)
            if got == 0 { return nil }
            try fillOrFail(12, .block)
            guard case .pcapng(var big) = format else { return nil }
            let (rawType, bom) = stream.withPeek(12) { head in (u32(head, 0, false), u32(head, 8, false)) }
            if rawType == 0x0A0D_0D0A {
                // Section header: its byte-order magic decides the endianness of the section.
                if bom == 0x1A2B_3C4D { big = false } else if bom == 0x4D3C_2B1A { big = true } else {
                    throw fail(.unreadable, "pcapng section header with a bad byte-order magic")
                }
                interfaces.removeAll()
            }
            let (type, length) = stream.withPeek(8) { head in (u32(head, 0, big), Int(u32(head, 4, big))) }
            guard length >= 12, length % 4 == 0, length <= Self.maxRecordBytes else {
                throw fail(.cutShort, "pcapng block after record \(recordNumber) has an impossible length \(length): the file is damaged here")
            }
            try fillOrFail(length, type == 6 || type == 3 || type == 2 ? .record : .block)
            // The block is read where it is in the stream's buffer; only a packet's own bytes are
            // copied out. `block` must not outlive this pass of the loop: the next fill would
            // then copy the whole buffer.
            let block = stream.peek(length)
            stream.skip(length)
            let body = block[(block.startIndex + 8)..<(block.startIndex + length - 4)]
            switch type {
            case 0x0A0D_0D0A:
                format = .pcapng(bigEndian: big)
            case 1: // Interface Description Block
                guard body.count >= 8 else { throw fail(.cutShort, "pcapng interface block too short") }
                let b = Array(body)
                var iface = Interface(linkType: Int32(u16(b, 0, big)), unitsPerSecond: 1_000_000)
                // Options: if_tsresol (code 9) sets the timestamp unit.
                var i = 8
                while i + 4 <= b.count {
                    let code = u16(b, i, big), len = Int(u16(b, i + 2, big))
                    if code == 0 { break }
                    if code == 9, len >= 1, i + 4 < b.count {
                        let v = b[i + 4]
                        let exp = UInt64(v & 0x7F)
                        if v & 0x80 == 0 { iface.unitsPerSecond = exp <= 19 ? pow10(exp) : 1_000_000 } else { iface.unitsPerSecond = exp < 64 ? 1 << exp : 1_000_000 }
                    }
                    i += 4 + (len + 3) / 4 * 4
                }
                interfaces.append(iface)
            case 6, 2: // Enhanced Packet Block, obsolete Packet Block
                let b = body.prefix(20)
                guard b.count >= 20 else { throw fail(.cutShort, "record \(recordNumber + 1): packet block too short") }
                let ifIndex = type == 6 ? Int(u32(b, 0, big)) : Int(u16(b, 0, big))
                guard ifIndex < interfaces.count else {
                    throw fail(.cutShort, "record \(recordNumber + 1) names interface \(ifIndex), which was never described")
                }
                let iface = interfaces[ifIndex]
                let ts = UInt64(u32(b, 4, big)) << 32 | UInt64(u32(b, 8, big))
                let caplen = Int(u32(b, 12, big)), origlen = Int(u32(b, 16, big))
                let dataStart = body.startIndex + 20
                guard caplen <= body.count - 20 else {
                    throw fail(.cutShort, "record \(recordNumber + 1) claims \(caplen) bytes but its block holds \(body.count - 20)")
                }
                recordNumber += 1
                let secs = ts / iface.unitsPerSecond, rem = ts % iface.unitsPerSecond
                let nanos = UInt32(truncatingIfNeeded: rem.multipliedReportingOverflow(by: 1_000_000_000).overflow ? 0 : rem * 1_000_000_000 / iface.unitsPerSecond)
                return CapturedPacket(number: recordNumber, seconds: Int64(truncatingIfNeeded: secs), nanoseconds: nanos,
                                      precision: TimestampPrecision(unitsPerSecond: iface.unitsPerSecond),
                                      linkType: iface.linkType, originalLength: max(origlen, caplen),
                                      bytes: Array(block[dataStart..<(dataStart + caplen)]))
            case 3: // Simple Packet Block: interface 0, no timestamp
                guard body.count >= 4, let iface = interfaces.first else {
                    throw fail(.cutShort, "record \(recordNumber + 1): simple packet block without an interface")
                }
                let b = Array(body)
                let origlen = Int(u32(b, 0, big))
                let caplen = min(origlen, b.count - 4)
                recordNumber += 1
                return CapturedPacket(number: recordNumber, seconds: 0, nanoseconds: 0, precision: .microseconds,
                                      linkType: iface.linkType, originalLength: origlen, bytes: Array(b[4..<(4 + caplen)]))
            default:
                continue // name resolution, statistics, custom blocks: nothing to dissect
            }
        }
    }
}

private func pow10(_ e: UInt64) -> UInt64 {
    var v: UInt64 = 1
    for _ in 0..<e { v *= 10 }
    return v
}

@inline(__always)
func u32<C: RandomAccessCollection>(_ b: C, _ at: Int, _ big: Bool) -> UInt32 where C.Element == UInt8, C.Index == Int {
    let i = b.startIndex + at
    let x0 = UInt32(b[i]), x1 = UInt32(b[i + 1]), x2 = UInt32(b[i + 2]), x3 = UInt32(b[i + 3])
    return big ? x0 << 24 | x1 << 16 | x2 << 8 | x3 : x3 << 24 | x2 << 16 | x1 << 8 | x0
}

@inline(__always)
func u16<C: RandomAccessCollection>(_ b: C, _ at: Int, _ big: Bool) -> UInt16 where C.Element == UInt8, C.Index == Int {
    let i = b.startIndex + at
    return big ? UInt16(b[i]) << 8 | UInt16(b[i + 1]) : UInt16(b[i + 1]) << 8 | UInt16(b[i])
}
