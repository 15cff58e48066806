#!/usr/bin/env python3
"""QoS 1 and 2 message flows that go wrong, from raw sockets against a real
broker, for scripts/make-mqtt-samples.sh (sample `flows`).

Usage:
  mqtt_flows.py --port 1883

Raw sockets, not a client library: a library completes its flows, and these
scenarios must not. Each step waits for the broker's answer (bounded), so the
capture holds the broker's real replies. Only 127.0.0.1 is contacted.

Scenarios, one connection each (client ids say which):
  flows-sub      MQTT 3.1.1: subscribes to flows/# with QoS 1, gets a PUBLISH
                 and never acknowledges it, then closes (the broker's flow is
                 left unacknowledged).
  flows-killed   MQTT 3.1.1: QoS 2 PUBLISH, gets PUBREC, then the socket is
                 reset without PUBREL (a client killed mid-flow).
  flows-dup      MQTT 3.1.1: QoS 1 PUBLISH and its DUP repeat in one write: the
                 broker acknowledges both (the second PUBACK finds no flow).
  flows-reuse    MQTT 3.1.1: QoS 2 PUBLISH id 7, PUBREC; a new PUBLISH (not DUP)
                 under id 7 while the first flow is open; then a PUBREL for id
                 99, which no flow has.
  flows-v5       MQTT 5.0 against a broker whose Receive Maximum is 3: four
                 QoS 1 PUBLISHes in one write (one over the maximum); a PUBLISH
                 to a topic the ACL denies (PUBACK 0x87 Not authorized).
  flows-persist  MQTT 3.1.1 without Clean Session, twice: no session stored,
                 then the session resumed.
  flows-fan-*    MQTT 3.1.1, one publisher, three subscribers to flows/fan/# at
                 QoS 0, 1 and 2: PUBLISHes at QoS 0, 1 and 2 fan out to each.
  flows-backoff  MQTT 3.1.1, four connections, each ended by DISCONNECT, the next
                 CONNECT 0.1 s, 0.2 s and 0.4 s after (exponential backoff).
  flows-takeover MQTT 3.1.1, a second connection with the same client id while
                 the first is open: the broker closes the first.
  flows-quiet    MQTT 3.1.1 with a keep-alive of 2 s: one PINGREQ, PINGRESP, then
                 silence until the broker closes the connection (after 3 s).
"""

import argparse
import socket
import struct
import sys
import time

HOST = "127.0.0.1"
WAIT = 10.0


def fail(msg):
    print(f"mqtt_flows: {msg}", file=sys.stderr)
    sys.exit(1)


def varint(n):
    out = bytearray()
    while True:
        b = n % 128
        n //= 128
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def string(s):
    b = s.encode()
    return struct.pack(">H", len(b)) + b


def packet(first, body):
    return bytes([first]) + varint(len(body)) + body


def connect(client_id, v5=False, keep_alive=30, clean=True):
    flags = 0x02 if clean else 0x00  # clean session / clean start
    if v5:
        body = string("MQTT") + bytes([5, flags]) + struct.pack(">H", keep_alive) + varint(0) + string(client_id)
    else:
        body = string("MQTT") + bytes([4, flags]) + struct.pack(">H", keep_alive) + string(client_id)
    return packet(0x10, body)


def publish(topic, payload, qos, pid, dup=False, v5=False):
    first = 0x30 | (qos << 1) | (0x08 if dup else 0)
    body = string(topic) + (struct.pack(">H", pid) if qos else b"") + (varint(0) if v5 else b"") + payload
    return packet(first, body)


def ack(kind, pid):
    first = {"puback": 0x40, "pubrec": 0x50, "pubrel": 0x62, "pubcomp": 0x70}[kind]
    return packet(first, struct.pack(">H", pid))


def subscribe(topic, qos, pid):
    return packet(0x82, struct.pack(">H", pid) + string(topic) + bytes([qos]))


class Conn:
    def __init__(self, port, client_id, v5=False, keep_alive=30, clean=True):
        self.s = socket.create_connection((HOST, port), timeout=WAIT)
        self.buf = b""
        self.v5 = v5
        self.s.sendall(connect(client_id, v5, keep_alive, clean))
        t, body = self.read()
        if t != 2:
            fail(f"{client_id}: expected CONNACK, got type {t}")
        code = body[1]
        if code != 0:
            fail(f"{client_id}: CONNACK refused ({code})")
        self.connack = body

    def read(self):
        """One packet: (type, body)."""
        deadline = time.time() + WAIT
        while True:
            if len(self.buf) >= 2:
                n, mult, i = 0, 1, 1
                while i < len(self.buf):
                    b = self.buf[i]
                    n += (b & 0x7F) * mult
                    mult *= 128
                    i += 1
                    if not b & 0x80:
                        break
                else:
                    i = None
                if i is not None and len(self.buf) >= i + n:
                    t = self.buf[0] >> 4
                    self.last_first = self.buf[0]
                    body = self.buf[i:i + n]
                    self.buf = self.buf[i + n:]
                    return t, body
            if time.time() > deadline:
                fail("timed out waiting for the broker")
            chunk = self.s.recv(65536)
            if not chunk:
                fail("the broker closed the connection")
            self.buf += chunk

    def expect(self, t, what):
        got, body = self.read()
        if got != t:
            fail(f"expected {what} (type {t}), got type {got}")
        return body

    def send(self, *packets):
        self.s.sendall(b"".join(packets))

    def receive(self, count):
        """Reads until `count` PUBLISHes came, acknowledging each as a client library does
        (PUBACK; PUBREC, then PUBCOMP for the PUBREL)."""
        got = 0
        awaiting = set()  # QoS 2 deliveries waiting for their PUBREL
        while got < count or awaiting:
            t, body = self.read()
            if t == 3:
                got += 1
                qos = (self.last_first >> 1) & 3
                if qos:
                    n = struct.unpack(">H", body[:2])[0]
                    pid = struct.unpack(">H", body[2 + n:4 + n])[0]
                    self.send(ack("puback" if qos == 1 else "pubrec", pid))
                    if qos == 2:
                        awaiting.add(pid)
            elif t == 6:
                pid = struct.unpack(">H", body[:2])[0]
                awaiting.discard(pid)
                self.send(ack("pubcomp", pid))
        return got

    def disconnect(self):
        self.s.sendall(packet(0xE0, b"\x00" if self.v5 else b""))
        self.s.close()

    def reset(self):
        # SO_LINGER 0: close() sends RST, as when a process is killed with unread data.
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=1883)
    port = ap.parse_args().port

    # The subscriber that never acknowledges.
    sub = Conn(port, "flows-sub")
    sub.send(subscribe("flows/#", 1, 1))
    sub.expect(9, "SUBACK")

    # A client killed after PUBREC: its QoS 2 flow stops there.
    killed = Conn(port, "flows-killed")
    killed.send(publish("flows/killed", b"half-done", 2, 1))
    killed.expect(5, "PUBREC")
    killed.reset()

    # The subscriber got the message the broker released... or not: the flow was cut before
    # PUBREL, so mosquitto delivers nothing yet. Publish one it will deliver.
    dup = Conn(port, "flows-dup")
    dup.send(publish("flows/dup", b"once", 1, 3), publish("flows/dup", b"once", 1, 3, dup=True))
    dup.expect(4, "PUBACK")
    dup.expect(4, "PUBACK")
    dup.disconnect()
    sub.expect(3, "PUBLISH")  # the broker's QoS 1 delivery, left unacknowledged
    time.sleep(0.3)  # the repeat may be delivered too (QoS 1 allows it): let it arrive
    sub.disconnect()

    reuse = Conn(port, "flows-reuse")
    reuse.send(publish("flows/reuse", b"first", 2, 7))
    reuse.expect(5, "PUBREC")
    reuse.send(publish("flows/reuse", b"second", 2, 7))
    reuse.expect(5, "PUBREC")
    reuse.send(ack("pubrel", 99))
    reuse.expect(7, "PUBCOMP")
    reuse.send(ack("pubrel", 7))
    reuse.expect(7, "PUBCOMP")
    reuse.disconnect()

    v5 = Conn(port, "flows-v5", v5=True)
    v5.send(*[publish("flows/v5", b"m%d" % i, 1, 10 + i, v5=True) for i in range(4)])
    for _ in range(4):
        t, _ = v5.read()
        if t == 14:  # the broker may enforce its maximum with DISCONNECT 0x93
            v5 = Conn(port, "flows-v5b", v5=True)
            break
        if t != 4:
            fail(f"flows-v5: expected PUBACK, got type {t}")
    v5.send(publish("denied/topic", b"no", 1, 20, v5=True))
    body = v5.expect(4, "PUBACK")
    if len(body) < 3 or body[2] < 0x80:
        fail(f"the denied PUBLISH was not refused: {body.hex()}")
    v5.disconnect()

    # A session kept between connections: the first finds none, the second resumes it.
    for _ in range(2):
        persist = Conn(port, "flows-persist", clean=False)
        persist.disconnect()

    # One publisher fanning out to three subscribers, at QoS 0, 1 and 2 (each subscriber takes
    # one QoS), each subscriber acknowledging as a client library does.
    subs = []
    for q in range(3):
        sub_q = Conn(port, "flows-fan-sub%d" % q)
        sub_q.send(subscribe("flows/fan/#", q, 1))
        sub_q.expect(9, "SUBACK")
        subs.append(sub_q)
    pub = Conn(port, "flows-fan-pub")
    for q in range(3):
        pub.send(publish("flows/fan/q%d" % q, b"fan-%d" % q, q, 40 + q))
        if q == 1:
            pub.expect(4, "PUBACK")
        elif q == 2:
            pub.expect(5, "PUBREC")
            pub.send(ack("pubrel", 42))
            pub.expect(7, "PUBCOMP")
    for sub_q in subs:
        sub_q.receive(3)
    time.sleep(0.2)  # the last acknowledgements reach the broker
    for sub_q in subs:
        sub_q.disconnect()
    pub.disconnect()

    # A reconnect loop with exponential backoff: 0.1 s, 0.2 s, 0.4 s between a connection's end
    # and the next CONNECT.
    for pause in (0.1, 0.2, 0.4, None):
        loop = Conn(port, "flows-backoff")
        loop.disconnect()
        if pause:
            time.sleep(pause)

    # A session takeover: a second connection with the same client id while the first is open;
    # the broker closes the first.
    first = Conn(port, "flows-takeover")
    second = Conn(port, "flows-takeover")
    deadline = time.time() + WAIT
    while time.time() < deadline:
        try:
            if not first.s.recv(65536):
                break
        except (socket.timeout, ConnectionResetError):
            break
    first.s.close()
    second.disconnect()

    # A client that pings once, then falls silent: the broker closes it after 1.5 times its
    # keep-alive of 2 s.
    quiet = Conn(port, "flows-quiet", keep_alive=2)
    quiet.send(packet(0xC0, b""))
    quiet.expect(13, "PINGRESP")
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            if not quiet.s.recv(65536):
                break
        except socket.timeout:
            continue
    else:
        fail("flows-quiet: the broker did not close the silent connection within 10 s")
    quiet.s.close()
    time.sleep(0.2)


if __name__ == "__main__":
    main()
