import Testing
@testable import Capture
#if canImport(Glibc)
import Glibc
#endif

/// This test process's directory for its files, removed when the process exits.
private let scratchDirectory: String = {
    let dir = "/tmp/proto-dissect-capture-tests-\(getpid())"
    mkdir(dir, 0o755)
    atexit {
        // The files are flat in the directory: remove each, then it.
        if let d = opendir(scratchDirectory) {
            while let entry = readdir(d) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name != "." && name != ".." { unlink(scratchDirectory + "/" + name) }
            }
            closedir(d)
        }
        rmdir(scratchDirectory)
    }
    return dir
}()

/// Writes bytes to a fresh temporary file and returns its path.
func temporaryFile(_ bytes: [UInt8], name: String = "capture") -> String {
    let path = "\(scratchDirectory)/\(name)-\(UInt32.random(in: 0...UInt32.max))"
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    return path
}

private func readAll(_ path: String) -> (packets: [CapturedPacket], error: CaptureError?) {
    var packets: [CapturedPacket] = []
    do {
        var r = try CaptureFileReader(path: path)
        while let p = try r.next() { packets.append(p) }
        return (packets, nil)
    } catch let e as CaptureError {
        return (packets, e)
    } catch {
        return (packets, nil)
    }
}

private func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
private func le32(_ v: UInt32) -> [UInt8] { be32(v).reversed() }
private func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }

@Suite("Capture files")
struct CaptureFileReaderTests {
    let packetA: [UInt8] = [1, 2, 3, 4]
    let packetB: [UInt8] = [5, 6, 7]

    func pcap(bigEndian: Bool, nanos: Bool) -> [UInt8] {
        func w(_ v: UInt32) -> [UInt8] { bigEndian ? be32(v) : le32(v) }
        let magic: UInt32 = nanos ? 0xA1B2_3C4D : 0xA1B2_C3D4
        var b = w(magic) + (bigEndian ? [0, 2, 0, 4] : [2, 0, 4, 0]) + w(0) + w(0) + w(65535) + w(1)
        b += w(1_700_000_000) + w(nanos ? 123_456_789 : 123_456) + w(4) + w(4) + packetA
        b += w(1_700_000_001) + w(5) + w(3) + w(60) + packetB
        return b
    }

    @Test("pcap in both byte orders, micro- and nanosecond timestamps", arguments: [(false, false), (true, false), (false, true), (true, true)])
    func pcapVariants(bigEndian: Bool, nanos: Bool) throws {
        let (packets, error) = readAll(temporaryFile(pcap(bigEndian: bigEndian, nanos: nanos)))
        #expect(error == nil)
        try #require(packets.count == 2)
        #expect(packets[0].bytes == packetA)
        #expect(packets[0].seconds == 1_700_000_000)
        #expect(packets[0].nanoseconds == (nanos ? 123_456_789 : 123_456_000))
        #expect(packets[0].precision == (nanos ? .nanoseconds : .microseconds))
        #expect(packets[1].number == 2)
        #expect(packets[1].originalLength == 60)
        #expect(packets[1].isTruncated)
        #expect(packets[0].linkType == 1)
    }

    @Test("a regular file and bytes in memory are complete inputs; a pipe is not, and reads the same packets")
    func completeInputs() throws {
        let bytes = pcap(bigEndian: false, nanos: false)
        let file = try CaptureFileReader(path: temporaryFile(bytes))
        defer { file.close() }
        #expect(file.inputIsComplete)
        #expect(try CaptureFileReader(bytes: bytes, name: "memory").inputIsComplete)

        let fifo = "\(scratchDirectory)/fifo-\(UInt32.random(in: 0...UInt32.max))"
        try #require(mkfifo(fifo, 0o600) == 0)
        // The writer opens the pipe on its own thread (opening one end waits for the other).
        var writer = pthread_t()
        let path = strdup(fifo)!
        pthread_create(&writer, nil, { p in
            let fd = open(UnsafeMutablePointer<CChar>(OpaquePointer(p!)), O_WRONLY)
            var b: [UInt8] = [0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 1, 0, 0, 0]
            b += [0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 1, 2, 3, 4]
            _ = b.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            return nil
        }, path)
        defer { pthread_join(writer, nil); free(path) }
        var pipe = try CaptureFileReader(path: fifo)
        defer { pipe.close() }
        #expect(!pipe.inputIsComplete)
        #expect(try pipe.next()?.bytes == packetA)
    }

    @Test("a file cut inside a record keeps the records before it and names the record")
    func cutOff() {
        let full = pcap(bigEndian: false, nanos: false)
        let (packets, error) = readAll(temporaryFile(Array(full.dropLast(2))))
        #expect(packets.count == 1)
        #expect(error?.kind == .cutShort)
        #expect(error?.message.contains("record 2") == true)
    }

    @Test("an empty file and a file that is not a capture are refused with the file named")
    func notACapture() {
        let empty = temporaryFile([])
        let (_, e1) = readAll(empty)
        #expect(e1?.kind == .unreadable)
        #expect(e1?.description.contains(empty) == true)
        #expect(e1?.message.contains("empty") == true)
        let (_, e2) = readAll(temporaryFile(Array("hello world, not a pcap".utf8)))
        #expect(e2?.message.contains("not a pcap") == true)
        let (_, e3) = readAll("/nonexistent/file.pcap")
        #expect(e3?.message.contains("cannot open") == true)
    }

    @Test("a record claiming a huge length is refused without allocating it")
    func hugeRecord() {
        var b = pcap(bigEndian: false, nanos: false)
        b += le32(0) + le32(0) + le32(0xFFFF_FFF0) + le32(0xFFFF_FFF0)
        let (packets, error) = readAll(temporaryFile(b))
        #expect(packets.count == 2)
        #expect(error?.kind == .cutShort)
    }

    /// A pcapng block: type, total length, body, total length.
    func block(_ type: UInt32, _ body: [UInt8]) -> [UInt8] {
        var body = body
        while body.count % 4 != 0 { body.append(0) }
        let len = UInt32(12 + body.count)
        return le32(type) + le32(len) + body + le32(len)
    }

    @Test("pcapng with two interfaces of different link types and timestamp resolutions")
    func pcapngInterfaces() throws {
        var f = block(0x0A0D_0D0A, le32(0x1A2B_3C4D) + [1, 0, 0, 0] + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        f += block(1, le16(1) + [0, 0] + le32(0))                                    // interface 0: Ethernet, µs
        f += block(1, le16(276) + [0, 0] + le32(0) + le16(9) + le16(1) + [9, 0, 0, 0] + [0, 0, 0, 0]) // interface 1: SLL2, ns
        f += block(6, le32(1) + le32(0) + le32(1_000_000_123) + le32(4) + le32(4) + packetA) // on interface 1
        f += block(5, [1, 2, 3, 4])                                                    // statistics: skipped
        f += block(6, le32(0) + le32(0) + le32(2_500_000) + le32(3) + le32(3) + packetB)     // on interface 0
        let (packets, error) = readAll(temporaryFile(f))
        #expect(error == nil)
        try #require(packets.count == 2)
        #expect(packets[0].linkType == 276)
        #expect(packets[0].seconds == 1 && packets[0].nanoseconds == 123)
        #expect(packets[0].precision == .nanoseconds)
        #expect(packets[1].linkType == 1)
        #expect(packets[1].seconds == 2 && packets[1].nanoseconds == 500_000_000)
        #expect(packets[1].bytes == packetB)
        #expect(packets[1].number == 2)
    }

    @Test("records that straddle the reader's buffer, in pcap and pcapng, read the same whatever the buffer size")
    func straddlingRecords() throws {
        // 300 packets of 0 to 3,000 bytes, each byte telling its packet and offset apart.
        let sizes = (0..<300).map { ($0 * 7919) % 3001 }
        let packets = sizes.enumerated().map { i, n in (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) } }
        var classic = pcap(bigEndian: false, nanos: false).prefix(24) // the file header alone
        var ng = block(0x0A0D_0D0A, le32(0x1A2B_3C4D) + [1, 0, 0, 0] + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        ng += block(1, le16(1) + [0, 0] + le32(0))
        for (i, p) in packets.enumerated() {
            classic += le32(UInt32(1_700_000_000 + i)) + le32(UInt32(i)) + le32(UInt32(p.count)) + le32(UInt32(p.count + 1)) + p
            ng += block(6, le32(0) + le32(0) + le32(UInt32(i)) + le32(UInt32(p.count)) + le32(UInt32(p.count + 1)) + p)
            if i % 50 == 0 { ng += block(5, [1, 2, 3, 4]) } // statistics blocks in between: skipped
        }
        for (name, file) in [("pcap", Array(classic)), ("pcapng", ng)] {
            let path = temporaryFile(file, name: name)
            for chunk in [16, 61, 100, 1_000, 4_096, 1 << 20] {
                var reader = try CaptureFileReader(path: path, chunk: chunk)
                defer { reader.close() }
                var read: [CapturedPacket] = []
                while let p = try reader.next() { read.append(p) }
                try #require(read.count == packets.count, "\(name), chunk \(chunk)")
                for (i, p) in read.enumerated() {
                    #expect(p.bytes == packets[i], "\(name), chunk \(chunk), packet \(i)")
                    #expect(p.originalLength == packets[i].count + 1 && p.number == i + 1)
                }
                #expect(read[299].nanoseconds == 299_000, "\(name)") // microseconds in both files
            }
        }
    }

    @Test("the pcap writer's output reads back")
    func writerRoundTrip() throws {
        let path = temporaryFile([])
        do {
            let w = try PcapWriter(path: path, linkType: 101)
            try w.write(CapturedPacket(number: 1, seconds: 5, nanoseconds: 7000, precision: .microseconds, linkType: 101, originalLength: 9, bytes: packetA))
        }
        let (packets, error) = readAll(path)
        #expect(error == nil)
        #expect(packets.count == 1)
        #expect(packets.first?.bytes == packetA)
        #expect(packets.first?.originalLength == 9)
        #expect(packets.first?.linkType == 101)
    }
}

extension CaptureFileReaderTests {
    @Test("an interface's if_tsresol sets the precision: ms or coarser, µs up to finer than ms, ns finer than µs",
          arguments: [(UInt8(0), TimestampPrecision.milliseconds), (3, .milliseconds), (4, .microseconds), (6, .microseconds),
                      (7, .nanoseconds), (9, .nanoseconds),
                      (0x8A, .microseconds),  // 2^-10 s: finer than a millisecond
                      (0x94, .nanoseconds)])  // 2^-20 s: finer than a microsecond
    func timestampResolution(tsresol: UInt8, precision: TimestampPrecision) throws {
        var f = block(0x0A0D_0D0A, le32(0x1A2B_3C4D) + [1, 0, 0, 0] + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        f += block(1, le16(1) + [0, 0] + le32(0) + le16(9) + le16(1) + [tsresol, 0, 0, 0] + [0, 0, 0, 0])
        f += block(6, le32(0) + le32(0) + le32(1234) + le32(4) + le32(4) + packetA)
        let (packets, error) = readAll(temporaryFile(f))
        #expect(error == nil)
        let packet = try #require(packets.first)
        #expect(packet.precision == precision)
        #expect(packet.precision.fractionalDigits == [.milliseconds: 3, .microseconds: 6, .nanoseconds: 9][precision])
        if tsresol == 3 { #expect(packet.seconds == 1 && packet.nanoseconds == 234_000_000) }
    }
}
