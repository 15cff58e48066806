import Testing
@testable import Packets

/// IPv4 + TCP header with payload, lengths consistent unless overridden.
private func ipv4TCP(payload: [UInt8], totalLength: Int? = nil, fragment: UInt16 = 0x4000, options: [UInt8] = []) -> [UInt8] {
    let ihl = 5 + options.count / 4
    let total = totalLength ?? (ihl * 4 + 20 + payload.count)
    var b: [UInt8] = [
        UInt8(0x40 | ihl), 0x00, UInt8(total >> 8), UInt8(total & 0xFF), // version 4, IHL, total length
        0x12, 0x34, UInt8(fragment >> 8), UInt8(fragment & 0xFF),       // id, flags/fragment offset
        64, 6, 0, 0,                                                     // TTL, protocol TCP, checksum
        127, 0, 0, 1, 127, 0, 0, 2,                                      // 127.0.0.1 → 127.0.0.2
    ]
    b += options
    b += tcp(payload)
    return b
}

private func tcp(_ payload: [UInt8]) -> [UInt8] {
    [0xC3, 0x50, 0x07, 0x5B,   // 50000 → 1883
     0, 0, 0x10, 0,            // seq 4096
     0, 0, 0, 0,               // ack
     0x50, 0x18, 0xFF, 0xFF,   // data offset 5, PSH|ACK, window
     0, 0, 0, 0] + payload     // checksum, urgent
}

@Suite("Link, IP and TCP layers")
struct PacketDecoderTests {
    let payload: [UInt8] = [0xC0, 0x00] // PINGREQ

    func segment(_ r: DecodedPacket) -> TCPSegment? {
        if case .tcp(let s) = r { return s }
        return nil
    }

    @Test("Ethernet with stacked 802.1ad/802.1Q tags")
    func vlan() throws {
        let frame: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x88, 0xA8, 0, 5, 0x81, 0x00, 0, 7, 0x08, 0x00] + ipv4TCP(payload: payload)
        let s = try #require(segment(PacketDecoder.decode(linkType: .ethernet, bytes: frame[...])))
        #expect(s.source.description == "127.0.0.1:50000")
        #expect(s.destination.description == "127.0.0.2:1883")
        #expect(Array(s.payload) == payload)
        #expect(s.sequence == 4096)
        #expect(s.flags == [.psh, .ack])
    }

    @Test("Ethernet padding after the IP packet is not payload")
    func padding() throws {
        let frame: [UInt8] = [UInt8](repeating: 0, count: 12) + [0x08, 0x00] + ipv4TCP(payload: payload) + [0, 0, 0, 0]
        let s = try #require(segment(PacketDecoder.decode(linkType: .ethernet, bytes: frame[...])))
        #expect(Array(s.payload) == payload)
        #expect(s.missingPayload == 0)
    }

    @Test("BSD NULL loopback in either byte order, and LOOP in network order", arguments: [
        (LinkType.null, [2, 0, 0, 0] as [UInt8]), (.null, [0, 0, 0, 2]), (.loop, [0, 0, 0, 2]),
    ])
    func loopback(link: LinkType, family: [UInt8]) throws {
        let s = try #require(segment(PacketDecoder.decode(linkType: link, bytes: (family + ipv4TCP(payload: payload))[...])))
        #expect(s.destination.port == 1883)
    }

    @Test("Linux cooked SLL and SLL2")
    func cooked() throws {
        let sll: [UInt8] = [0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0x00] + ipv4TCP(payload: payload)
        #expect(segment(PacketDecoder.decode(linkType: .linuxSLL, bytes: sll[...]))?.destination.port == 1883)
        let sll2: [UInt8] = [0x08, 0x00, 0, 0, 0, 0, 0, 1, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0] + ipv4TCP(payload: payload)
        #expect(segment(PacketDecoder.decode(linkType: .linuxSLL2, bytes: sll2[...]))?.destination.port == 1883)
    }

    @Test("IPv4 options are skipped")
    func ipv4Options() throws {
        let s = try #require(segment(PacketDecoder.decode(linkType: .raw, bytes: ipv4TCP(payload: payload, options: [1, 1, 1, 0])[...])))
        #expect(Array(s.payload) == payload)
    }

    @Test("IPv4 fragments are reported, not decoded")
    func fragment() {
        guard case .problem(let issue) = PacketDecoder.decode(linkType: .raw, bytes: ipv4TCP(payload: payload, fragment: 0x2000)[...]) else {
            Issue.record("fragment not reported"); return
        }
        #expect(issue.kind == .fragment)
    }

    @Test("a packet cut by the snapshot length reports its missing payload")
    func snaplen() throws {
        let full = ipv4TCP(payload: [UInt8](repeating: 0x41, count: 100))
        let s = try #require(segment(PacketDecoder.decode(linkType: .raw, bytes: full.prefix(60))))
        #expect(s.payload.count == 20)
        #expect(s.missingPayload == 80)
    }

    @Test("IPv6 with hop-by-hop and destination options headers")
    func ipv6Extensions() throws {
        var b: [UInt8] = [0x60, 0, 0, 0, 0, UInt8(16 + 20 + payload.count), 0, 64] // next header: hop-by-hop
        b += [UInt8](repeating: 0, count: 15) + [1]   // ::1
        b += [UInt8](repeating: 0, count: 15) + [2]   // ::2
        b += [60, 0, 1, 4, 0, 0, 0, 0]                // hop-by-hop → destination options, 8 bytes
        b += [6, 0, 1, 4, 0, 0, 0, 0]                 // destination options → TCP
        b += tcp(payload)
        let s = try #require(segment(PacketDecoder.decode(linkType: .ipv6, bytes: b[...])))
        #expect(s.source.description == "[::1]:50000")
        #expect(Array(s.payload) == payload)
    }

    @Test("IPv6 text form follows RFC 5952", arguments: [
        ([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1] as [UInt16], "2001:db8::1"),
        ([0, 0, 0, 0, 0, 0, 0, 1], "::1"),
        ([0x2001, 0xdb8, 0, 1, 0, 0, 0, 1], "2001:db8:0:1::1"),
        ([1, 0, 0, 2, 0, 0, 0, 3], "1:0:0:2::3"),
        ([1, 0, 0, 2, 0, 0, 3, 4], "1::2:0:0:3:4"),
        ([1, 0, 2, 3, 4, 5, 6, 7], "1:0:2:3:4:5:6:7"),
    ])
    func ipv6Text(groups: [UInt16], text: String) {
        #expect(IPAddress.formatV6(groups) == text)
    }

    @Test("an unknown link type is a problem, not a crash")
    func unknownLink() {
        guard case .problem(let i) = PacketDecoder.decode(linkType: LinkType(rawValue: 147), bytes: [1, 2, 3][...]) else {
            Issue.record("not reported"); return
        }
        #expect(i.kind == .unsupportedLinkType)
    }

    @Test("every prefix of a packet decodes without trapping")
    func prefixes() {
        let full = [UInt8](repeating: 0, count: 12) + [0x08, 0x00] + ipv4TCP(payload: payload)
        for n in 0...full.count { _ = PacketDecoder.decode(linkType: .ethernet, bytes: full.prefix(n)) }
        let cut = segment(PacketDecoder.decode(linkType: .ethernet, bytes: full.prefix(full.count - 1)))
        #expect(cut?.payload.count == 1)
        #expect(cut?.missingPayload == 1)
        #expect(segment(PacketDecoder.decode(linkType: .ethernet, bytes: full.prefix(full.count - 3))) == nil)
    }
}
