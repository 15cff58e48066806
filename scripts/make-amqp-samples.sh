#!/usr/bin/env bash
#
# make-amqp-samples.sh — capture real AMQP 0-9-1 traffic between a real
# RabbitMQ broker and real clients (pika, amqp-tools) on loopback, and write
# the small pcap files under samples/ that the golden tests use.
#
# Usage: scripts/make-amqp-samples.sh [SAMPLE...]
#   SAMPLE is one of: exchanges properties consume errors routing (default: all).
#
# Environment:
#   SAMPLES_DIR   where to write the pcaps (default: <repo>/samples)
#   AMQP_PORT     port of the broker (default 5672, which tshark and the tool
#                 decode as AMQP without options)
#   SKIP_INSTALL=1  do not apt-get/pip install anything
#   KEEP_WORK=1   keep the temp dir (client output, broker log)
#
# One RabbitMQ node (fresh, private mnesia dir) serves all the samples; each
# scenario deletes whatever it declared, and starts before its capture is
# armed, so no broker start-up traffic gets in. Every client runs under
# `timeout`; every wait is bounded. Captures are written to a temp dir and
# moved into SAMPLES_DIR only once all of them have been made and checked, so
# a failed run leaves the old samples in place. Only 127.0.0.1 is used.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=brokers.sh
source "$HERE/brokers.sh"

SAMPLES_DIR=${SAMPLES_DIR:-$ROOT/samples}
PORT=${AMQP_PORT:-5672}
PY=${PYTHON:-python3}
T=${CLIENT_TIMEOUT:-30} # seconds: upper bound for any one client

ALL_SAMPLES=(exchanges properties consume errors routing)
declare -A FILE_OF=(
    [exchanges]=amqp-exchanges.pcap
    [properties]=amqp-properties.pcap
    [consume]=amqp-consume-ack.pcap
    [errors]=amqp-errors.pcap
    [routing]=amqp-routing.pcap
)

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'make-amqp-samples: %s\n' "$*" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/amqp-samples.XXXXXX")
# If the Erlang VM ever crashes, its erl_crash.dump goes here, not into the
# current directory (the repo).
export ERL_CRASH_DUMP=$WORK/erl_crash.dump

cleanup() {
    local rc=$?
    brokers_cleanup
    if [[ ${KEEP_WORK:-0} == 1 ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ----------------------------------------------------------------- helpers --

# run_clients NAME: the pika scenario NAME under timeout, its steps shown.
run_clients() {
    local name=$1 rc=0
    timeout "$T" "$PY" "$HERE/amqp_clients.py" "$name" --port "$PORT" >"$WORK/$name.out" || rc=$?
    sed 's/^/    /' "$WORK/$name.out" >&2
    ((rc == 0)) || die "AMQP scenario '$name' failed (exit $rc)"
}

# capture NAME: the scenario NAME (pika) with a capture around it.
capture() {
    local name=$1
    log "${FILE_OF[$name]}"
    start_capture lo "tcp port $PORT" "$WORK/${FILE_OF[$name]}" || die "cannot start tcpdump"
    "sample_$name"
    stop_capture || die "capture failed (empty or lost packets)"
}

# ----------------------------------------------------------------- samples --

sample_exchanges() { run_clients exchanges; }
sample_properties() { run_clients properties; }
sample_consume() { run_clients consume; }
sample_routing() { run_clients routing; }

sample_errors() {
    # A refused login from another client implementation: amqp-tools
    # (rabbitmq-c). It announces authentication_failure_close, so RabbitMQ
    # answers with connection.close 403. It must fail.
    if timeout "$T" amqp-declare-queue --server=127.0.0.1 --port="$PORT" \
        --username=guest --password=wrong-password --queue=pd.never \
        >"$WORK/errors-tools.out" 2>&1; then
        die "amqp-tools login with a wrong password was accepted"
    fi
    sed 's/^/    amqp-tools: /' "$WORK/errors-tools.out" >&2
    run_clients errors
}

# -------------------------------------------------------------- verifying --

# Method names by class id and method id (AMQP 0-9-1), for the summary.
AMQP_NAMES='
10.10 connection.start
10.11 connection.start-ok
10.20 connection.secure
10.21 connection.secure-ok
10.30 connection.tune
10.31 connection.tune-ok
10.40 connection.open
10.41 connection.open-ok
10.50 connection.close
10.51 connection.close-ok
20.10 channel.open
20.11 channel.open-ok
20.20 channel.flow
20.21 channel.flow-ok
20.40 channel.close
20.41 channel.close-ok
40.10 exchange.declare
40.11 exchange.declare-ok
40.20 exchange.delete
40.21 exchange.delete-ok
40.30 exchange.bind
40.31 exchange.bind-ok
40.40 exchange.unbind
40.51 exchange.unbind-ok
50.10 queue.declare
50.11 queue.declare-ok
50.20 queue.bind
50.21 queue.bind-ok
50.30 queue.purge
50.31 queue.purge-ok
50.40 queue.delete
50.41 queue.delete-ok
50.50 queue.unbind
50.51 queue.unbind-ok
60.10 basic.qos
60.11 basic.qos-ok
60.20 basic.consume
60.21 basic.consume-ok
60.30 basic.cancel
60.31 basic.cancel-ok
60.40 basic.publish
60.50 basic.return
60.60 basic.deliver
60.70 basic.get
60.71 basic.get-ok
60.72 basic.get-empty
60.80 basic.ack
60.90 basic.reject
60.100 basic.recover-async
60.110 basic.recover
60.111 basic.recover-ok
60.120 basic.nack
85.10 confirm.select
85.11 confirm.select-ok
90.10 tx.select
90.11 tx.select-ok
90.20 tx.commit
90.21 tx.commit-ok
90.30 tx.rollback
90.31 tx.rollback-ok
'

# amqp_counts FILE: "name count" per AMQP method, then content headers,
# body frames and heartbeats, in protocol order.
amqp_counts() {
    tshark -r "$1" -d "tcp.port==$PORT,amqp" -Y amqp -T fields -E occurrence=a -E aggregator=, \
        -e amqp.type -e amqp.method.class -e amqp.method.method 2>/dev/null | awk -F '\t' -v names="$AMQP_NAMES" '
        BEGIN {
            n = split(names, l, "\n")
            for (i = 1; i <= n; i++) if (split(l[i], f, " ") == 2) { name[f[1]] = f[2]; order[++k] = f[1] }
        }
        {
            # one line per packet; several frames per packet are comma-separated
            nt = split($1, t, ","); split($2, c, ","); split($3, m, ",")
            j = 0
            for (i = 1; i <= nt; i++) {
                if (t[i] == 1) { j++; cnt[c[j] "." m[j]]++ }
                else if (t[i] == 2) hdr++
                else if (t[i] == 3) body++
                else if (t[i] == 8) hb++
            }
        }
        END {
            for (i = 1; i <= k; i++) if (cnt[order[i]]) printf "%s %d\n", name[order[i]], cnt[order[i]]
            if (hdr) printf "content-header %d\n", hdr
            if (body) printf "content-body %d\n", body
            if (hb) printf "heartbeat %d\n", hb
        }'
}

# summary FILE: size, packets, and the AMQP frames in it.
summary() {
    local f=$1 pkts counts
    if ! command -v tshark >/dev/null; then
        printf '%-24s %9d bytes (tshark not installed: not checked)\n' "$(basename "$f")" "$(stat -c %s "$f")"
        return 0
    fi
    pkts=$(tshark -r "$f" 2>/dev/null | wc -l)
    counts=$(amqp_counts "$f" | paste -sd' ' | sed 's/ \([0-9]*\)\( \|$\)/=\1\2/g')
    [[ -n $counts ]] || die "$(basename "$f"): tshark finds no AMQP in it"
    printf '%-24s %9d bytes %5d packets  %s\n' "$(basename "$f")" "$(stat -c %s "$f")" "$pkts" "$counts"
}

# need FILE WHAT COUNT: the summary of FILE must show WHAT at least COUNT times.
need() {
    local have
    have=$(amqp_counts "$1" | awk -v w="$2" '$1 == w {print $2}')
    ((${have:-0} >= $3)) || die "$(basename "$1"): expected $2 x$3 at least, found ${have:-0}"
}

# need_text FILE DISPLAYFILTER WHAT: some packet must match the filter.
need_text() {
    [[ -n $(tshark -r "$1" -d "tcp.port==$PORT,amqp" -Y "$2" 2>/dev/null | head -n1) ]] ||
        die "$(basename "$1"): nothing matches $2 ($3)"
}

# check NAME: the frames each scenario is there for really are in its capture.
check() {
    local f=$WORK/${FILE_OF[$1]}
    command -v tshark >/dev/null || return 0
    case $1 in
    exchanges)
        for w in exchange.declare exchange.bind exchange.unbind queue.bind queue.unbind queue.purge \
            queue.delete exchange.delete basic.get-ok basic.get-empty connection.close-ok; do
            need "$f" "$w" 1
        done
        need "$f" exchange.declare 4
        need_text "$f" 'amqp.method.arguments.queue == ""' "server-named queue.declare"
        for x in direct fanout topic headers; do
            need_text "$f" "amqp.method.arguments.type == \"$x\"" "exchange type $x"
        done
        ;;
    properties)
        need "$f" basic.deliver 4
        # 20000 bytes, frame-max 4096 (4088 bytes of payload per body frame):
        # 5 body frames from the publisher and 5 to the consumer.
        need "$f" content-body 10
        need_text "$f" 'amqp.method.properties.cluster_id == "pd-cluster" && amqp.method.properties.user_id == "guest"' \
            "all properties"
        need_text "$f" 'amqp.method.arguments.frame_max == 4096' "frame-max 4096"
        need_text "$f" 'amqp.method.properties.message_id == "msg-0004-all-types"' \
            "the hand-encoded headers table (amqp_clients.py RawAMQP)"
        ;;
    consume)
        for w in basic.qos basic.consume basic.deliver basic.ack basic.nack basic.reject basic.cancel \
            confirm.select tx.select tx.commit tx.rollback basic.return basic.get-empty; do
            need "$f" "$w" 1
        done
        need "$f" heartbeat 2
        ;;
    routing)
        for w in exchange.declare queue.bind basic.publish basic.return basic.nack basic.qos basic.consume \
            basic.deliver basic.get-ok queue.delete exchange.delete; do
            need "$f" "$w" 1
        done
        need "$f" exchange.declare 6
        need_text "$f" 'amqp.method.arguments.redelivered == 1' "a redelivery"
        ;;
    errors)
        need "$f" channel.close 3
        need_text "$f" 'amqp.method.arguments.reply_code == 406 && amqp.method.arguments.reply_text contains "inequivalent arg '"'"'durable'"'"' for queue '"'"'orders'"'"'"' \
            "406 PRECONDITION_FAILED"
        need_text "$f" 'amqp.method.arguments.reply_code == 404 && amqp.method.arguments.reply_text contains "NOT_FOUND - no queue"' \
            "404 NOT_FOUND"
        need_text "$f" 'amqp.method.arguments.reply_code == 403' "403 ACCESS_REFUSED"
        ;;
    esac
}

# ------------------------------------------------------------------- main --

main() {
    local wanted=("$@") s
    ((${#wanted[@]})) || wanted=("${ALL_SAMPLES[@]}")
    for s in "${wanted[@]}"; do
        [[ -n ${FILE_OF[$s]:-} ]] || die "unknown sample '$s' (one of: ${ALL_SAMPLES[*]})"
    done
    if [[ ${SKIP_INSTALL:-0} != 1 ]]; then
        install_broker_deps
        install_rabbitmq_deps
    fi
    require_free_ports "$PORT" || die "cannot use 127.0.0.1:$PORT"
    start_rabbitmq "$PORT" || die "cannot start RabbitMQ on $PORT"
    for s in "${wanted[@]}"; do
        capture "$s"
        check "$s"
    done
    # Nothing left behind by the scenarios (errors deletes `orders`).
    local left
    left=$(rabbitmq_ctl list_queues -q name 2>/dev/null | grep -v '^name$' || true)
    [[ -z $left ]] || die "queues left on the broker: $left"
    stop_rabbitmq
    mkdir -p "$SAMPLES_DIR"
    log "wrote:"
    for s in "${wanted[@]}"; do
        local f=$SAMPLES_DIR/${FILE_OF[$s]}
        mv -f "$WORK/${FILE_OF[$s]}" "$f"
        chmod 644 "$f"
        summary "$f"
    done
}

main "$@"
