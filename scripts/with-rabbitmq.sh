#!/usr/bin/env bash
# with-rabbitmq.sh PORT COMMAND... — starts a private RabbitMQ on 127.0.0.1:PORT (scripts/brokers.sh),
# runs COMMAND, then stops the broker and removes its files, however COMMAND ends.
# The live-capture tests use it as: with-rabbitmq.sh PORT bash -c 'read -r _' (stop by closing stdin).
set -euo pipefail
# shellcheck source=brokers.sh
source "$(dirname "$0")/brokers.sh"
trap brokers_cleanup EXIT
port=$1
shift
start_rabbitmq "$port"
"$@"
