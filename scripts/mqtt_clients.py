#!/usr/bin/env python3
"""MQTT client scenarios driven by paho-mqtt 2.x, for scripts/make-mqtt-samples.sh.

Usage:
  mqtt_clients.py mqtt5 --port 1883      MQTT 5.0 properties scenario (two clients)
  mqtt_clients.py blob SIZE OUTFILE      write SIZE deterministic non-UTF-8 bytes

Every wait is bounded; any timeout or unexpected result exits non-zero.
Only 127.0.0.1 is ever contacted.
"""

import argparse
import sys
import threading
import time

HOST = "127.0.0.1"
WAIT = 10.0  # seconds for any single step


def fail(msg):
    print(f"mqtt_clients: {msg}", file=sys.stderr)
    sys.exit(1)


# --------------------------------------------------------------------- blob --

def blob(size, path):
    """Deterministic pseudo-random bytes (a 32-bit LCG's high bytes) behind a
    short header with 0xFF/0xFE, so the payload is never valid UTF-8."""
    head = b"PDBLOB\xff\xfe" + size.to_bytes(4, "big")
    out = bytearray(head[:size])
    x = 0x2545F491
    for _ in range(size - len(out)):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
        out.append(x >> 24)
    try:
        bytes(out).decode("utf-8")
        fail("blob unexpectedly valid UTF-8")
    except UnicodeDecodeError:
        pass
    with open(path, "wb") as f:
        f.write(out)


# -------------------------------------------------------------------- mqtt5 --

def mqtt5(port):
    import paho.mqtt.client as mqtt
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties
    from paho.mqtt.reasoncodes import ReasonCode
    from paho.mqtt.subscribeoptions import SubscribeOptions

    def props(kind, **kv):
        p = Properties(kind)
        for k, v in kv.items():
            setattr(p, k, v)
        return p

    class Peer:
        """One paho client plus events its callbacks set."""

        def __init__(self, client_id):
            self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                                 protocol=mqtt.MQTTv5)
            self.connected = threading.Event()
            self.subacked = threading.Event()
            self.unsubacked = threading.Event()
            self.closed = threading.Event()
            self.cond = threading.Condition()
            self.messages = []
            self.suback_codes = None
            self.unsuback_codes = None
            self.c.on_connect = self._on_connect
            self.c.on_subscribe = self._on_subscribe
            self.c.on_unsubscribe = self._on_unsubscribe
            self.c.on_message = self._on_message
            self.c.on_disconnect = self._on_disconnect

        def _on_connect(self, _c, _u, _flags, rc, _props):
            if rc.is_failure:
                fail(f"{self.c._client_id!r} refused: {rc}")
            self.connected.set()

        def _on_subscribe(self, _c, _u, _mid, codes, _props):
            self.suback_codes = [int(c.value) for c in codes]
            self.subacked.set()

        def _on_unsubscribe(self, _c, _u, _mid, codes, _props):
            self.unsuback_codes = [int(c.value) for c in codes]
            self.unsubacked.set()

        def _on_message(self, _c, _u, msg):
            with self.cond:
                self.messages.append(msg)
                self.cond.notify_all()

        def _on_disconnect(self, _c, _u, _flags, _rc, _props):
            self.closed.set()

        def wait(self, event, what):
            if not event.wait(WAIT):
                fail(f"timed out waiting for {what}")

        def wait_messages(self, n, what):
            deadline = time.monotonic() + WAIT
            with self.cond:
                while len(self.messages) < n:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        fail(f"timed out waiting for {what}: got {len(self.messages)} of {n}")
                    self.cond.wait(left)

    # -- publisher: CONNECT properties and a will with will properties ------
    pub = Peer("pd5-publisher")
    pub.c.will_set(
        "wills/pd5-publisher", payload=b"publisher pd5-publisher went away", qos=1, retain=False,
        properties=props(PacketTypes.WILLMESSAGE,
                         WillDelayInterval=2,
                         ContentType="text/plain",
                         PayloadFormatIndicator=1,
                         MessageExpiryInterval=600,
                         ResponseTopic="wills/ack",
                         UserProperty=[("reason", "demo-will")]))
    pub.c.connect(HOST, port, keepalive=45, clean_start=True,
                  properties=props(PacketTypes.CONNECT,
                                   SessionExpiryInterval=120,
                                   ReceiveMaximum=10,
                                   TopicAliasMaximum=5,
                                   MaximumPacketSize=1048576,
                                   RequestProblemInformation=1,
                                   UserProperty=[("app", "proto-dissect"), ("role", "publisher")]))
    pub.c.loop_start()
    pub.wait(pub.connected, "publisher CONNACK")

    # A retained message that the subscriber gets on subscribing.
    info = pub.c.publish("status/door", b"closed", qos=1, retain=True,
                         properties=props(PacketTypes.PUBLISH, MessageExpiryInterval=3600,
                                          PayloadFormatIndicator=1, ContentType="text/plain"))
    info.wait_for_publish(WAIT)

    # -- subscriber: CONNECT properties, SUBSCRIBE options and an identifier --
    sub = Peer("pd5-subscriber")
    sub.c.connect(HOST, port, keepalive=30, clean_start=True,
                  properties=props(PacketTypes.CONNECT,
                                   SessionExpiryInterval=300,
                                   ReceiveMaximum=20,
                                   TopicAliasMaximum=10,
                                   RequestResponseInformation=1,
                                   UserProperty=[("app", "proto-dissect"), ("role", "subscriber")]))
    sub.c.loop_start()
    sub.wait(sub.connected, "subscriber CONNACK")
    sub.c.subscribe(
        [("telemetry/#", SubscribeOptions(qos=1, noLocal=True, retainAsPublished=True,
                                          retainHandling=SubscribeOptions.RETAIN_SEND_ON_SUBSCRIBE)),
         ("status/+", SubscribeOptions(qos=2, noLocal=False, retainAsPublished=True,
                                       retainHandling=SubscribeOptions.RETAIN_SEND_IF_NEW_SUB)),
         ("wills/#", SubscribeOptions(qos=1, noLocal=False, retainAsPublished=False,
                                      retainHandling=SubscribeOptions.RETAIN_DO_NOT_SEND))],
        properties=props(PacketTypes.SUBSCRIBE, SubscriptionIdentifier=7,
                         UserProperty=[("purpose", "options-demo")]))
    sub.wait(sub.subacked, "SUBACK")
    if sub.suback_codes != [1, 2, 1]:
        fail(f"unexpected SUBACK codes {sub.suback_codes}")
    sub.wait_messages(1, "retained status/door")

    # -- PUBLISH properties and topic aliases --------------------------------
    full = props(PacketTypes.PUBLISH,
                 PayloadFormatIndicator=1,
                 MessageExpiryInterval=300,
                 TopicAlias=1,
                 ContentType="application/json",
                 ResponseTopic="replies/pd5-publisher",
                 CorrelationData=b"\x00\x01corr-42\xff",
                 UserProperty=[("unit", "celsius"), ("sensor", "kitchen"), ("unit", "C")])
    # First use of alias 1 carries the topic name ...
    pub.c.publish("telemetry/kitchen/temp", b'{"t":21.5}', qos=1, properties=full).wait_for_publish(WAIT)
    # ... later ones an empty topic name and only the alias.
    pub.c.publish("", b'{"t":21.7}', qos=0,
                  properties=props(PacketTypes.PUBLISH, TopicAlias=1, ContentType="application/json"))
    pub.c.publish("", b'{"t":21.9}', qos=2,
                  properties=props(PacketTypes.PUBLISH, TopicAlias=1, PayloadFormatIndicator=1,
                                   UserProperty=[("seq", "3")])).wait_for_publish(WAIT)
    # A second alias, and a binary (format indicator 0) payload.
    pub.c.publish("telemetry/garage/raw", b"\x00\x10\x20\xfe\xff", qos=1,
                  properties=props(PacketTypes.PUBLISH, TopicAlias=2, PayloadFormatIndicator=0,
                                   CorrelationData=b"\xca\xfe")).wait_for_publish(WAIT)
    # Nobody subscribed: mosquitto answers PUBACK reason 0x10 (No matching subscribers).
    pub.c.publish("nobody/listens", b"void", qos=1).wait_for_publish(WAIT)
    # No Local: the subscriber's own message on telemetry/# is not sent back.
    sub.c.publish("telemetry/subscriber/echo", b"not echoed", qos=1).wait_for_publish(WAIT)
    sub.wait_messages(5, "telemetry messages")

    # -- UNSUBSCRIBE (one filter never subscribed: UNSUBACK 0x11) -------------
    sub.c.unsubscribe(["status/+", "never/subscribed"],
                      properties=props(PacketTypes.UNSUBSCRIBE, UserProperty=[("why", "demo")]))
    sub.wait(sub.unsubacked, "UNSUBACK")
    if sub.unsuback_codes != [0x00, 0x11]:
        fail(f"unexpected UNSUBACK codes {sub.unsuback_codes}")

    # -- DISCONNECT with reason code 0x04 (Disconnect with Will Message) -----
    # mosquitto 2.0 then publishes the will once its will delay (2 s) has
    # passed, even though session expiry 0 in DISCONNECT ends the session.
    pub.c.disconnect(reasoncode=ReasonCode(PacketTypes.DISCONNECT, identifier=0x04),
                     properties=props(PacketTypes.DISCONNECT, SessionExpiryInterval=0,
                                      ReasonString="leaving, send my will"))
    pub.wait(pub.closed, "publisher close")
    pub.c.loop_stop()
    sub.wait_messages(6, "will message")

    # -- subscriber's normal DISCONNECT (reason 0, drops its session) ---------
    sub.c.disconnect(reasoncode=ReasonCode(PacketTypes.DISCONNECT, identifier=0x00),
                     properties=props(PacketTypes.DISCONNECT, SessionExpiryInterval=0,
                                      ReasonString="done"))
    sub.wait(sub.closed, "subscriber close")
    sub.c.loop_stop()

    for m in sub.messages:
        p = m.properties
        print(f"received {m.topic} qos={m.qos} retain={int(m.retain)} "
              f"sub-id={getattr(p, 'SubscriptionIdentifier', None)} "
              f"payload={m.payload[:24]!r}")
    if sub.messages[-1].topic != "wills/pd5-publisher":
        fail("last message was not the will")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sp = ap.add_subparsers(dest="cmd", required=True)
    a = sp.add_parser("mqtt5")
    a.add_argument("--port", type=int, default=1883)
    b = sp.add_parser("blob")
    b.add_argument("size", type=int)
    b.add_argument("out")
    args = ap.parse_args()
    if args.cmd == "mqtt5":
        mqtt5(args.port)
    else:
        blob(args.size, args.out)


if __name__ == "__main__":
    main()
