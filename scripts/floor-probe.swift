// What reading a capture, its headers and a flow table can cost in Swift when nothing is counted per
// packet: scripts/floor.sh compiles this (`swiftc -O`) and times it beside the pipeline's floor.
// A measure, not a reassembler, and not part of the product: classic little-endian pcap of
// Ethernet and IPv4 only; the file read in 1 MB chunks into one buffer that is reused, each packet
// read where it lies (no array per packet); flows in an open-addressed table of plain structs (no
// objects, no reference counts); in-order bytes counted per direction and their first byte read,
// as a framer's first look would; a flow removed at its second FIN or a RST. No out-of-order
// segments, gaps, retransmission window or copies of the bytes.
//
//   floor-probe CAPTURE    prints: packets, segments delivered in order, flows left, and the sum of
//                          the delivered segments' first bytes (so that no read is optimized away)
import Glibc

struct Key: Equatable { var a: UInt32; var b: UInt32; var pa: UInt16; var pb: UInt16 }
struct Half { var next: UInt32 = 0; var started = false; var bytes = 0 }
struct Flow { var key: Key; var used = false; var c2s = Half(); var s2c = Half(); var client: UInt32 = 0; var clientPort: UInt16 = 0; var fins = 0 }

var slots = [Flow](repeating: Flow(key: Key(a: 0, b: 0, pa: 0, pb: 0)), count: 1 << 16)
var mask = slots.count - 1
var live = 0
/// Twice the slots, every flow placed again: at most three quarters full.
func grow() {
    let old = slots
    slots = [Flow](repeating: Flow(key: Key(a: 0, b: 0, pa: 0, pb: 0)), count: old.count * 2)
    mask = slots.count - 1
    for f in old where f.used {
        var i = hash(f.key) & mask
        while slots[i].used { i = (i + 1) & mask }
        slots[i] = f
    }
}
func hash(_ k: Key) -> Int {
    let x = (UInt64(k.a) << 32 | UInt64(k.b)) &* 0x9E37_79B9_7F4A_7C15 ^ (UInt64(k.pa) << 16 | UInt64(k.pb)) &* 0xC2B2_AE3D_27D4_EB4F
    return Int(truncatingIfNeeded: x >> 40)
}

guard CommandLine.arguments.count == 2 else { fputs("usage: floor-probe CAPTURE\n", stderr); exit(2) }
let path = CommandLine.arguments[1]
let fd = open(path, O_RDONLY)
guard fd >= 0 else { fputs("floor-probe: cannot open \(path)\n", stderr); exit(1) }
let cap = 1 << 20
let buf = UnsafeMutableRawPointer.allocate(byteCount: cap + 65536 + 16, alignment: 16)
var have = 0, at = 0
func fill(_ need: Int) -> Bool {
    if have - at >= need { return true }
    memmove(buf, buf + at, have - at); have -= at; at = 0
    while have < need {
        let n = read(fd, buf + have, cap + 65536 - have)
        if n <= 0 { return false }
        have += n
    }
    return true
}
@inline(__always) func u16(_ p: UnsafeRawPointer, _ o: Int) -> UInt16 { UInt16(p.load(fromByteOffset: o, as: UInt8.self)) << 8 | UInt16(p.load(fromByteOffset: o + 1, as: UInt8.self)) }
@inline(__always) func u32(_ p: UnsafeRawPointer, _ o: Int) -> UInt32 { UInt32(u16(p, o)) << 16 | UInt32(u16(p, o + 2)) }

// The file header: little-endian classic pcap (microseconds or nanoseconds), Ethernet.
guard fill(24), [0xa1b2_c3d4, 0xa1b2_3c4d].contains(buf.loadUnaligned(as: UInt32.self)),
      buf.loadUnaligned(fromByteOffset: 20, as: UInt32.self) == 1 else {
    fputs("floor-probe: \(path) is not a little-endian classic pcap of Ethernet\n", stderr); exit(1)
}
at = 24
var packets = 0, delivered = 0, total: UInt32 = 0
while fill(16) {
    let h = buf + at
    let caplen = Int(h.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
    at += 16
    guard fill(caplen) else { break }
    let p = UnsafeRawPointer(buf + at)
    at += caplen
    packets += 1
    guard caplen >= 54, u16(p, 12) == 0x0800 else { continue }
    let ihl = Int(p.load(fromByteOffset: 14, as: UInt8.self) & 0x0F) * 4
    let ipLen = Int(u16(p, 16))
    guard p.load(fromByteOffset: 23, as: UInt8.self) == 6 else { continue }
    let src = u32(p, 26), dst = u32(p, 30)
    let t = 14 + ihl
    let sp = u16(p, t), dp = u16(p, t + 2)
    let seq = u32(p, t + 4)
    let off = Int(p.load(fromByteOffset: t + 12, as: UInt8.self) >> 4) * 4
    let flags = p.load(fromByteOffset: t + 13, as: UInt8.self)
    let payloadStart = t + off
    let payloadEnd = min(caplen, 14 + ipLen)
    let key = src < dst || (src == dst && sp < dp) ? Key(a: src, b: dst, pa: sp, pb: dp) : Key(a: dst, b: src, pa: dp, pb: sp)
    var i = hash(key) & mask
    var found = -1
    slots.withUnsafeMutableBufferPointer { s in
        while s[i].used { if s[i].key == key { found = i; return }; i = (i + 1) & mask }
    }
    if found < 0 {
        if flags & 0x02 == 0 && payloadEnd <= payloadStart { continue }
        if (live + 1) * 4 > slots.count * 3 {
            grow()
            i = hash(key) & mask
            while slots[i].used { i = (i + 1) & mask }
        }
        slots[i] = Flow(key: key, used: true, client: src, clientPort: sp)
        live += 1
        found = i
    }
    slots.withUnsafeMutableBufferPointer { s in
        let toServer = s[found].client == src && s[found].clientPort == sp
        var half = toServer ? s[found].c2s : s[found].s2c
        var start = seq
        if flags & 0x02 != 0 { start &+= 1; half.next = start; half.started = true }
        if !half.started { half.next = start; half.started = true }
        if payloadEnd > payloadStart, start == half.next {
            let n = payloadEnd - payloadStart
            half.next &+= UInt32(n)
            half.bytes += n
            // the framer's first look at the bytes
            total &+= UInt32(p.load(fromByteOffset: payloadStart, as: UInt8.self))
            delivered += 1
        }
        if toServer { s[found].c2s = half } else { s[found].s2c = half }
        if flags & 0x01 != 0 { s[found].fins += 1 }
        if flags & 0x04 != 0 || s[found].fins >= 2 {
            // removal by backward shift
            var j = found
            s[j].used = false
            var k = (j + 1) & mask
            while s[k].used {
                let home = hash(s[k].key) & mask
                if (k > j && (home <= j || home > k)) || (k < j && (home <= j && home > k)) { s[j] = s[k]; s[k].used = false; j = k }
                k = (k + 1) & mask
            }
            live -= 1
        }
    }
}
print(packets, delivered, live, total)
