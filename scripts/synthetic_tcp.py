"""Hand-made TCP connections written as a pcap, for the synthetic fleet captures
(make-subscriber-fleet.py, make-amqp-fleet.py): raw IPv4 link type (101), microsecond timestamps,
checksums left zero (proto-dissect, tcpdump and tshark by default do not check them)."""
import struct


def packet(src, dst, sport, dport, seq, ack, flags, payload=b""):
    tcp = struct.pack(">HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 5 << 4, flags, 65535, 0, 0)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(payload), 0, 0x4000, 64, 6, 0,
                     struct.pack(">I", src), struct.pack(">I", dst))
    return ip + tcp + payload


class Session:
    """One client's connection to `server`:`port`: packets stamped with sequence numbers as they
    are added to `events` (time in microseconds, packet bytes)."""

    def __init__(self, client, client_port, server, server_port, events):
        self.client, self.client_port = client, client_port
        self.server, self.server_port = server, server_port
        self.to_server_seq, self.to_client_seq = 1000, 5000
        self.events = events

    def to_server(self, t, flags, payload=b""):
        self.events.append((t, packet(self.client, self.server, self.client_port, self.server_port,
                                      self.to_server_seq, self.to_client_seq, flags, payload)))
        self.to_server_seq += len(payload) + (1 if flags & 0x03 else 0)

    def to_client(self, t, flags, payload=b""):
        self.events.append((t, packet(self.server, self.client, self.server_port, self.client_port,
                                      self.to_client_seq, self.to_server_seq, flags, payload)))
        self.to_client_seq += len(payload) + (1 if flags & 0x03 else 0)


def write(path, events):
    """The events, sorted by time (stably), as a classic pcap."""
    events.sort(key=lambda e: e[0])
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 101))
        for t, b in events:
            f.write(struct.pack("<IIII", t // 1_000_000, t % 1_000_000, len(b), len(b)))
            f.write(b)
