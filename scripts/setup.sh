#!/usr/bin/env bash
# Installs what building proto-dissect needs on Debian: libpcap's headers (libpcap-dev) and
# mimalloc (libmimalloc-dev), the allocator the executable links on Linux. On macOS nothing is needed.
# With --test it also installs what the test suite uses: tshark (the outside judge), tcpdump,
# mosquitto and RabbitMQ with their clients (the live-capture tests run real brokers).
set -euo pipefail
if [ "$(uname -s)" = Darwin ]; then
    # libpcap comes with the SDK, and the executable keeps the system's allocator there.
    if [ "${1:-}" = "--test" ]; then
        echo "setup.sh: the test suite runs on Linux (live capture on lo, brokers and tools from Debian)" >&2
        exit 1
    fi
    exit 0
fi
packages=(libpcap-dev libmimalloc-dev pkg-config)
if [ "${1:-}" = "--test" ]; then packages+=(tshark tcpdump mosquitto mosquitto-clients rabbitmq-server amqp-tools time util-linux python3); fi
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
