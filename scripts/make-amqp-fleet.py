#!/usr/bin/env python3
"""Writes a synthetic AMQP 0-9-1 capture of many short client connections, as an application's
clients make them against RabbitMQ: each opens a connection and a channel, declares a
server-named exclusive queue (the broker names it amq.gen-K), binds it to amq.topic with a key of
its own (user.K.#), publishes PUBLISHES messages to amq.topic (one to its own key, the others to
another client's), deletes its queue and closes; one client starting every millisecond, about
OPEN connected at once. With --no-bind the clients publish to the default exchange instead.

    make-amqp-fleet.py OUT.pcap [--clients 20000] [--open 1500] [--publishes 4] [--no-bind]

Made for the bench (scripts/bench.sh), never committed: the broker model's cost per declare,
bind, delete and publish must not grow with the queues and bindings seen (docs/performance.md).
Raw IPv4 link type (101), microsecond timestamps, checksums left zero (proto-dissect, tcpdump
and tshark by default do not check them).
"""
import argparse
import struct

from synthetic_tcp import Session, write

SERVER = (10 << 24) | 2
FIRST_CLIENT = (10 << 24) | (2 << 16)


def short(s):
    return bytes([len(s)]) + s


def long_string(s):
    return struct.pack(">I", len(s)) + s


EMPTY_TABLE = struct.pack(">I", 0)


def frame(kind, channel, payload):
    return struct.pack(">BHI", kind, channel, len(payload)) + payload + b"\xce"


def method(channel, class_id, method_id, arguments=b""):
    return frame(1, channel, struct.pack(">HH", class_id, method_id) + arguments)


def message(channel, exchange, key, body):
    publish = method(channel, 60, 40, struct.pack(">H", 0) + short(exchange) + short(key) + b"\x00")
    header = frame(2, channel, struct.pack(">HHQH", 60, 0, len(body), 0))
    return publish + header + frame(3, channel, body)



def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--clients", type=int, default=20000)
    parser.add_argument("--open", type=int, default=1500, help="clients connected at once, about")
    parser.add_argument("--publishes", type=int, default=4)
    parser.add_argument("--no-bind", action="store_true", help="publish to the default exchange, bind nothing")
    args = parser.parse_args()
    gap = 1000  # microseconds between two clients' starts
    steps = 8 + args.publishes
    step = gap * args.open // steps
    events = []
    for k in range(args.clients):
        s = Session(FIRST_CLIENT + k, 1024 + k % 60000, SERVER, 5672, events)
        t = k * gap
        queue = b"amq.gen-%d" % k
        s.to_server(t, 0x02)
        s.to_client(t + 10, 0x12)
        s.to_server(t + 20, 0x10)
        s.to_server(t + 30, 0x18, b"AMQP\x00\x00\x09\x01")
        s.to_client(t + 40, 0x18, method(0, 10, 10, b"\x00\x09" + EMPTY_TABLE + long_string(b"PLAIN") + long_string(b"en_US")))
        s.to_server(t + step, 0x18, method(0, 10, 11, EMPTY_TABLE + short(b"PLAIN") + long_string(b"\x00guest\x00guest") + short(b"en_US")))
        s.to_client(t + step + 10, 0x18, method(0, 10, 30, struct.pack(">HIH", 2047, 131072, 60)))
        s.to_server(t + step + 20, 0x18, method(0, 10, 31, struct.pack(">HIH", 2047, 131072, 60))
                    + method(0, 10, 40, short(b"/") + short(b"") + b"\x00"))
        s.to_client(t + step + 30, 0x18, method(0, 10, 41, short(b"")))
        s.to_server(t + 2 * step, 0x18, method(1, 20, 10, short(b"")))
        s.to_client(t + 2 * step + 10, 0x18, method(1, 20, 11, long_string(b"")))
        # queue.declare: server-named, exclusive, auto-delete.
        s.to_server(t + 3 * step, 0x18, method(1, 50, 10, struct.pack(">H", 0) + short(b"") + b"\x0c" + EMPTY_TABLE))
        s.to_client(t + 3 * step + 10, 0x18, method(1, 50, 11, short(queue) + struct.pack(">II", 0, 0)))
        if not args.no_bind:
            s.to_server(t + 4 * step, 0x18, method(1, 50, 20, struct.pack(">H", 0) + short(queue) + short(b"amq.topic")
                                                   + short(b"user.%d.#" % k) + b"\x00" + EMPTY_TABLE))
            s.to_client(t + 4 * step + 10, 0x18, method(1, 50, 21))
        for i in range(args.publishes):
            other = k if i == 0 else (k * 7 + i) % args.clients
            if args.no_bind:
                s.to_server(t + (5 + i) * step, 0x18, message(1, b"", b"amq.gen-%d" % other, b'{"n":%d}' % i))
            else:
                s.to_server(t + (5 + i) * step, 0x18, message(1, b"amq.topic", b"user.%d.hello" % other, b'{"n":%d}' % i))
        end = t + (5 + args.publishes) * step
        s.to_server(end, 0x18, method(1, 50, 40, struct.pack(">H", 0) + short(queue) + b"\x00"))
        s.to_client(end + 10, 0x18, method(1, 50, 41, struct.pack(">I", 0)))
        s.to_server(end + step, 0x18, method(0, 10, 50, struct.pack(">H", 200) + short(b"bye") + struct.pack(">HH", 0, 0)))
        s.to_client(end + step + 10, 0x18, method(0, 10, 51))
        s.to_server(end + 2 * step, 0x11)
        s.to_client(end + 2 * step + 20, 0x11)
        s.to_server(end + 2 * step + 40, 0x10)
    write(args.out, events)


if __name__ == "__main__":
    main()
