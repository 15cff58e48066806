#!/usr/bin/env python3
"""Writes a capture repeated N times as distinct connections, to check that memory stays flat as a
capture grows:  repeat_capture.py IN.pcap OUT.pcap N

Copy k (from 0) moves every IPv4 address a.b.c.d to a.(b+k).c.d (with the header checksum
recomputed) and shifts timestamps past the end of copy k-1, so each copy's connections are new
connections to any reader. Classic pcap with Ethernet (1), Linux SLL (113) or raw IPv4 (228) links.
"""
import struct
import sys

import pcap_records


def checksum(header):
    s = sum(struct.unpack("!%dH" % (len(header) // 2), header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def main(src, dst, n):
    header, endian, nanos, ip_at, records = pcap_records.read(src)
    first, last = records[0][0], records[-1][0]
    span = last - first + 2
    with open(dst, "wb") as out:
        out.write(header)
        for k in range(n):
            for sec, frac, orig, pkt in records:
                pkt = bytearray(pkt)
                if k and len(pkt) >= ip_at + 20 and pkt[ip_at] >> 4 == 4:
                    ihl = (pkt[ip_at] & 0x0F) * 4
                    pkt[ip_at + 13] = (pkt[ip_at + 13] + k) & 0xFF
                    pkt[ip_at + 17] = (pkt[ip_at + 17] + k) & 0xFF
                    pkt[ip_at + 10:ip_at + 12] = b"\0\0"
                    pkt[ip_at + 10:ip_at + 12] = struct.pack("!H", checksum(bytes(pkt[ip_at:ip_at + ihl])))
                out.write(struct.pack(endian + "IIII", sec + k * span, frac, len(pkt), orig))
                out.write(pkt)
    print(f"{dst}: {n} x {len(records)} records" + (" (ns)" if nanos else ""))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
