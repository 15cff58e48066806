import CPcap

/// A libpcap (BPF) filter expression applied to packets from any source, files included.
/// The expression is compiled once per link type met.
public final class PacketFilter {
    public let expression: String
    private var programs: [Int32: bpf_program] = [:]

    /// Compiles the expression for Ethernet to report syntax errors up front.
    public init(expression: String) throws {
        self.expression = expression
        _ = try program(for: 1)
    }

    deinit {
        for key in programs.keys { pcap_freecode(&programs[key]!) }
    }

    private func program(for linkType: Int32) throws -> bpf_program {
        if let p = programs[linkType] { return p }
        // pcap_open_dead takes a DLT_ value; raw IP is the one LINKTYPE_ that differs on Linux.
        guard let dead = pcap_open_dead(linkType == 101 ? 12 : linkType, 262_144) else {
            throw CaptureError(.filter, source: "filter", "libpcap cannot open a handle for link type \(linkType)")
        }
        defer { pcap_close(dead) }
        var prog = bpf_program()
        if pcap_compile(dead, &prog, expression, 1, PCAP_NETMASK_UNKNOWN) != 0 {
            let reason = String(cString: pcap_geterr(dead))
            throw CaptureError(.filter, source: "filter '\(expression)'", reason)
        }
        programs[linkType] = prog
        return prog
    }

    /// Whether the packet passes. A link type the expression cannot be compiled for passes nothing.
    public func matches(_ packet: CapturedPacket) -> Bool {
        guard var prog = try? program(for: packet.linkType) else { return false }
        var header = pcap_pkthdr()
        header.caplen = bpf_u_int32(packet.bytes.count)
        header.len = bpf_u_int32(packet.originalLength)
        return packet.bytes.withUnsafeBufferPointer { buf in
            pcap_offline_filter(&prog, &header, buf.baseAddress) != 0
        }
    }
}
