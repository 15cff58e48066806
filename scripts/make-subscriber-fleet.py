#!/usr/bin/env python3
"""Writes a synthetic fleet capture in which every device subscribes to a filter of its own and
publishes to a topic of its own, as IoT fleets do (`d/K/cmd/#` and `d/K/telemetry`): N devices,
one starting every millisecond, about OPEN connected at once, each session a TCP handshake,
CONNECT (client id dev-K, MQTT 3.1.1), CONNACK, SUBSCRIBE, SUBACK, PUBLISHES QoS 0 telemetry
messages, DISCONNECT, FIN both ways. With --shared every device subscribes to one filter,
`d/+/cmd/#`, instead (the same traffic otherwise).

    make-subscriber-fleet.py OUT.pcap [--devices 20000] [--open 1500] [--publishes 5] [--shared]

Made for the bench (scripts/bench.sh), never committed: the broker model must count a PUBLISH's
subscribers in time that does not grow with the number of filters open (docs/performance.md).
Unlike make-fleet-capture.py it replays no real session: no sample has a device that both
subscribes and publishes with per-device topics. Raw IPv4 link type (101), microsecond
timestamps; IPv4 and TCP checksums are left zero (proto-dissect, tcpdump and tshark by default do
not check them).
"""
import argparse
import struct

from synthetic_tcp import Session, write

SERVER = (10 << 24) | 1
FIRST_CLIENT = (10 << 24) | (1 << 16)


def string(b):
    return struct.pack(">H", len(b)) + b


def remaining_length(n):
    out = b""
    while True:
        digit, n = n % 128, n // 128
        out += bytes([digit | (128 if n else 0)])
        if not n:
            return out


def mqtt(first, body):
    return bytes([first]) + remaining_length(len(body)) + body



def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--devices", type=int, default=20000)
    parser.add_argument("--open", type=int, default=1500, help="devices connected at once, about")
    parser.add_argument("--publishes", type=int, default=5)
    parser.add_argument("--shared", action="store_true", help="one filter for every device: d/+/cmd/#")
    args = parser.parse_args()
    gap = 1000  # microseconds between two devices' starts
    step = gap * args.open // (4 + args.publishes)
    events = []
    for k in range(args.devices):
        s = Session(FIRST_CLIENT + k, 1024 + k % 60000, SERVER, 1883, events)
        t = k * gap
        s.to_server(t, 0x02)
        s.to_client(t + 10, 0x12)
        s.to_server(t + 20, 0x10)
        s.to_server(t + step, 0x18, mqtt(0x10, string(b"MQTT") + bytes([4, 2]) + struct.pack(">H", 60) + string(b"dev-%d" % k)))
        s.to_client(t + step + 50, 0x18, mqtt(0x20, bytes([0, 0])))
        topic_filter = b"d/+/cmd/#" if args.shared else b"d/%d/cmd/#" % k
        s.to_server(t + 2 * step, 0x18, mqtt(0x82, struct.pack(">H", 1) + string(topic_filter) + bytes([0])))
        s.to_client(t + 2 * step + 50, 0x18, mqtt(0x90, struct.pack(">H", 1) + bytes([0])))
        for i in range(args.publishes):
            s.to_server(t + (3 + i) * step, 0x18, mqtt(0x30, string(b"d/%d/telemetry" % k) + b'{"v":%d}' % i))
        end = t + (3 + args.publishes) * step
        s.to_server(end, 0x18, mqtt(0xE0, b""))
        s.to_server(end + step, 0x11)
        s.to_client(end + step + 20, 0x11)
        s.to_server(end + step + 40, 0x10)
    write(args.out, events)


if __name__ == "__main__":
    main()
