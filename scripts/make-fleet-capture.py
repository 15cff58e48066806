#!/usr/bin/env python3
"""Writes a fleet capture: one real short MQTT session from samples/ replayed as N devices, each
from its own IPv4 address and port, one device starting every GAP seconds, each session stretched
over SPAN seconds (so about SPAN / GAP are open at once), with its sequence numbers shifted per
device. Made for the bench (scripts/bench.sh), never committed.

    make-fleet-capture.py OUT.pcap [--devices 100000] [--gap 0.001] [--span 1.5]
                          [--sample samples/mqtt311-basic.pcap --client-port 45294]
    make-fleet-capture.py OUT.pcap --syn-only [--devices 200000]

The default session is mqtt311-basic.pcap's `basic-sub` (23 packets, 1,767 bytes: CONNECT,
SUBSCRIBE, retained and live PUBLISHes at QoS 1 and QoS 0 — the sample's QoS 2 publish arrives at
the QoS 1 of the subscription — PUBACKs, DISCONNECT, FIN both ways). No connection of the samples
has a QoS 2 PUBLISH and a SUBSCRIBE and a QoS 0 PUBLISH together; --client-port picks another
(e.g. mqtt31.pcap's 45320: SUBSCRIBE and a whole QoS 2 flow, no QoS 0).

--syn-only writes the session's first packet (its SYN) alone for each device: N half-open
connections, as a port scan or a SYN flood leaves them.

Device k (from 0) is 10.1.0.0 + k, port 1024 + k % 64512 (server: 10.0.0.1, the sample's server
port). IPv4 header checksums are recomputed; TCP checksums are left as captured (the samples'
are not valid to begin with: loopback checksum offload; proto-dissect, tcpdump and tshark by
default do not check them). Classic pcap, the sample's link type (Ethernet, SLL or raw IPv4),
microsecond timestamps.
"""
import argparse
import heapq
import os
import struct
import sys

import pcap_records

SERVER_IP = bytes([10, 0, 0, 1])
FIRST_CLIENT = (10 << 24) | (1 << 16)


def read_pcap(path):
    header, endian, nanos, ip_at, records = pcap_records.read(path)
    if nanos:
        sys.exit(f"{path}: only classic pcap with microsecond timestamps")
    return header, endian, ip_at, [(sec * 1_000_000 + usec, pkt) for sec, usec, _, pkt in records]


def checksum_fold(s):
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


class Template:
    """One packet of the session, ready to be stamped with a device's address, port and shifts."""

    def __init__(self, pkt, ip_at, to_server):
        self.pkt = bytes(pkt)
        self.ip_at = ip_at
        self.to_server = to_server
        ihl = (pkt[ip_at] & 0x0F) * 4
        self.ihl = ihl
        self.tcp = ip_at + ihl
        header = bytearray(pkt[ip_at:ip_at + ihl])
        header[10:12] = b"\0\0"
        header[12:20] = b"\0" * 8
        # The header's sum without addresses and checksum, plus the server's address.
        self.base_sum = sum(struct.unpack("!%dH" % (ihl // 2), header)) + sum(struct.unpack("!2H", SERVER_IP))
        self.seq, self.ack = struct.unpack("!II", pkt[self.tcp + 4:self.tcp + 12])
        self.has_ack = bool(pkt[self.tcp + 13] & 0x10)

    def stamp(self, client_ip, client_port, client_shift, server_shift):
        p = bytearray(self.pkt)
        a, t = self.ip_at, self.tcp
        src, dst = (client_ip, SERVER_IP) if self.to_server else (SERVER_IP, client_ip)
        p[a + 12:a + 16] = src
        p[a + 16:a + 20] = dst
        s = self.base_sum + (client_ip[0] << 8 | client_ip[1]) + (client_ip[2] << 8 | client_ip[3])
        struct.pack_into("!H", p, a + 10, checksum_fold(s))
        own, other = (client_shift, server_shift) if self.to_server else (server_shift, client_shift)
        struct.pack_into("!H", p, t if self.to_server else t + 2, client_port)
        # The acknowledgement number counts the other side's bytes; without ACK it stays as it was.
        struct.pack_into("!II", p, t + 4, (self.seq + own) & 0xFFFFFFFF,
                         (self.ack + other) & 0xFFFFFFFF if self.has_ack else self.ack)
        return p


def session(records, ip_at, client_port):
    """The session's packets (time, Template) and its server port."""
    out, server_port = [], None
    for t, pkt in records:
        if len(pkt) < ip_at + 20 or pkt[ip_at] >> 4 != 4 or pkt[ip_at + 9] != 6:
            continue
        tcp = ip_at + (pkt[ip_at] & 0x0F) * 4
        sport, dport = struct.unpack("!HH", pkt[tcp:tcp + 4])
        if client_port not in (sport, dport):
            continue
        to_server = sport == client_port
        server_port = dport if to_server else sport
        out.append((t, Template(pkt, ip_at, to_server)))
    if not out:
        sys.exit(f"no TCP packets of client port {client_port}")
    return out, server_port


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--sample", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples",
                                                     "mqtt311-basic.pcap"))
    ap.add_argument("--client-port", type=int, default=45294)
    ap.add_argument("--devices", type=int)
    ap.add_argument("--gap", type=float, default=0.001, help="seconds between two devices' starts")
    ap.add_argument("--span", type=float, default=1.5, help="seconds a session is stretched over")
    ap.add_argument("--syn-only", action="store_true", help="each device sends its SYN alone")
    args = ap.parse_args()
    n = args.devices or (200_000 if args.syn_only else 100_000)
    header, endian, ip_at, records = read_pcap(args.sample)
    packets, _ = session(records, ip_at, args.client_port)
    if args.syn_only:
        packets = packets[:1]
    t0 = packets[0][0]
    duration = packets[-1][0] - t0
    stretch = args.span * 1e6 / duration if duration > 0 and not args.syn_only else 1.0
    offsets = [round((t - t0) * stretch) for t, _ in packets]
    templates = [tpl for _, tpl in packets]
    gap = round(args.gap * 1e6)
    start = records[0][0]

    def device_times(j):
        off = offsets[j]
        return ((start + k * gap + off, k, j) for k in range(n))

    record = struct.Struct(endian + "IIII")
    written = 0
    with open(args.out, "wb", buffering=1 << 20) as out:
        out.write(header)
        last_k, stamp_args = -1, None
        for t, k, j in heapq.merge(*(device_times(j) for j in range(len(templates)))):
            if k != last_k:
                ip = FIRST_CLIENT + k
                # Multiplicative shifts: distinct per device, spread over the whole sequence space.
                stamp_args = (ip.to_bytes(4, "big"), 1024 + k % 64512,
                              (k * 0x9E3779B1) & 0xFFFFFFFF, (k * 0x85EBCA77 + 0x165667B1) & 0xFFFFFFFF)
                last_k = k
            pkt = templates[j].stamp(*stamp_args)
            out.write(record.pack(t // 1_000_000, t % 1_000_000, len(pkt), len(pkt)))
            out.write(pkt)
            written += 1
    print(f"{args.out}: {n} devices x {len(templates)} packets = {written} records"
          + ("" if args.syn_only else f", each session over {args.span} s, one every {args.gap} s"))


if __name__ == "__main__":
    main()
