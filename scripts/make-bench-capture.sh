#!/usr/bin/env bash
# Makes the benchmark capture: real mosquitto and RabbitMQ on 127.0.0.1, several concurrent clients
# (scripts/bench_load.py), captured on lo with tcpdump. Not committed (it is large); regenerate with
#
#   scripts/make-bench-capture.sh [OUT]        default OUT: .build-bench/bench.pcap
#
# Environment: MQTT_PUBLISHERS (6) x MQTT_EACH (21000) PUBLISHes, AMQP_PUBLISHERS (4) x AMQP_EACH
# (10000) publishes. The defaults give about 150 MB. Needs root (tcpdump); installs what it needs
# (SKIP_INSTALL=1: nothing). Ports 1883 and 5672 must be free (see require_free_ports in brokers.sh).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=brokers.sh
source "$HERE/brokers.sh"
OUT=${1:-$ROOT/.build-bench/bench.pcap}
mkdir -p "$(dirname "$OUT")"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-capture.XXXXXX")
export ERL_CRASH_DUMP=$WORK/erl_crash.dump
trap 'brokers_cleanup; rm -rf "$WORK"' EXIT
if [[ ${SKIP_INSTALL:-0} != 1 ]]; then
    install_broker_deps
    install_rabbitmq_deps
fi
# The capture is made on the standard ports, which bench.sh decodes without options.
require_free_ports 1883 5672
# Quiet brokers: no per-packet log for a hundred thousand messages.
MOSQUITTO_LOG_TYPE=error start_mosquitto 1883 "$WORK/mosquitto" "max_queued_messages 100000" "max_inflight_messages 64"
start_rabbitmq 5672
CAPTURE_BUFFER_KIB=${CAPTURE_BUFFER_KIB:-262144} start_capture lo "tcp port 1883 or tcp port 5672" "$WORK/bench.pcap"
timeout 900 python3 "$HERE/bench_load.py" mqtt 1883 "${MQTT_PUBLISHERS:-6}" "${MQTT_EACH:-21000}" &
mqtt=$!
timeout 900 python3 "$HERE/bench_load.py" amqp 5672 "${AMQP_PUBLISHERS:-4}" "${AMQP_EACH:-10000}" &
amqp=$!
wait $mqtt
wait $amqp
stop_capture
mv "$WORK/bench.pcap" "$OUT"
ls -l "$OUT"
