#!/usr/bin/env python3
"""AMQP 0-9-1 client scenarios driven by pika 1.3 (and, for one message that pika
cannot encode, a minimal raw-socket client), for scripts/make-amqp-samples.sh.

Usage:
  amqp_clients.py exchanges  [--port 5672]   the four exchange types, bindings,
                                              exchange-to-exchange, basic.get, purge, deletes
  amqp_clients.py properties [--port 5672]   every basic property, every table value
                                              type (pika's, then a hand-encoded table with
                                              the rest), empty and multi-frame bodies
  amqp_clients.py consume    [--port 5672]   qos/consume/ack/nack/reject/cancel,
                                              publisher confirms, tx commit/rollback,
                                              basic.return, heartbeats
  amqp_clients.py errors     [--port 5672]   channel errors 406 and 404, a refused login

Each scenario prints one line per step to stdout, checks what the broker
answered, and exits non-zero on anything unexpected. Every wait is bounded
(pika's socket/handshake timeouts, and `timeout` around the whole run in the
shell script). Only 127.0.0.1 is ever contacted; the login is guest/guest.
"""

import argparse
import datetime
import decimal
import socket
import struct
import sys
import time

import pika
import pika.frame
from pika.compat import long as pika_long
from pika.exceptions import (ChannelClosedByBroker, ProbableAuthenticationError,
                             AuthenticationError, ConnectionClosedByBroker,
                             UnroutableError)

HOST = "127.0.0.1"
USER = "guest"
PASSWORD = "guest"
WAIT = 10.0  # seconds for any single step


def fail(msg):
    print(f"amqp_clients: {msg}", file=sys.stderr)
    sys.exit(1)


def say(msg):
    print(msg, flush=True)


def params(port, name, password=PASSWORD, client_properties=None, **kw):
    """ConnectionParameters for 127.0.0.1:port with a connection_name client
    property (shown by the broker and in connection.start-ok)."""
    return pika.ConnectionParameters(
        host=HOST, port=port, virtual_host="/",
        credentials=pika.PlainCredentials(USER, password),
        client_properties={"connection_name": name, **(client_properties or {})},
        socket_timeout=WAIT, stack_timeout=WAIT, blocked_connection_timeout=WAIT,
        connection_attempts=1, retry_delay=0, **kw)


def connect(port, name, **kw):
    return pika.BlockingConnection(params(port, name, **kw))


def expect(cond, what):
    if not cond:
        fail(what)


def get_one(ch, queue, body=None):
    """basic.get (no-ack) that must return a message (get-ok), optionally with BODY."""
    method, _props, got = ch.basic_get(queue, auto_ack=True)
    expect(method is not None, f"basic.get on {queue}: get-empty, expected a message")
    if body is not None:
        expect(got == body, f"basic.get on {queue}: got {got!r}, expected {body!r}")
    return got


def get_empty(ch, queue):
    method, _props, got = ch.basic_get(queue, auto_ack=True)
    expect(method is None, f"basic.get on {queue}: got {got!r}, expected get-empty")


def drain(conn, until, what, secs=WAIT):
    """Processes I/O on CONN until UNTIL() is true, at most SECS seconds."""
    deadline = time.monotonic() + secs
    while not until():
        if time.monotonic() > deadline:
            fail(f"timed out waiting for {what}")
        conn.process_data_events(time_limit=0.1)


# ---------------------------------------------------------------- exchanges --

def exchanges(port):
    conn = connect(port, "pd-exchanges")
    ch = conn.channel()
    say(f"connected, channel {ch.channel_number}")

    # The four exchange types.
    ch.exchange_declare("pd.direct", exchange_type="direct")
    ch.exchange_declare("pd.fanout", exchange_type="fanout")
    ch.exchange_declare("pd.topic", exchange_type="topic")
    ch.exchange_declare("pd.headers", exchange_type="headers")
    say("declared pd.direct pd.fanout pd.topic pd.headers")

    # Server-named exclusive queues (queue.declare with an empty name).
    def server_named():
        q = ch.queue_declare("", exclusive=True).method.queue
        expect(q.startswith("amq.gen-"), f"server-named queue {q!r}")
        return q

    q_direct, q_fan1, q_fan2, q_topic, q_headers = (server_named() for _ in range(5))
    say(f"server-named queues: {q_direct} {q_fan1} {q_fan2} {q_topic} {q_headers}")

    ch.queue_bind(q_direct, "pd.direct", routing_key="invoice.created")
    ch.queue_bind(q_fan1, "pd.fanout")
    ch.queue_bind(q_fan2, "pd.fanout", routing_key="ignored-by-fanout")
    ch.queue_bind(q_topic, "pd.topic", routing_key="sensors.*.temp")
    ch.queue_bind(q_topic, "pd.topic", routing_key="alerts.#")
    ch.queue_bind(q_headers, "pd.headers",
                  arguments={"x-match": "all", "format": "pdf", "type": "report"})
    ch.queue_bind(q_headers, "pd.headers",
                  arguments={"x-match": "any", "priority": "urgent", "dept": "legal"})
    say("bound queues")

    def pub(exchange, key, body, headers=None):
        props = pika.BasicProperties(content_type="text/plain", headers=headers)
        ch.basic_publish(exchange, key, body, props)

    # direct
    pub("pd.direct", "invoice.created", b"invoice 1001 created")
    pub("pd.direct", "invoice.paid", b"no queue bound for this key")
    # fanout: both queues
    pub("pd.fanout", "whatever", b"fanout to everyone")
    # topic
    pub("pd.topic", "sensors.kitchen.temp", b"21.5")
    pub("pd.topic", "sensors.kitchen.humidity", b"matches no pattern")
    # headers
    pub("pd.headers", "", b"monthly report.pdf", {"format": "pdf", "type": "report"})
    pub("pd.headers", "", b"urgent memo", {"priority": "urgent", "format": "txt"})
    pub("pd.headers", "", b"only pdf, x-match all fails", {"format": "pdf"})
    say("published through each exchange")

    get_one(ch, q_direct, b"invoice 1001 created")
    get_empty(ch, q_direct)
    get_one(ch, q_fan1, b"fanout to everyone")
    get_one(ch, q_fan2, b"fanout to everyone")
    get_empty(ch, q_fan1)
    get_one(ch, q_topic, b"21.5")
    get_empty(ch, q_topic)
    get_one(ch, q_headers, b"monthly report.pdf")
    get_one(ch, q_headers, b"urgent memo")
    get_empty(ch, q_headers)
    say("basic.get: get-ok for each routed message, get-empty after")

    # Exchange-to-exchange: pd.topic -> pd.fanout for alerts.#.
    ch.exchange_bind(destination="pd.fanout", source="pd.topic", routing_key="alerts.#")
    pub("pd.topic", "alerts.disk.full", b"disk full (via e2e binding)")
    get_one(ch, q_topic, b"disk full (via e2e binding)")
    get_one(ch, q_fan1, b"disk full (via e2e binding)")
    get_one(ch, q_fan2, b"disk full (via e2e binding)")
    ch.exchange_unbind(destination="pd.fanout", source="pd.topic", routing_key="alerts.#")
    pub("pd.topic", "alerts.disk.ok", b"disk ok (e2e unbound)")
    get_one(ch, q_topic, b"disk ok (e2e unbound)")
    get_empty(ch, q_fan1)
    say("exchange.bind / exchange.unbind")

    ch.queue_unbind(q_topic, "pd.topic", routing_key="alerts.#")
    say("queue.unbind")

    # queue.purge: three messages waiting in q_fan1 (and q_fan2).
    for i in range(3):
        pub("pd.fanout", "", f"to be purged {i}".encode())
    purged = ch.queue_purge(q_fan1).method.message_count
    expect(purged == 3, f"queue.purge-ok message_count {purged}, expected 3")
    say(f"queue.purge {q_fan1}: {purged} messages")

    for q in (q_direct, q_fan1, q_fan2, q_topic, q_headers):
        n = ch.queue_delete(q).method.message_count
        say(f"queue.delete {q}: {n} messages")
    for e in ("pd.direct", "pd.fanout", "pd.topic", "pd.headers"):
        ch.exchange_delete(e)
    say("exchange.delete x4")

    ch.close()
    conn.close()
    say("closed")


# --------------------------------------------------------------- properties --

# Fixed values, so every run sends the same bytes.
TIMESTAMP = 1700000000  # 2023-11-14T22:13:20Z
HEADERS = {
    "bool-true": True,
    "bool-false": False,
    "int-small": 42,                      # 'I' (signed 32-bit)
    "int-negative": -7,                   # 'I'
    "int-32-max": 2147483647,             # 'I'
    "int-64": 2**40 + 1,                  # too big for 32 bits: 'l'
    "long-explicit": pika_long(5),        # pika.compat.long is always 64-bit: 'l'
    "decimal": decimal.Decimal("3.14159"),  # 'D': 5 decimals, 314159
    "decimal-integral": decimal.Decimal("1200"),  # 'D': normalized 1.2E+3, sent 0 decimals
    "string": "grüße, 世界",             # 'S' (UTF-8)
    "string-empty": "",
    "bytes": b"\x00\x01\xfe\xff",         # 'x' (byte array)
    "list": [1, "two", True, None, [3, 4], {"k": "v"}],  # 'A'
    "nested": {"level": 1, "inner": {"level": 2, "tags": ["a", "b"]}},  # 'F'
    "datetime": datetime.datetime(2024, 1, 2, 3, 4, 5),  # 'T' (seconds, UTC)
    "void": None,                         # 'V'
    # Last on purpose: pika sends a negative 64-bit int as 'L' (the 0-9-1
    # spec's long-long-uint letter, absent from RabbitMQ's errata table).
    # RabbitMQ passes it through untouched, but Wireshark 4.0 does not know
    # 'L' and stops decoding the table there.
    "int-64-negative": -(2**40),          # 'L'
}
LARGE_SIZE = 20000


def large_body(size=LARGE_SIZE):
    """Deterministic printable text, so the body frames are easy to check."""
    line = b"proto-dissect multi-frame body line %05d 0123456789abcdefghij\n"
    out = bytearray()
    i = 0
    while len(out) < size:
        out += line % i
        i += 1
    return bytes(out[:size])


# Every value type of RabbitMQ's field-table grammar ("AMQP 0-9-1 errata":
# 's' is a signed 16-bit int there, not the spec's short string), as
# (name, type letter, value); pika cannot write b B s u i f d, so this table
# is encoded by hand and published over a raw socket (RawAMQP below). The
# names start with the letter, so a dissector's output is easy to check.
ALL_TYPES_TABLE = [
    ("t-bool", "t", True),
    ("b-int8", "b", -128),
    ("B-uint8", "B", 255),
    ("s-int16", "s", -32768),
    ("u-uint16", "u", 65535),
    ("I-int32", "I", -2147483648),
    ("i-uint32", "i", 4294967295),
    ("l-int64", "l", -(2**63)),
    ("f-float", "f", 3.14),
    ("d-double", "d", -2.718281828459045),
    ("D-decimal", "D", (2, -12345)),          # scale 2, mantissa -12345: -123.45
    ("S-string", "S", "long string \u2713"),
    ("x-bytes", "x", b"\x00\x7f\x80\xff"),
    ("A-array", "A", [("s", -2), ("u", 2), ("f", 0.5), ("S", "item"), ("V", None)]),
    ("T-timestamp", "T", 4102444800),         # 2100-01-01T00:00:00Z, past 2^31
    ("F-table", "F", [("b-int8", "b", 127), ("d-double", "d", 1.5e-10),
                      ("F-inner", "F", [("t-bool", "t", False)])]),
    ("V-void", "V", None),
]
ALL_TYPES_BODY = b"headers: every field-table value type, hand-encoded"
ALL_TYPES_MESSAGE_ID = "msg-0004-all-types"

# Fixed-size field values: letter -> struct format.
_FIXED = {"t": ">B", "b": ">b", "B": ">B", "s": ">h", "u": ">H", "I": ">i", "i": ">I",
          "l": ">q", "f": ">f", "d": ">d", "T": ">Q"}


def _shortstr(text):
    raw = text.encode()
    return struct.pack(">B", len(raw)) + raw


def _longstr(raw):
    return struct.pack(">I", len(raw)) + raw


def encode_value(letter, value):
    """One field value: the type letter and its encoding (AMQP 0-9-1 §4.2.5.5)."""
    if letter in _FIXED:
        data = struct.pack(_FIXED[letter], int(value) if letter == "t" else value)
    elif letter == "D":
        scale, mantissa = value
        data = struct.pack(">Bi", scale, mantissa)
    elif letter == "S":
        data = _longstr(value.encode())
    elif letter == "x":
        data = _longstr(value)
    elif letter == "A":
        data = _longstr(b"".join(encode_value(l, v) for l, v in value))
    elif letter == "F":
        data = encode_table(value)
    elif letter == "V":
        data = b""
    else:
        raise ValueError(f"no encoding for field type {letter!r}")
    return letter.encode() + data


def encode_table(entries):
    """A field table (long-uint length, then name/value pairs) from (name, letter, value)."""
    return _longstr(b"".join(_shortstr(n) + encode_value(l, v) for n, l, v in entries))


FRAME_METHOD, FRAME_HEADER, FRAME_BODY, FRAME_END = 1, 2, 3, 0xCE


class RawAMQP:
    """Just enough of an AMQP 0-9-1 client, on a plain socket, to publish one message
    whose content header is given as bytes: protocol header, start-ok (PLAIN),
    tune-ok, open, channel.open, publish, then channel and connection close, each
    step waiting for the broker's reply (bounded by WAIT)."""

    def __init__(self, port, name, frame_max=4096):
        self.sock = socket.create_connection((HOST, port), timeout=WAIT)
        self.buf = b""
        self.frame_max = frame_max
        self.sock.sendall(b"AMQP\x00\x00\x09\x01")
        self.expect(0, 10, 10, "connection.start")
        client_properties = encode_table([("connection_name", "S", name),
                                          ("product", "S", "proto-dissect amqp_clients.py raw")])
        self.method(0, 10, 11, client_properties + _shortstr("PLAIN")
                    + _longstr(f"\0{USER}\0{PASSWORD}".encode()) + _shortstr("en_US"))
        tune = self.expect(0, 10, 30, "connection.tune")
        channel_max, _server_frame_max, _heartbeat = struct.unpack(">HIH", tune[:8])
        self.method(0, 10, 31, struct.pack(">HIH", channel_max, frame_max, 0))  # no heartbeats
        self.method(0, 10, 40, _shortstr("/") + _shortstr("") + b"\x00")
        self.expect(0, 10, 41, "connection.open-ok")
        self.method(1, 20, 10, _shortstr(""))
        self.expect(1, 20, 11, "channel.open-ok")

    def frame(self, kind, channel, payload):
        self.sock.sendall(struct.pack(">BHI", kind, channel, len(payload)) + payload
                          + bytes([FRAME_END]))

    def method(self, channel, class_id, method_id, arguments):
        self.frame(FRAME_METHOD, channel, struct.pack(">HH", class_id, method_id) + arguments)

    def read_frame(self):
        while True:
            if len(self.buf) >= 7:
                kind, channel, size = struct.unpack(">BHI", self.buf[:7])
                if len(self.buf) >= 8 + size:
                    payload, end = self.buf[7:7 + size], self.buf[7 + size]
                    self.buf = self.buf[8 + size:]
                    if end != FRAME_END:
                        fail(f"raw client: frame-end {end:#x}")
                    return kind, channel, payload
            data = self.sock.recv(65536)
            if not data:
                fail("raw client: the broker closed the connection")
            self.buf += data

    def expect(self, channel, class_id, method_id, what):
        """Reads frames until method class_id.method_id on channel; returns its arguments.
        A connection.close or channel.close from the broker instead is a failure."""
        while True:
            kind, ch, payload = self.read_frame()
            if kind != FRAME_METHOD:
                continue
            cls, mid = struct.unpack(">HH", payload[:4])
            if (ch, cls, mid) == (channel, class_id, method_id):
                return payload[4:]
            if (cls, mid) in ((10, 50), (20, 40)):  # connection.close, channel.close
                code = struct.unpack(">H", payload[4:6])[0]
                text = payload[7:7 + payload[6]].decode(errors="replace")
                fail(f"raw client: waiting for {what}, the broker closed: {code} {text}")

    def publish(self, routing_key, properties, body, exchange=""):
        """basic.publish, a content header with the property flags and property bytes
        given, and the body (in frame_max-sized frames; one here)."""
        flags, props = properties
        self.method(1, 60, 40, struct.pack(">H", 0) + _shortstr(exchange) + _shortstr(routing_key)
                    + b"\x00")
        self.frame(FRAME_HEADER, 1, struct.pack(">HHQH", 60, 0, len(body), flags) + props)
        room = self.frame_max - 8
        for i in range(0, len(body), room):
            self.frame(FRAME_BODY, 1, body[i:i + room])

    def close(self):
        # channel.close then connection.close, 200 each; each ok means everything
        # before it (the publish) was accepted.
        self.method(1, 20, 40, struct.pack(">H", 200) + _shortstr("Normal shutdown") + struct.pack(">HH", 0, 0))
        self.expect(1, 20, 41, "channel.close-ok")
        self.method(0, 10, 50, struct.pack(">H", 200) + _shortstr("Normal shutdown") + struct.pack(">HH", 0, 0))
        self.expect(0, 10, 51, "connection.close-ok")
        self.sock.close()


def all_types_properties():
    """(property flags, property bytes) for content-type, headers (ALL_TYPES_TABLE), message-id."""
    flags = 0x8000 | 0x2000 | 0x0080  # content-type, headers, message-id (AMQP 0-9-1 §4.2.6.1 order)
    props = _shortstr("text/plain") + encode_table(ALL_TYPES_TABLE) + _shortstr(ALL_TYPES_MESSAGE_ID)
    return flags, props


class HeaderFrameRecorder:
    """Keeps the payload of every content-header frame pika decodes, so the consumer
    can compare the bytes RabbitMQ delivered with the bytes sent (pika's own table
    decoder reads 'b' as unsigned, 'B' as signed and truncates floats to ints)."""

    def __init__(self):
        self.payloads = []
        self._decode = pika.frame.decode_frame

    def __enter__(self):
        def decode(data_in):
            consumed, frame = self._decode(data_in)
            if isinstance(frame, pika.frame.Header):
                self.payloads.append(bytes(data_in[7:consumed - 1]))
            return consumed, frame
        pika.frame.decode_frame = decode
        return self

    def __exit__(self, *exc):
        pika.frame.decode_frame = self._decode


def properties(port):
    with HeaderFrameRecorder() as recorder:
        properties_with(port, recorder)


def properties_with(port, recorder):
    queue = "pd.properties"
    # frame_max 4096 (pika's minimum) on both connections: the 20 kB body
    # goes as 5 body frames from the publisher and again to the consumer.
    cons = connect(port, "pd-properties-consumer", frame_max=4096)
    pub = connect(port, "pd-properties-publisher", frame_max=4096)
    cch = cons.channel()
    pch = pub.channel()
    cch.queue_declare(queue, exclusive=True)
    got = []

    def on_message(ch, method, props, body):
        got.append((props, body))
        ch.basic_ack(method.delivery_tag)

    tag = cch.basic_consume(queue, on_message, consumer_tag="pd-props-consumer")
    say(f"consumer {tag} on {queue}, frame_max 4096")

    full = pika.BasicProperties(
        content_type="application/json",
        content_encoding="utf-8",
        headers=HEADERS,
        delivery_mode=2,  # persistent
        priority=7,
        correlation_id="corr-0042",
        reply_to="pd.replies",
        expiration="600000",  # ms, a string in AMQP 0-9-1
        message_id="msg-0001",
        timestamp=TIMESTAMP,
        type="order.created",
        user_id=USER,  # must be the login user, or the broker refuses it
        app_id="proto-dissect-samples",
        cluster_id="pd-cluster",
    )
    body1 = b'{"order": 1001, "items": ["widget", "gadget"], "total": 12.5}'
    pch.basic_publish("", queue, body1, full)
    say("published: all 14 basic properties, headers with every pika value type")

    pch.basic_publish("", queue, b"", pika.BasicProperties(content_type="text/plain",
                                                           message_id="msg-0002-empty"))
    say("published: empty body")

    body3 = large_body()
    pch.basic_publish("", queue, body3,
                      pika.BasicProperties(content_type="text/plain", message_id="msg-0003-large",
                                           delivery_mode=1))
    say(f"published: {len(body3)}-byte body")

    # The types pika cannot write: a hand-encoded content header from a third
    # connection (RawAMQP), delivered to the same consumer.
    raw = RawAMQP(port, "pd-properties-raw")
    sent_flags, sent_props = all_types_properties()
    raw.publish(queue, (sent_flags, sent_props), ALL_TYPES_BODY)
    raw.close()
    say(f"published (raw socket): headers with all {len(ALL_TYPES_TABLE)} field types "
        f"{' '.join(l for _, l, _ in ALL_TYPES_TABLE)}")

    drain(cons, lambda: len(got) >= 4, "4 deliveries")
    (p1, b1), (p2, b2), (p3, b3), (p4, b4) = got
    expect(b1 == body1, "first body differs")
    expect(p1.user_id == USER and p1.cluster_id == "pd-cluster" and p1.timestamp == TIMESTAMP
           and p1.priority == 7 and p1.expiration == "600000", f"properties not delivered: {p1}")
    h = p1.headers
    expect(h["bytes"] == b"\x00\x01\xfe\xff" and h["void"] is None and h["nested"]["inner"]["level"] == 2
           and h["int-64-negative"] == -(2**40) and h["decimal"] == decimal.Decimal("3.14159"),
           f"headers not delivered intact: {h}")
    expect(b2 == b"" and p2.message_id == "msg-0002-empty", "empty body")
    expect(b3 == body3 and p3.message_id == "msg-0003-large", "large body")
    expect(b4 == ALL_TYPES_BODY and p4.message_id == ALL_TYPES_MESSAGE_ID, "hand-encoded message")
    delivered = recorder.payloads[3]
    # class, weight, body size, then the flags and properties as sent.
    expect(struct.unpack(">HHQ", delivered[:12]) == (60, 0, len(ALL_TYPES_BODY)), "hand-encoded header")
    got_flags, got_props = struct.unpack(">H", delivered[12:14])[0], delivered[14:]
    if (got_flags, got_props) != (sent_flags, sent_props):
        say(f"  sent      {sent_flags:04x} {sent_props.hex()}")
        say(f"  delivered {got_flags:04x} {got_props.hex()}")
        fail("RabbitMQ changed the hand-encoded content header")
    say("consumer received the four messages intact; the hand-encoded header byte for byte")

    cch.basic_cancel(tag)
    pub.close()
    cons.close()
    say("closed")


# ------------------------------------------------------------------ consume --

def consume(port):
    queue = "pd.work"
    # heartbeat 2 s: negotiated in tune-ok; idle periods then show heartbeat
    # frames both ways.
    conn = connect(port, "pd-consume-ack", heartbeat=2)
    cch = conn.channel()   # consumer
    pch = conn.channel()   # publisher, confirm mode
    cch.queue_declare(queue, exclusive=True)

    pch.confirm_delivery()
    say("confirm.select on the publisher channel")
    for i in range(1, 7):
        pch.basic_publish("", queue, f"job-{i}".encode(),
                          pika.BasicProperties(delivery_mode=1, message_id=f"job-{i}"))
    say("published job-1..job-6, each confirmed by a basic.ack from the broker")

    # Mandatory publish that no queue takes: basic.return (312 NO_ROUTE),
    # then the broker's confirm (basic.ack).
    try:
        pch.basic_publish("", "pd.nowhere", b"nobody wants this",
                          pika.BasicProperties(message_id="unroutable"), mandatory=True)
        fail("mandatory publish to pd.nowhere was not returned")
    except UnroutableError as e:
        ret = e.messages[0].method
        expect(ret.reply_code == 312, f"basic.return {ret}")
        say(f"basic.return {ret.reply_code} {ret.reply_text} for routing key {ret.routing_key}")

    cch.basic_qos(prefetch_count=2)
    actions = []
    state = {"held": None, "done": False}

    def on_message(ch, method, props, body):
        job = body.decode()
        tag = method.delivery_tag
        if job == "job-2":
            ch.basic_nack(tag, multiple=False, requeue=False)
            actions.append(f"{job}: nack (requeue false)")
        elif job == "job-3":
            ch.basic_reject(tag, requeue=False)
            actions.append(f"{job}: reject (requeue false)")
        elif job == "job-4" and not method.redelivered:
            ch.basic_reject(tag, requeue=True)
            actions.append(f"{job}: reject (requeue true)")
        elif job == "job-5":
            state["held"] = tag  # acked together with job-6
            actions.append(f"{job}: held")
        elif job == "job-6":
            expect(state["held"] is not None, "job-6 before job-5")
            ch.basic_ack(tag, multiple=True)
            actions.append(f"{job}: ack multiple (covers job-5)")
        else:
            ch.basic_ack(tag)
            actions.append(f"{job}: ack{' (redelivered)' if method.redelivered else ''}")
        state["done"] = (any(a.startswith("job-6") for a in actions)
                         and any(a == "job-4: ack (redelivered)" for a in actions))

    tag = cch.basic_consume(queue, on_message, consumer_tag="pd-worker")
    say(f"basic.qos prefetch 2, basic.consume {tag}")
    drain(conn, lambda: state["done"], "the six jobs (and job-4's redelivery)")
    for a in actions:
        say("  " + a)
    cch.basic_cancel(tag)
    say("basic.cancel")

    # Transactions on a third channel.
    tch = conn.channel()
    tch.tx_select()
    tch.basic_publish("", queue, b"tx-committed", pika.BasicProperties(message_id="tx-1"))
    tch.tx_commit()
    tch.basic_publish("", queue, b"tx-rolled-back", pika.BasicProperties(message_id="tx-2"))
    tch.tx_rollback()
    say("tx.select, publish, tx.commit; publish, tx.rollback")
    get_one(cch, queue, b"tx-committed")
    get_empty(cch, queue)
    say("basic.get: the committed message, then get-empty (the rolled-back one never arrived)")

    # Idle, so both sides send heartbeat frames (pika's sleep keeps reading).
    conn.sleep(4.5)
    say("idle 4.5 s with heartbeat 2 s")
    conn.close()
    say("closed")


# ------------------------------------------------------------------ routing --

def routing(port):
    """The RabbitMQ tutorials' topologies (work queue, fanout logs, direct logs, topic logs with
    *.orange.*, *.*.rabbit and lazy.#), a headers exchange (x-match all and any), an alternate
    exchange, unroutable publishes (mandatory and not), publisher confirms with acks and a nack
    (a full queue with x-overflow reject-publish), and a prefetch-1 consumer that nacks one
    message with requeue and gets it redelivered. The topology is declared on one connection and
    used by others; every queue is drained with basic.get, so the capture shows where RabbitMQ
    put each message."""
    admin = connect(port, "pd-routing-admin")
    a = admin.channel()
    a.queue_declare("pd.task_queue", durable=True)
    a.exchange_declare("pd.logs", exchange_type="fanout")
    a.exchange_declare("pd.direct_logs", exchange_type="direct")
    a.exchange_declare("pd.topic_logs", exchange_type="topic")
    a.exchange_declare("pd.headers", exchange_type="headers")
    a.exchange_declare("pd.ae", exchange_type="fanout")
    a.exchange_declare("pd.main", exchange_type="direct", arguments={"alternate-exchange": "pd.ae"})
    bindings = [
        ("pd.logs.a", "pd.logs", "", None), ("pd.logs.b", "pd.logs", "", None),
        ("pd.errors", "pd.direct_logs", "error", None),
        ("pd.all", "pd.direct_logs", "info", None), ("pd.all", "pd.direct_logs", "warning", None),
        ("pd.all", "pd.direct_logs", "error", None),
        ("pd.orange", "pd.topic_logs", "*.orange.*", None),
        ("pd.rabbit", "pd.topic_logs", "*.*.rabbit", None), ("pd.rabbit", "pd.topic_logs", "lazy.#", None),
        ("pd.pdf", "pd.headers", "", {"x-match": "all", "format": "pdf", "type": "report"}),
        ("pd.urgent", "pd.headers", "", {"x-match": "any", "priority": "urgent", "dept": "legal"}),
        # Header values compare as Erlang's == compares them, not by type: the integer
        # 1700000000 (pika: signed 32-bit) equals the timestamp 1700000000; the integer 1 does not
        # equal the boolean true.
        ("pd.when", "pd.headers", "", {"x-match": "all", "when": 1700000000}),
        ("pd.flag", "pd.headers", "", {"x-match": "any", "flag": 1}),
        # A nested table: compared with the message's as a whole (its entries' order and types).
        ("pd.nested", "pd.headers", "", {"x-match": "all", "meta": {"a": 1, "b": "x"}}),
        ("pd.unrouted", "pd.ae", "", None),
        ("pd.main.q", "pd.main", "known", None),
    ]
    queues = sorted({q for q, _, _, _ in bindings})
    for q in queues:
        a.queue_declare(q)
    for q, x, key, args in bindings:
        a.queue_bind(q, x, routing_key=key, arguments=args)
    a.queue_declare("pd.limited", arguments={"x-max-length": 1, "x-overflow": "reject-publish"})
    say(f"declared the topology on connection pd-routing-admin: {len(queues) + 2} queues, {len(bindings)} bindings")

    prod = connect(port, "pd-routing-producer")
    p = prod.channel()
    p.confirm_delivery()
    routed = []

    def pub(exchange, key, body, headers=None, mandatory=False):
        props = pika.BasicProperties(content_type="text/plain", headers=headers)
        p.basic_publish(exchange, key, body, props, mandatory=mandatory)

    for i in range(1, 4):
        pub("", "pd.task_queue", f"task {i}".encode())
    pub("pd.logs", "", b"a log line for every listener")
    for severity in ["error", "info", "warning", "debug"]:
        pub("pd.direct_logs", severity, f"{severity}: something happened".encode())
    for key in ["quick.orange.rabbit", "lazy.orange.elephant", "quick.orange.fox", "lazy.brown.fox",
                "lazy.pink.rabbit", "quick.brown.fox", "orange", "quick.orange.male.rabbit",
                "lazy.orange.male.rabbit"]:
        pub("pd.topic_logs", key, key.encode())
    pub("pd.headers", "", b"a pdf report", headers={"format": "pdf", "type": "report"})
    pub("pd.headers", "", b"urgent", headers={"priority": "urgent"})
    pub("pd.headers", "", b"a zip for nobody", headers={"format": "zip"})
    pub("pd.headers", "", b"a timestamp", headers={"when": datetime.datetime.fromtimestamp(1700000000, datetime.timezone.utc)})
    pub("pd.headers", "", b"flag true, for nobody", headers={"flag": True})
    pub("pd.headers", "", b"the same nested table", headers={"meta": {"a": 1, "b": "x"}})
    pub("pd.headers", "", b"the nested table reordered", headers={"meta": {"b": "x", "a": 1}})
    pub("pd.headers", "", b"another nested value", headers={"meta": {"a": 2, "b": "x"}})
    pub("pd.main", "known", b"bound in pd.main")
    pub("pd.main", "other", b"to the alternate exchange")
    try:
        pub("pd.direct_logs", "nobody", b"mandatory, unroutable", mandatory=True)
        fail("a mandatory unroutable publish was not returned")
    except UnroutableError:
        say("the mandatory unroutable publish came back (basic.return 312 NO_ROUTE)")
    pub("", "pd.limited", b"fits")
    try:
        pub("", "pd.limited", b"over the limit")
        fail("a publish to a full reject-publish queue was confirmed")
    except pika.exceptions.NackError:
        say("the publish to the full queue was nacked")
    say("published on connection pd-routing-producer")

    cons = connect(port, "pd-routing-consumer")
    c = cons.channel()
    c.basic_qos(prefetch_count=1)
    seen = []

    def on_message(ch, method, _props, body):
        seen.append((body, method.redelivered))
        # The first message is given back once, and comes again redelivered.
        if body == b"task 1" and not method.redelivered:
            ch.basic_nack(method.delivery_tag, requeue=True)
        else:
            time.sleep(0.05)  # a slow consumer: prefetch 1 holds the rest back
            ch.basic_ack(method.delivery_tag)

    tag = c.basic_consume("pd.task_queue", on_message, consumer_tag="pd-worker")
    drain(cons, lambda: sum(1 for b, _ in seen if b.startswith(b"task")) >= 4, "the worker's tasks")
    expect(any(r for _, r in seen), "no redelivery")
    c.basic_cancel(tag)
    say(f"the worker consumed {len(seen)} deliveries, one redelivered")

    # Where RabbitMQ put each message: every queue drained.
    counts = {}
    for q in queues + ["pd.limited"]:
        n = 0
        while a.basic_get(q, auto_ack=True)[0] is not None:
            n += 1
        counts[q] = n
    say("delivered by basic.get: " + ", ".join(f"{q} {n}" for q, n in counts.items()))
    expect(counts == {"pd.all": 3, "pd.errors": 1, "pd.flag": 0, "pd.logs.a": 1, "pd.logs.b": 1,
                      "pd.main.q": 1, "pd.nested": 1, "pd.orange": 3, "pd.pdf": 1, "pd.rabbit": 5, "pd.unrouted": 1, "pd.urgent": 1,
                      "pd.when": 1, "pd.limited": 1},
           f"RabbitMQ routed otherwise than the tutorials say: {counts}")

    for q in queues + ["pd.limited", "pd.task_queue"]:
        a.queue_delete(q)
    for x in ["pd.logs", "pd.direct_logs", "pd.topic_logs", "pd.headers", "pd.main", "pd.ae"]:
        a.exchange_delete(x)
    for conn in (cons, prod, admin):
        conn.close()
    say("deleted the topology")


# ------------------------------------------------------------------- errors --

def errors(port):
    # Refused logins, each on its own connection, before the main one.
    # pika announces the authentication_failure_close capability, so RabbitMQ
    # answers the bad password with connection.close 403 ACCESS_REFUSED ...
    try:
        bad = pika.BlockingConnection(params(port, "pd-bad-login", password="not-the-password"))
        bad.close()
        fail("login with a wrong password was accepted")
    except (ProbableAuthenticationError, AuthenticationError, ConnectionClosedByBroker) as e:
        say(f"bad password refused: {type(e).__name__}: {e}")
    # ... and without that capability, RabbitMQ just closes the socket after
    # connection.start-ok (no connection.close).
    nocap = {"capabilities": {"basic.nack": True, "connection.blocked": True,
                              "consumer_cancel_notify": True, "publisher_confirms": True}}
    try:
        bad = pika.BlockingConnection(params(port, "pd-bad-login-nocap", password="not-the-password",
                                             client_properties=nocap))
        bad.close()
        fail("login with a wrong password was accepted")
    except (ProbableAuthenticationError, AuthenticationError, ConnectionClosedByBroker) as e:
        say(f"bad password, no authentication_failure_close: {type(e).__name__}: {e}")

    conn = connect(port, "pd-errors")
    ch1 = conn.channel()
    ch1.queue_declare("orders", durable=True)
    say(f"channel {ch1.channel_number}: queue.declare orders durable=true")

    # (a) 406: same name, other durability.
    ch2 = conn.channel(channel_number=2)  # a fresh channel for each error
    try:
        ch2.queue_declare("orders", durable=False)
        fail("redeclaring orders with durable=false succeeded")
    except ChannelClosedByBroker as e:
        expect(e.reply_code == 406, f"expected 406, got {e}")
        say(f"channel {ch2.channel_number}: channel.close {e.reply_code} {e.reply_text}")

    # (b) 404: passive declare of a queue that does not exist ...
    ch3 = conn.channel(channel_number=3)  # a fresh channel for each error
    try:
        ch3.queue_declare("pd.missing", passive=True)
        fail("passive declare of pd.missing succeeded")
    except ChannelClosedByBroker as e:
        expect(e.reply_code == 404, f"expected 404, got {e}")
        say(f"channel {ch3.channel_number}: channel.close {e.reply_code} {e.reply_text}")

    # ... and basic.consume on one.
    ch4 = conn.channel(channel_number=4)  # a fresh channel for each error
    try:
        ch4.basic_consume("pd.missing-too", lambda *a: None)
        fail("basic.consume on pd.missing-too succeeded")
    except ChannelClosedByBroker as e:
        expect(e.reply_code == 404, f"expected 404, got {e}")
        say(f"channel {ch4.channel_number}: channel.close {e.reply_code} {e.reply_text}")

    # The connection survived: clean up on channel 1, then close cleanly.
    expect(ch1.is_open and conn.is_open, "connection or channel 1 did not survive")
    n = ch1.queue_delete("orders").method.message_count
    say(f"channel {ch1.channel_number}: queue.delete orders ({n} messages)")
    ch1.close()
    conn.close()
    say("closed")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", choices=["exchanges", "properties", "consume", "errors", "routing"])
    ap.add_argument("--port", type=int, default=5672)
    args = ap.parse_args()
    globals()[args.scenario](args.port)


if __name__ == "__main__":
    main()
