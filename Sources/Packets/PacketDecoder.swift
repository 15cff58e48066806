/// What a captured packet holds, as far as this tool cares.
public enum DecodedPacket: Sendable {
    case tcp(TCPSegment)
    /// Not TCP over IP (ARP, UDP, ICMP…): ignored silently.
    case other
    /// Something worth telling the user: a header cut short, an IP fragment, an unknown link type.
    case problem(PacketIssue)
}

/// A reason a packet could not be followed down to TCP.
public struct PacketIssue: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case unsupportedLinkType = "unsupported-link-type"
        case truncatedHeader = "truncated-header"
        case malformedHeader = "malformed-header"
        case fragment = "ip-fragment"
    }
    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// Decodes link, IP and TCP headers of one captured packet into a `TCPSegment`.
///
/// Each layer reads its header from the bytes and hands the rest on as a slice; nothing is
/// copied. Truncation by the snapshot length is measured against the lengths the IP header
/// declares and becomes `missingPayload`, never zeros.
public enum PacketDecoder {
    public static func decode(linkType: LinkType, bytes: ArraySlice<UInt8>) -> DecodedPacket {
        let etherType: UInt16
        // Where the link header ends: the network layer is the slice from there, made once.
        var headerEnd = 0
        switch linkType {
        case .ethernet:
            // The frequent case, read with one bounds check per header: two addresses, then the
            // type.
            guard bytes.count >= 14 else { return truncated("Ethernet") }
            headerEnd = 14
            var type = bytes.bigEndian16(at: 12)
            // IEEE 802.1Q / 802.1ad tags, possibly stacked.
            while type == 0x8100 || type == 0x88A8 || type == 0x9100 {
                guard bytes.count >= headerEnd + 4 else { return truncated("802.1Q VLAN tag") }
                type = bytes.bigEndian16(at: headerEnd + 2)
                headerEnd += 4
            }
            etherType = type
        case .null, .loop:
            guard bytes.count >= 4 else { return truncated("loopback") }
            headerEnd = 4
            // NULL: the family is in the capturing host's byte order; LOOP: network order.
            let be = bytes.bigEndian32(at: 0)
            let le = be.byteSwapped
            let family = linkType == .loop ? be : (be < 0x10000 ? be : le)
            switch family {
            case 2: etherType = 0x0800
            case 10, 24, 28, 30: etherType = 0x86DD // AF_INET6 on Linux, NetBSD/OpenBSD, FreeBSD, macOS
            default: return .other
            }
        case .linuxSLL:
            guard bytes.count >= 16 else { return truncated("Linux cooked") }
            etherType = bytes.bigEndian16(at: 14)
            headerEnd = 16
        case .linuxSLL2:
            guard bytes.count >= 20 else { return truncated("Linux cooked v2") }
            etherType = bytes.bigEndian16(at: 0)
            headerEnd = 20
        case .raw, .rawDLT, .rawDLTOpenBSD, .ipv4, .ipv6:
            guard let first = bytes.first else { return truncated("IP") }
            switch first >> 4 {
            case 4: etherType = 0x0800
            case 6: etherType = 0x86DD
            default: return .problem(PacketIssue(.malformedHeader, "raw IP packet with IP version \(first >> 4)"))
            }
        default:
            return .problem(PacketIssue(.unsupportedLinkType, "unsupported link type \(linkType.rawValue)"))
        }
        switch etherType {
        case 0x0800: return decodeIPv4(bytes[(bytes.startIndex + headerEnd)...])
        case 0x86DD: return decodeIPv6(bytes[(bytes.startIndex + headerEnd)...])
        default: return .other
        }
    }

    static func truncated(_ layer: String) -> DecodedPacket {
        .problem(PacketIssue(.truncatedHeader, "\(layer) header cut short by the capture"))
    }

    static func decodeIPv4(_ bytes: ArraySlice<UInt8>) -> DecodedPacket {
        // The fixed header, read with one bounds check.
        guard bytes.count >= 20 else { return truncated("IPv4") }
        let vihl = bytes[bytes.startIndex], proto = bytes[bytes.startIndex + 9]
        let totalLength = bytes.bigEndian16(at: 2), fragField = bytes.bigEndian16(at: 6)
        let src = bytes.bigEndian32(at: 12), dst = bytes.bigEndian32(at: 16)
        let headerLength = Int(vihl & 0x0F) * 4
        guard vihl >> 4 == 4, headerLength >= 20 else {
            return .problem(PacketIssue(.malformedHeader, "IPv4 header length \(headerLength) is below 20"))
        }
        guard proto == 6 else { return .other }
        // RFC 791: MF flag or a non-zero offset marks a fragment.
        if fragField & 0x2000 != 0 || fragField & 0x1FFF != 0 {
            return .problem(PacketIssue(.fragment, "IPv4 fragment (offset \(Int(fragField & 0x1FFF) * 8)) of a TCP packet: fragments are not reassembled"))
        }
        guard bytes.count >= headerLength else { return truncated("IPv4 options of the") }
        // Total length 0 happens with TCP segmentation offload: trust the captured bytes.
        let declaredPayload = totalLength == 0 ? nil : Int(totalLength) - headerLength
        if let d = declaredPayload, d < 0 {
            return .problem(PacketIssue(.malformedHeader, "IPv4 total length \(totalLength) is shorter than its header"))
        }
        return decodeTCP(bytes[(bytes.startIndex + headerLength)...], declaredLength: declaredPayload, source: .v4(src), destination: .v4(dst))
    }

    static func decodeIPv6(_ bytes: ArraySlice<UInt8>) -> DecodedPacket {
        var r = HeaderReader(bytes)
        guard let v = r.u8(), r.skip(3), let payloadLength = r.u16(), var next = r.u8(), r.skip(1),
              let s1 = r.u64(), let s2 = r.u64(), let d1 = r.u64(), let d2 = r.u64() else {
            return truncated("IPv6")
        }
        guard v >> 4 == 6 else { return .problem(PacketIssue(.malformedHeader, "IPv6 header with version \(v >> 4)")) }
        var remainingDeclared: Int? = payloadLength == 0 ? nil : Int(payloadLength) // 0: jumbogram or offload
        // RFC 8200 §4: walk the extension headers to the upper layer.
        var hops = 0
        while true {
            hops += 1
            if hops > 32 { return .problem(PacketIssue(.malformedHeader, "IPv6 extension header chain too long")) }
            switch next {
            case 6:
                return decodeTCP(r.rest(), declaredLength: remainingDeclared, source: .v6(s1, s2), destination: .v6(d1, d2))
            case 0, 43, 60, 135, 139, 140:
                guard let nh = r.u8(), let len = r.u8() else { return truncated("IPv6 extension") }
                let size = (Int(len) + 1) * 8
                guard r.skip(size - 2) else { return truncated("IPv6 extension") }
                next = nh
                remainingDeclared = remainingDeclared.map { $0 - size }
            case 44:
                guard let nh = r.u8(), r.skip(1), let off = r.u16(), r.skip(4) else { return truncated("IPv6 fragment") }
                if off & 0xFFF9 != 0 || off & 0x0001 != 0 {
                    return .problem(PacketIssue(.fragment, "IPv6 fragment (offset \(Int(off >> 3) * 8)): fragments are not reassembled"))
                }
                next = nh // an atomic fragment: the whole packet
                remainingDeclared = remainingDeclared.map { $0 - 8 }
            case 51:
                guard let nh = r.u8(), let len = r.u8() else { return truncated("IPv6 authentication") }
                let size = (Int(len) + 2) * 4
                guard r.skip(size - 2) else { return truncated("IPv6 authentication") }
                next = nh
                remainingDeclared = remainingDeclared.map { $0 - size }
            default:
                return .other
            }
            if let d = remainingDeclared, d < 0 {
                return .problem(PacketIssue(.malformedHeader, "IPv6 payload length is shorter than its extension headers"))
            }
        }
    }

    static func decodeTCP(_ bytes: ArraySlice<UInt8>, declaredLength: Int?, source: IPAddress, destination: IPAddress) -> DecodedPacket {
        // Ports, numbers, data offset and flags, read with one bounds check.
        guard bytes.count >= 14 else { return truncated("TCP") }
        let sport = bytes.bigEndian16(at: 0), dport = bytes.bigEndian16(at: 2)
        let seq = bytes.bigEndian32(at: 4), ack = bytes.bigEndian32(at: 8)
        let offsetByte = bytes[bytes.startIndex + 12], flagsByte = bytes[bytes.startIndex + 13]
        let headerLength = Int(offsetByte >> 4) * 4
        guard headerLength >= 20 else {
            return .problem(PacketIssue(.malformedHeader, "TCP data offset \(headerLength) is below 20"))
        }
        guard bytes.count >= headerLength else { return truncated("TCP") }
        let start = bytes.startIndex + headerLength
        var captured = bytes.count - headerLength
        var missing = 0
        if let declared = declaredLength {
            let payloadLength = declared - headerLength
            guard payloadLength >= 0 else {
                return .problem(PacketIssue(.malformedHeader, "TCP header longer than the IP payload"))
            }
            // Link-layer padding beyond the IP length is not payload; a shortfall is truncation.
            if captured > payloadLength { captured = payloadLength }
            missing = payloadLength - captured
        }
        let segment = TCPSegment(
            source: Endpoint(address: source, port: sport),
            destination: Endpoint(address: destination, port: dport),
            sequence: seq, acknowledgement: ack, flags: TCPFlags(rawValue: flagsByte & 0x1F),
            payload: bytes[start..<(start + captured)], missingPayload: missing)
        return .tcp(segment)
    }
}

/// Big-endian header reads over a slice; `nil` when the bytes run out. For headers of varying
/// length (IPv6 and its extension headers); fixed headers are read at offsets after one check.
struct HeaderReader {
    let bytes: ArraySlice<UInt8>
    var index: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.index = bytes.startIndex
    }

    mutating func skip(_ n: Int) -> Bool {
        guard n >= 0, bytes.endIndex - index >= n else { return false }
        index += n
        return true
    }

    mutating func u8() -> UInt8? {
        guard index < bytes.endIndex else { return nil }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func u16() -> UInt16? {
        guard bytes.endIndex - index >= 2 else { return nil }
        defer { index += 2 }
        return UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
    }

    mutating func u32() -> UInt32? {
        guard let a = u16(), let b = u16() else { return nil }
        return UInt32(a) << 16 | UInt32(b)
    }

    mutating func u64() -> UInt64? {
        guard let a = u32(), let b = u32() else { return nil }
        return UInt64(a) << 32 | UInt64(b)
    }

    func rest() -> ArraySlice<UInt8> { bytes[index..<bytes.endIndex] }
}

extension ArraySlice where Element == UInt8 {
    /// The big-endian number at `offset` from the slice's start; the caller has checked that
    /// the bytes are there.
    @inline(__always) func bigEndian16(at offset: Int) -> UInt16 {
        withUnsafeBytes { UInt16(bigEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt16.self)) }
    }

    @inline(__always) func bigEndian32(at offset: Int) -> UInt32 {
        withUnsafeBytes { UInt32(bigEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
    }
}
