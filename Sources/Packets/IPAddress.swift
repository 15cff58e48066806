/// An IPv4 or IPv6 address, stored inline (no heap).
public enum IPAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    case v4(UInt32)
    case v6(UInt64, UInt64)

    public var description: String {
        switch self {
        case .v4(let a):
            return "\(a >> 24).\((a >> 16) & 0xFF).\((a >> 8) & 0xFF).\(a & 0xFF)"
        case .v6(let hi, let lo):
            var groups: [UInt16] = []
            for i in 0..<4 { groups.append(UInt16(truncatingIfNeeded: hi >> (48 - 16 * UInt64(i)))) }
            for i in 0..<4 { groups.append(UInt16(truncatingIfNeeded: lo >> (48 - 16 * UInt64(i)))) }
            return IPAddress.formatV6(groups)
        }
    }

    /// RFC 5952: lower case, the longest run (length ≥ 2) of zero groups as `::`, leftmost on ties.
    static func formatV6(_ groups: [UInt16]) -> String {
        var bestStart = -1, bestLen = 0, i = 0
        while i < 8 {
            if groups[i] == 0 {
                var j = i
                while j < 8 && groups[j] == 0 { j += 1 }
                if j - i > bestLen { bestStart = i; bestLen = j - i }
                i = j
            } else {
                i += 1
            }
        }
        if bestLen < 2 { bestStart = -1 }
        func hex(_ g: UInt16) -> String { String(g, radix: 16) }
        if bestStart < 0 { return groups.map(hex).joined(separator: ":") }
        let head = groups[0..<bestStart].map(hex).joined(separator: ":")
        let tail = groups[(bestStart + bestLen)...].map(hex).joined(separator: ":")
        return head + "::" + tail
    }

    public static func < (l: IPAddress, r: IPAddress) -> Bool {
        switch (l, r) {
        case (.v4(let a), .v4(let b)): return a < b
        case (.v4, .v6): return true
        case (.v6, .v4): return false
        case (.v6(let a, let b), .v6(let c, let d)): return (a, b) < (c, d)
        }
    }
}

/// An address and a TCP port.
public struct Endpoint: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var address: IPAddress
    public var port: UInt16

    public init(address: IPAddress, port: UInt16) {
        self.address = address
        self.port = port
    }

    /// `ip:port`, IPv6 as `[addr]:port`.
    public var description: String {
        guard case .v4(let a) = address else { return "[\(address)]:\(port)" }
        // Written digit by digit into a buffer: each connection's two endpoints are named when it
        // opens, and the interpolation of five numbers cost about 4,000 instructions an endpoint.
        // Into a buffer on the stack, then a String of its length: one of up to 15 bytes is then
        // stored inline, as an interpolated one was (no allocation).
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 21) { buffer in
            var at = 0
            func put(_ n: Int) {
                if n >= 10_000 { buffer[at] = UInt8(48 + n / 10_000); at += 1 }
                if n >= 1_000 { buffer[at] = UInt8(48 + n / 1_000 % 10); at += 1 }
                if n >= 100 { buffer[at] = UInt8(48 + n / 100 % 10); at += 1 }
                if n >= 10 { buffer[at] = UInt8(48 + n / 10 % 10); at += 1 }
                buffer[at] = UInt8(48 + n % 10)
                at += 1
            }
            func put(_ n: Int, then separator: UInt8) {
                put(n)
                buffer[at] = separator
                at += 1
            }
            put(Int(a >> 24), then: UInt8(ascii: "."))
            put(Int(a >> 16 & 0xFF), then: UInt8(ascii: "."))
            put(Int(a >> 8 & 0xFF), then: UInt8(ascii: "."))
            put(Int(a & 0xFF), then: UInt8(ascii: ":"))
            put(Int(port))
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<at]), as: UTF8.self)
        }
    }

    public static func < (l: Endpoint, r: Endpoint) -> Bool {
        (l.address, l.port) < (r.address, r.port)
    }
}
