#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes packets to a classic pcap file (microsecond timestamps, host byte order), as
/// `tcpdump -w` does: for `-w` during live capture, and for tests that build captures.
public final class PcapWriter {
    private let fd: Int32
    private let path: String
    private var buffer: [UInt8] = []

    /// Creates (or truncates) `path` and writes the file header.
    public init(path: String, linkType: Int32, snapshotLength: UInt32 = 262_144) throws {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if fd < 0 {
            throw CaptureError(.unwritable, source: path, "cannot create: \(String(cString: strerror(errno)))")
        }
        buffer = PcapWriter.fileHeader(linkType: linkType, snapshotLength: snapshotLength)
        try flush()
    }

    deinit {
        try? flush()
        _ = closeDescriptor(fd)
    }

    /// The 24-byte pcap file header, little-endian.
    public static func fileHeader(linkType: Int32, snapshotLength: UInt32 = 262_144) -> [UInt8] {
        var b: [UInt8] = []
        le32(0xA1B2_C3D4, &b)
        b += [2, 0, 4, 0]            // version 2.4
        le32(0, &b); le32(0, &b)     // thiszone, sigfigs
        le32(snapshotLength, &b)
        le32(UInt32(bitPattern: linkType), &b)
        return b
    }

    /// One record: header and captured bytes.
    public static func record(seconds: Int64, microseconds: UInt32, bytes: ArraySlice<UInt8>, originalLength: Int) -> [UInt8] {
        var b: [UInt8] = []
        b.reserveCapacity(16 + bytes.count)
        le32(UInt32(truncatingIfNeeded: seconds), &b)
        le32(microseconds, &b)
        le32(UInt32(bytes.count), &b)
        le32(UInt32(truncatingIfNeeded: originalLength), &b)
        b += bytes
        return b
    }

    public func write(_ packet: CapturedPacket) throws {
        buffer += PcapWriter.record(seconds: packet.seconds, microseconds: packet.nanoseconds / 1000,
                                    bytes: packet.bytes[...], originalLength: packet.originalLength)
        if buffer.count >= 1 << 16 { try flush() }
    }

    public func flush() throws {
        var done = 0
        while done < buffer.count {
            let n = buffer.withUnsafeBytes { writeDescriptor(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CaptureError(.unwritable, source: path, "cannot write: \(String(cString: strerror(errno)))")
            }
            done += n
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

private func le32(_ v: UInt32, _ b: inout [UInt8]) {
    b += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
}
