import CPcap

/// Packets from a network interface, through libpcap.
public final class LiveCapture: PacketSource {
    public let name: String
    private let handle: OpaquePointer
    private let linkType: Int32
    private var number = 0
    private var stopped = false

    /// Opens `interface` for capture in immediate mode (each packet as it arrives).
    public init(interface: String, snapshotLength: Int32 = 262_144, filter: String?) throws {
        name = interface
        var errbuf = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE))
        guard let h = pcap_create(interface, &errbuf) else {
            throw CaptureError(.unreadable, source: interface, LiveCapture.text(of: errbuf))
        }
        handle = h
        pcap_set_snaplen(h, snapshotLength)
        pcap_set_promisc(h, 0)
        pcap_set_immediate_mode(h, 1)
        pcap_set_timeout(h, 100)
        // In immediate mode libpcap's ring has one frame per packet, each as large as the snapshot
        // length where the interface's MTU is unknown (`any`): its default 2 MB then holds 8
        // packets, and a burst on `lo` seen through `any` overflowed it as soon as the decoder
        // paused (making its tables for the first connection, say): 50 QoS 1 publishes, one
        // connection each, lost 109 packets. 8 MB holds 32, as many as `lo`'s default (64 KB
        // frames) does; the same burst lost none, for about 12 MB more peak memory (the ring is
        // mapped).
        pcap_set_buffer_size(h, 8 << 20)
        let status = pcap_activate(h)
        if status < 0 {
            let detail = String(cString: pcap_geterr(h))
            pcap_close(h)
            switch status {
            case PCAP_ERROR_PERM_DENIED:
                throw CaptureError(.permission, source: interface,
                    "no permission to capture (\(detail)). Run as root, or grant the binary the capabilities: sudo setcap cap_net_raw,cap_net_admin=eip $(command -v proto-dissect)")
            case PCAP_ERROR_NO_SUCH_DEVICE:
                let names = (try? LiveCapture.interfaceNames()) ?? []
                throw CaptureError(.noSuchInterface, source: interface,
                    "no such interface. Available: \(names.joined(separator: ", "))")
            default:
                throw CaptureError(.unreadable, source: interface, "cannot capture: \(detail)")
            }
        }
        linkType = pcap_datalink(h)
        if let filter {
            var prog = bpf_program()
            if pcap_compile(h, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) != 0 {
                let reason = String(cString: pcap_geterr(h))
                pcap_close(h)
                throw CaptureError(.filter, source: "filter '\(filter)'", reason)
            }
            defer { pcap_freecode(&prog) }
            if pcap_setfilter(h, &prog) != 0 {
                let reason = String(cString: pcap_geterr(h))
                pcap_close(h)
                throw CaptureError(.filter, source: "filter '\(filter)'", reason)
            }
        }
    }

    deinit { pcap_close(handle) }

    /// The link type libpcap reports, as a LINKTYPE_ value.
    public var captureLinkType: Int32 { dltToLinkType(linkType) }

    /// Makes `next()` return nil soon (safe to call from a signal handler's dispatch).
    public func breakLoop() {
        stopped = true
        pcap_breakloop(handle)
    }

    public func next() throws -> CapturedPacket? {
        while !stopped {
            var header: UnsafeMutablePointer<pcap_pkthdr>?
            var data: UnsafePointer<UInt8>?
            let rc = pcap_next_ex(handle, &header, &data)
            switch rc {
            case 1:
                guard let header, let data else { continue }
                number += 1
                let h = header.pointee
                let bytes = Array(UnsafeBufferPointer(start: data, count: Int(h.caplen)))
                return CapturedPacket(number: number, seconds: Int64(h.ts.tv_sec), nanoseconds: UInt32(h.ts.tv_usec) * 1000,
                                      precision: .microseconds, linkType: captureLinkType,
                                      originalLength: Int(h.len), bytes: bytes)
            case 0:
                continue // timeout: look at `stopped` again
            case PCAP_ERROR_BREAK:
                return nil
            default:
                throw CaptureError(.unreadable, source: name, String(cString: pcap_geterr(handle)))
            }
        }
        return nil
    }

    /// Packets received and dropped by the kernel so far.
    public func statistics() -> (received: UInt32, dropped: UInt32)? {
        var stats = pcap_stat()
        guard pcap_stats(handle, &stats) == 0 else { return nil }
        return (stats.ps_recv, stats.ps_drop)
    }

    /// Names (and descriptions) of the interfaces libpcap can capture on.
    public static func interfaces() throws -> [(name: String, description: String?)] {
        var errbuf = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE))
        var list: UnsafeMutablePointer<pcap_if_t>?
        guard pcap_findalldevs(&list, &errbuf) == 0 else {
            throw CaptureError(.unreadable, source: "interfaces", LiveCapture.text(of: errbuf))
        }
        defer { pcap_freealldevs(list) }
        var out: [(String, String?)] = []
        var cur = list
        while let dev = cur {
            out.append((String(cString: dev.pointee.name), dev.pointee.description.map { String(cString: $0) }))
            cur = dev.pointee.next
        }
        return out
    }

    static func interfaceNames() throws -> [String] { try interfaces().map(\.name) }

    /// libpcap's message in an error buffer: its bytes up to the first NUL, as UTF-8.
    static func text(of buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// libpcap's DLT_ values differ from the LINKTYPE_ values of files for a few types.
func dltToLinkType(_ dlt: Int32) -> Int32 {
    switch dlt {
    case 12, 14: return 101 // DLT_RAW → LINKTYPE_RAW
    default: return dlt
    }
}
