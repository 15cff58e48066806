#!/usr/bin/env python3
"""Drives a real mosquitto and a real RabbitMQ on 127.0.0.1 with several concurrent clients,
for the benchmark capture (scripts/make-bench-capture.sh). Every loop is bounded in count and time.

    bench_load.py mqtt  PORT PUBLISHERS MESSAGES_EACH
    bench_load.py amqp  PORT PUBLISHERS MESSAGES_EACH

mqtt: one subscriber on bench/# (QoS 2 granted) and PUBLISHERS publishers, each sending
MESSAGES_EACH PUBLISHes with QoS 0, 1 and 2 in turn, to topics bench/<client>/<n % 16>, with
payloads of 8 bytes to 4 KiB (mostly small, some large), some of them retained.

amqp: per publisher one durable queue bound to a direct exchange; publishers publish
MESSAGES_EACH messages with properties and a headers table (publisher confirms on half of them);
one consumer per queue consumes and acks every message (every 50th is nacked and requeued once).
"""
import multiprocessing
import random
import sys
import threading
import time

DEADLINE = 600  # seconds: no client runs longer than this


def sizes(rng):
    r = rng.random()
    if r < 0.70:
        return rng.randint(8, 200)
    if r < 0.95:
        return rng.randint(200, 1500)
    return rng.randint(1500, 4096)


# ------------------------------------------------------------------------------------------ MQTT

def mqtt_publisher(port, index, count):
    import paho.mqtt.client as mqtt
    rng = random.Random(index)
    cid = f"bench-pub-{index}"
    version = [mqtt.MQTTv311, mqtt.MQTTv5, mqtt.MQTTv31][index % 3]
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=cid, protocol=version)
    c.max_inflight_messages_set(64)
    c.max_queued_messages_set(0)
    c.connect("127.0.0.1", port, keepalive=30)
    c.loop_start()
    started = time.time()
    infos = []
    for n in range(count):
        if time.time() - started > DEADLINE:
            break
        qos = n % 3
        payload = bytes(rng.getrandbits(8) for _ in range(8)) if n % 17 == 0 else \
            (f"{cid} message {n} " * 300)[: sizes(rng)].encode()
        info = c.publish(f"bench/{cid}/{n % 16}", payload, qos=qos, retain=(n % 97 == 0))
        if qos:
            infos.append(info)
        if len(infos) >= 256:
            for i in infos:
                i.wait_for_publish(timeout=30)
            infos = []
    for i in infos:
        i.wait_for_publish(timeout=30)
    c.disconnect()
    c.loop_stop()


def mqtt_main(port, publishers, each):
    import paho.mqtt.client as mqtt
    expected = publishers * each
    got = [0]
    done = threading.Event()

    def on_message(client, userdata, msg):
        got[0] += 1
        if got[0] >= expected:
            done.set()

    sub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-sub", protocol=mqtt.MQTTv5)
    sub.on_message = on_message
    sub.max_inflight_messages_set(64)
    subscribed = threading.Event()
    sub.on_subscribe = lambda *a: subscribed.set()
    sub.connect("127.0.0.1", port, keepalive=30)
    sub.loop_start()
    sub.subscribe("bench/#", qos=2)
    if not subscribed.wait(10):
        sys.exit("bench-sub: no SUBACK")
    procs = [multiprocessing.Process(target=mqtt_publisher, args=(port, i, each)) for i in range(publishers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(DEADLINE)
    done.wait(60)
    sub.disconnect()
    sub.loop_stop()
    print(f"mqtt: {publishers} publishers x {each} = {expected} PUBLISHes, subscriber got {got[0]}")


# ------------------------------------------------------------------------------------------ AMQP

def amqp_params(port, name):
    import pika
    return pika.ConnectionParameters(host="127.0.0.1", port=port, heartbeat=30,
                                     client_properties={"connection_name": name})


def amqp_publisher(port, index, count):
    import pika
    rng = random.Random(1000 + index)
    conn = pika.BlockingConnection(amqp_params(port, f"bench-amqp-pub-{index}"))
    ch = conn.channel()
    ch.exchange_declare("bench.direct", "direct", durable=False)
    queue = f"bench.q{index}"
    ch.queue_declare(queue, durable=False)
    ch.queue_bind(queue, "bench.direct", routing_key=queue)
    confirm = index % 2 == 0
    if confirm:
        ch.confirm_delivery()
    started = time.time()
    for n in range(count):
        if time.time() - started > DEADLINE:
            break
        body = (f"order {n} from publisher {index}; " * 200)[: sizes(rng)].encode()
        props = pika.BasicProperties(content_type="text/plain", delivery_mode=1 + n % 2, priority=n % 10,
                                     correlation_id=f"c-{index}-{n}", message_id=f"m-{n}", timestamp=int(time.time()),
                                     headers={"seq": n, "publisher": index, "big": n % 5 == 0, "kind": ["a", "b", "c"][n % 3]})
        ch.basic_publish("bench.direct", queue, body, props)
    conn.close()


def amqp_consumer(port, index, count, ready):
    import pika
    conn = pika.BlockingConnection(amqp_params(port, f"bench-amqp-con-{index}"))
    ch = conn.channel()
    queue = f"bench.q{index}"
    ch.exchange_declare("bench.direct", "direct", durable=False)
    ch.queue_declare(queue, durable=False)
    ch.queue_bind(queue, "bench.direct", routing_key=queue)
    ch.basic_qos(prefetch_count=200)
    ready.set()  # the queue is bound: publishers may start
    got = 0
    nacked = set()
    started = time.time()
    # Stops after `count` acks, or when nothing has come for 15 s (a publisher died), or at DEADLINE.
    for method, props, body in ch.consume(queue, inactivity_timeout=15):
        if method is None or time.time() - started > DEADLINE:
            break
        seq = (props.headers or {}).get("seq", 0)
        if seq % 50 == 0 and seq not in nacked:
            nacked.add(seq)
            ch.basic_nack(method.delivery_tag, requeue=True)
            continue
        ch.basic_ack(method.delivery_tag)
        got += 1
        if got >= count:
            break
    ch.cancel()
    ch.queue_delete(queue)
    conn.close()


def amqp_main(port, publishers, each):
    readies = [multiprocessing.Event() for _ in range(publishers)]
    consumers = [multiprocessing.Process(target=amqp_consumer, args=(port, i, each, readies[i])) for i in range(publishers)]
    for p in consumers:
        p.start()
    for r in readies:
        r.wait(30)
    pubs = [multiprocessing.Process(target=amqp_publisher, args=(port, i, each)) for i in range(publishers)]
    for p in pubs:
        p.start()
    for p in pubs + consumers:
        p.join(DEADLINE)
        if p.is_alive():
            p.terminate()
    print(f"amqp: {publishers} publishers x {each} = {publishers * each} publishes sent")


if __name__ == "__main__":
    kind, port, publishers, each = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    {"mqtt": mqtt_main, "amqp": amqp_main}[kind](port, publishers, each)
