"""Reads a classic pcap file for the capture generators (repeat_capture.py, make-fleet-capture.py).

read(path) -> (header, endian, nanoseconds, ip_at, records): the file's 24-byte header, its byte
order for struct ("<" or ">"), whether its timestamps are in nanoseconds, where the IP header
starts in each packet of its link type (Ethernet, Linux SLL, raw IPv4), and its records as
(seconds, fraction, original length, bytes). Exits with a message naming the file on anything else.
"""
import struct
import sys

MAGICS = {
    b"\xd4\xc3\xb2\xa1": ("<", False),
    b"\xa1\xb2\xc3\xd4": (">", False),
    b"\x4d\x3c\xb2\xa1": ("<", True),
    b"\xa1\xb2\x3c\x4d": (">", True),
}
IP_OFFSET = {1: 14, 113: 16, 228: 0, 101: 0}


def read(path):
    data = open(path, "rb").read()
    if data[:4] not in MAGICS:
        sys.exit(f"{path}: not a classic pcap file")
    endian, nanos = MAGICS[data[:4]]
    link = struct.unpack(endian + "I", data[20:24])[0]
    ip_at = IP_OFFSET.get(link)
    if ip_at is None:
        sys.exit(f"{path}: link type {link} not supported")
    records = []
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack(endian + "IIII", data[off:off + 16])
        records.append((sec, frac, orig, data[off + 16:off + 16 + incl]))
        off += 16 + incl
    return data[:24], endian, nanos, ip_at, records
