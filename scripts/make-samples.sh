#!/usr/bin/env bash
#
# make-samples.sh — regenerate every capture under samples/: the MQTT ones
# (scripts/make-mqtt-samples.sh, mosquitto) then the AMQP ones
# (scripts/make-amqp-samples.sh, RabbitMQ). Needs root for tcpdump.
#
# Usage: scripts/make-samples.sh
#
# The environment is passed on to both scripts (SAMPLES_DIR, SKIP_INSTALL,
# KEEP_WORK, MQTT_PORT, MQTT_AUTH_PORT, SEGMENT_MTU, AMQP_PORT, ...; see
# each script). Each script writes its files only once all of its captures
# were made and checked, and stops its brokers when it exits.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

printf '==> %s\n' "MQTT samples (make-mqtt-samples.sh)" >&2
"$HERE/make-mqtt-samples.sh"
printf '==> %s\n' "AMQP samples (make-amqp-samples.sh)" >&2
"$HERE/make-amqp-samples.sh"
