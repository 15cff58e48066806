#!/usr/bin/env bash
#
# make-mqtt-samples.sh — capture real MQTT traffic between a real mosquitto
# broker and real clients (mosquitto_pub/_sub, paho-mqtt) on loopback, and
# write the small pcap files under samples/ that the golden tests use.
#
# Usage: scripts/make-mqtt-samples.sh [SAMPLE...]
#   SAMPLE is one of: basic v31 v5 will large burst refused flows (default: all).
#
# Environment:
#   SAMPLES_DIR   where to write the pcaps (default: <repo>/samples)
#   MQTT_PORT     port of the broker (default 1883)
#   MQTT_AUTH_PORT port of the password-protected broker (default 1884)
#   SEGMENT_MTU   loopback MTU while capturing the large publish, with TSO/GSO
#                 off so segments really are MTU-sized (default 1500; 0 keeps
#                 the loopback as it is: 64 KiB segments)
#   SKIP_INSTALL=1  do not apt-get/pip install anything
#
# Every client runs under `timeout`; every wait is bounded; each broker is
# fresh per sample (no retained state leaks between files). Captures are
# written to a temp dir and moved into SAMPLES_DIR only once all of them have
# been made and checked, so a failed run leaves the old samples in place.
# Only 127.0.0.1 is used.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=brokers.sh
source "$HERE/brokers.sh"

SAMPLES_DIR=${SAMPLES_DIR:-$ROOT/samples}
PORT=${MQTT_PORT:-1883}
AUTH_PORT=${MQTT_AUTH_PORT:-1884}
SEGMENT_MTU=${SEGMENT_MTU:-1500}
PY=${PYTHON:-python3}
T=${CLIENT_TIMEOUT:-20} # seconds: upper bound for any one client
SUB_WAIT=$((T - 5))       # mosquitto_sub -W: gives up (cleanly) before that

ALL_SAMPLES=(basic v31 v5 will large burst refused flows)
declare -A FILE_OF=(
    [basic]=mqtt311-basic.pcap
    [v31]=mqtt31.pcap
    [v5]=mqtt5-properties.pcap
    [will]=mqtt-will-abrupt.pcap
    [large]=mqtt-large-publish.pcap
    [burst]=mqtt-burst.pcap
    [refused]=mqtt-connack-refused.pcap
    [flows]=mqtt-flows.pcap
)

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'make-mqtt-samples: %s\n' "$*" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mqtt-samples.XXXXXX")
LO_SAVED=""

cleanup() {
    local rc=$?
    lo_restore
    brokers_cleanup
    if [[ ${KEEP_WORK:-0} == 1 ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------ loopback MTU --

# Loopback has MTU 65536 and TSO/GSO, so the capture normally sees TCP
# "segments" of up to 64 KiB. For the large publish, make it look like an
# Ethernet path: MTU 1500 and no segmentation offload. Restored on exit.
lo_segment() {
    [[ $SEGMENT_MTU != 0 ]] || { log "SEGMENT_MTU=0: loopback left at MTU $(cat /sys/class/net/lo/mtu)"; return 0; }
    command -v ethtool >/dev/null || { log "no ethtool: loopback left as it is"; return 0; }
    local mtu tso gso
    mtu=$(cat /sys/class/net/lo/mtu)
    tso=$(ethtool -k lo | awk '/^tcp-segmentation-offload:/ {print $2}')
    gso=$(ethtool -k lo | awk '/^generic-segmentation-offload:/ {print $2}')
    LO_SAVED="$mtu $tso $gso"
    if ip link set lo mtu "$SEGMENT_MTU" 2>/dev/null && ethtool -K lo tso off gso off 2>/dev/null; then
        log "loopback: MTU $SEGMENT_MTU, TSO/GSO off for this capture (was MTU $mtu, tso $tso, gso $gso)"
    else
        log "could not change the loopback (no CAP_NET_ADMIN?): segments will be up to 64 KiB"
        lo_restore
    fi
}

lo_restore() {
    [[ -n $LO_SAVED ]] || return 0
    local mtu tso gso
    read -r mtu tso gso <<<"$LO_SAVED"
    LO_SAVED=""
    ip link set lo mtu "$mtu" 2>/dev/null || true
    ethtool -K lo tso "$tso" gso "$gso" 2>/dev/null || true
    log "loopback restored: MTU $(cat /sys/class/net/lo/mtu)"
}

# ----------------------------------------------------------------- helpers --

# begin NAME FILTER: fresh broker on PORT and a capture into $WORK.
begin() {
    local name=$1 filter=$2
    log "${FILE_OF[$name]}"
    start_mosquitto "$PORT" "$WORK/broker-$name" || die "cannot start mosquitto on $PORT"
    start_capture lo "$filter" "$WORK/${FILE_OF[$name]}" || die "cannot start tcpdump"
}

# end: stop the capture, then the brokers.
end() {
    stop_capture || die "capture failed (empty or lost packets)"
    stop_mosquitto
}

# bg VAR OUTFILE CMD...: run CMD (under timeout) in the background with its
# stdout in OUTFILE; its pid goes into VAR.
bg() {
    local -n _pid=$1
    local out=$2
    shift 2
    timeout "$T" "$@" >"$out" &
    _pid=$!
}

# reap PID WHAT: wait for a background client and require success.
reap() {
    local rc=0
    wait "$1" || rc=$?
    ((rc == 0)) || die "$2 failed (exit $rc)"
}

suback() { mosquitto_wait_log "${2:-$PORT}" "Sending SUBACK to $1\$" 10; }

expect_lines() { # FILE N WHAT
    local n
    n=$(wc -l <"$1")
    ((n == $2)) || die "$3: expected $2 lines, got $n: $(head -c 300 "$1")"
}

# ----------------------------------------------------------------- samples --

sample_basic() {
    local sub out=$WORK/basic.out
    begin basic "tcp port $PORT"
    # Retained before anyone subscribes: the subscriber gets it with RETAIN=1.
    timeout "$T" mosquitto_pub -V mqttv311 -h 127.0.0.1 -p "$PORT" -i basic-retain \
        -t sensors/kitchen/temp -m 21.5 -q 1 -r
    # Two overlapping filters at QoS 1. mosquitto 2.0 sends the retained
    # message once per matching filter (twice), live messages once each.
    bg sub "$out" mosquitto_sub -V mqttv311 -h 127.0.0.1 -p "$PORT" -i basic-sub -k 60 \
        -t 'sensors/+/temp' -t 'sensors/#' -q 1 -v -C 5 -W "$SUB_WAIT"
    suback basic-sub
    timeout "$T" mosquitto_pub -V mqttv311 -h 127.0.0.1 -p "$PORT" -i basic-pub-q0 -t sensors/kitchen/temp -m 21.6 -q 0
    timeout "$T" mosquitto_pub -V mqttv311 -h 127.0.0.1 -p "$PORT" -i basic-pub-q1 -t sensors/garage/temp -m 17.25 -q 1
    timeout "$T" mosquitto_pub -V mqttv311 -h 127.0.0.1 -p "$PORT" -i basic-pub-q2 -t sensors/garage/humidity -m 64 -q 2
    timeout "$T" mosquitto_pub -V mqttv311 -h 127.0.0.1 -p "$PORT" -i basic-pub-none -t actuators/fan -m on -q 1
    reap "$sub" "basic subscriber"
    expect_lines "$out" 5 "basic subscriber"
    end
}

sample_v31() {
    local sub out=$WORK/v31.out
    begin v31 "tcp port $PORT"
    # No password file on this broker: any user name/password is accepted,
    # and both travel in clear in CONNECT.
    bg sub "$out" mosquitto_sub -V mqttv31 -h 127.0.0.1 -p "$PORT" -i v31-sub -k 60 \
        -u alice -P 'alice-s3cret' -t 'legacy/#' -q 2 -v -C 2 -W "$SUB_WAIT"
    suback v31-sub
    timeout "$T" mosquitto_pub -V mqttv31 -h 127.0.0.1 -p "$PORT" -i v31-pub-q1 \
        -u bob -P 'bob-pa55word' -t legacy/meter/1 -m 'kWh=1234.5' -q 1
    timeout "$T" mosquitto_pub -V mqttv31 -h 127.0.0.1 -p "$PORT" -i v31-pub-q2 \
        -u bob -P 'bob-pa55word' -t legacy/meter/2 -m 'kWh=987.0' -q 2
    reap "$sub" "3.1 subscriber"
    expect_lines "$out" 2 "3.1 subscriber"
    end
}

sample_v5() {
    begin v5 "tcp port $PORT"
    timeout "$T" "$PY" "$HERE/mqtt_clients.py" mqtt5 --port "$PORT" >"$WORK/v5.out" ||
        die "MQTT 5 scenario failed"
    sed 's/^/    /' "$WORK/v5.out" >&2
    end
}

sample_will() {
    local sub dev out=$WORK/will.out
    begin will "tcp port $PORT"
    bg sub "$out" mosquitto_sub -V mqttv311 -h 127.0.0.1 -p "$PORT" -i will-watcher -k 60 \
        -t 'clients/+/status' -q 1 -v -C 1 -W "$SUB_WAIT"
    suback will-watcher
    # The device: a will, then it is killed (SIGKILL: no DISCONNECT, the
    # kernel just closes the socket), so the broker publishes the will.
    bg dev /dev/null mosquitto_sub -V mqttv311 -h 127.0.0.1 -p "$PORT" -i dev-7 -k 60 \
        --will-topic clients/dev-7/status --will-payload 'offline (connection lost)' --will-qos 1 \
        -t clients/dev-7/cmd -q 1
    suback dev-7
    # timeout runs the client as its child: kill that child, not timeout.
    local child
    child=$(pgrep -P "$dev" -x mosquitto_sub) || die "device client not running"
    kill -KILL "$child"
    wait "$dev" 2>/dev/null || true
    reap "$sub" "will subscriber"
    grep -qx 'clients/dev-7/status offline (connection lost)' "$out" || die "will not received: $(cat "$out")"
    end
}

sample_large() {
    local sub size=1500000 blob=$WORK/blob.bin got=$WORK/large.out
    "$PY" "$HERE/mqtt_clients.py" blob "$size" "$blob"
    lo_segment
    begin large "tcp port $PORT"
    bg sub "$got" mosquitto_sub -V mqttv311 -h 127.0.0.1 -p "$PORT" -i bulk-sub -k 60 \
        -t bulk/firmware -q 1 -N -C 1 -W "$SUB_WAIT"
    suback bulk-sub
    timeout "$T" mosquitto_pub -V mqttv311 -h 127.0.0.1 -p "$PORT" -i bulk-pub -t bulk/firmware -q 1 -f "$blob"
    reap "$sub" "large subscriber"
    end
    lo_restore
    cmp -s "$blob" "$got" || die "large payload was not received intact"
}

sample_burst() {
    local sub n=200 i lines=$WORK/burst.txt out=$WORK/burst.out
    for ((i = 0; i < n; i++)); do printf 'burst %03d\n' "$i"; done >"$lines"
    begin burst "tcp port $PORT"
    bg sub "$out" mosquitto_sub -V mqttv311 -h 127.0.0.1 -p "$PORT" -i burst-sub -k 60 \
        -t burst/counter -q 0 -C "$n" -W "$SUB_WAIT"
    suback burst-sub
    # -l: one PUBLISH per input line, as fast as they can be written; with
    # Nagle on, many PUBLISHes share a TCP segment (both directions).
    timeout "$T" mosquitto_pub -V mqttv311 -h 127.0.0.1 -p "$PORT" -i burst-pub -t burst/counter -q 0 -l <"$lines"
    reap "$sub" "burst subscriber"
    cmp -s "$lines" "$out" || die "burst subscriber did not get all $n messages in order"
    end
}

sample_refused() {
    local pw=$WORK/broker-refused/passwd rc
    mkdir -p "$WORK/broker-refused"
    : >"$pw"
    mosquitto_passwd -b "$pw" alice correct-horse 2>/dev/null
    chmod 600 "$pw"
    log "${FILE_OF[refused]} (port $AUTH_PORT)"
    start_mosquitto "$AUTH_PORT" "$WORK/broker-refused" \
        "allow_anonymous false" "password_file $pw" || die "cannot start mosquitto on $AUTH_PORT"
    start_capture lo "tcp port $AUTH_PORT" "$WORK/${FILE_OF[refused]}" || die "cannot start tcpdump"
    local -a c=(timeout "$T" mosquitto_pub -h 127.0.0.1 -p "$AUTH_PORT" -t secure/door -m open -q 1)
    # Refusals (each client must fail):
    #   3.1.1 anonymous, 3.1.1 wrong password, 3.1 wrong password, 5.0 wrong password.
    for args in "-V mqttv311 -i anon-311" \
        "-V mqttv311 -i bad-311 -u alice -P wrong-horse" \
        "-V mqttv31 -i bad-31 -u alice -P wrong-horse" \
        "-V 5 -i bad-5 -u alice -P wrong-horse"; do
        # shellcheck disable=SC2086
        if "${c[@]}" $args 2>>"$WORK/refused.err"; then die "mosquitto_pub $args was not refused"; fi
    done
    # ... and one accepted login for contrast.
    "${c[@]}" -V mqttv311 -i good-311 -u alice -P correct-horse || die "good login refused"
    stop_capture || die "capture failed (empty or lost packets)"
    stop_mosquitto
    sed 's/^/    /' "$WORK/refused.err" >&2
}

# -------------------------------------------------------------- verifying --

# summary FILE [tshark args]: packet count and MQTT message types.
# QoS 1 and 2 flows that go wrong (scripts/mqtt_flows.py, raw sockets): a subscriber that never
# acknowledges, a client reset mid QoS 2 flow, a DUP repeat, a packet identifier reused, an
# unexpected PUBREL, 5.0 Receive Maximum exceeded (the broker announces 3) and a PUBLISH the ACL
# refuses (PUBACK 0x87).
sample_flows() {
    local dir=$WORK/broker-flows
    mkdir -p "$dir"
    printf 'topic readwrite flows/#\n' >"$dir/acl"
    log "${FILE_OF[flows]}"
    start_mosquitto "$PORT" "$dir" "max_inflight_messages 3" "acl_file $dir/acl" || die "cannot start mosquitto on $PORT"
    start_capture lo "tcp port $PORT" "$WORK/${FILE_OF[flows]}" || die "cannot start tcpdump"
    timeout "$T" "$PY" "$HERE/mqtt_flows.py" --port "$PORT" || die "mqtt_flows.py failed"
    end
}

summary() {
    local f=$1
    shift
    local pkts types
    if ! command -v tshark >/dev/null; then
        printf '%-28s %9d bytes (tshark not installed: not checked)\n' "$(basename "$f")" "$(stat -c %s "$f")"
        return 0
    fi
    pkts=$(tshark -r "$f" "$@" 2>/dev/null | wc -l)
    types=$(tshark -r "$f" "$@" -Y mqtt -T fields -e mqtt.msgtype 2>/dev/null | tr ',' '\n' | awk '
        BEGIN { split("CONNECT CONNACK PUBLISH PUBACK PUBREC PUBREL PUBCOMP SUBSCRIBE SUBACK UNSUBSCRIBE UNSUBACK PINGREQ PINGRESP DISCONNECT AUTH", n, " ") }
        NF { c[$1]++ }
        END { for (i = 1; i <= 15; i++) if (c[i]) printf "%s%s=%d", (s++ ? " " : ""), n[i], c[i] }')
    [[ -n $types ]] || die "$(basename "$f"): tshark finds no MQTT in it"
    printf '%-28s %9d bytes %5d packets  %s\n' "$(basename "$f")" "$(stat -c %s "$f")" "$pkts" "$types"
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
        _apt_install ethtool
    fi
    require_free_ports "$PORT" "$AUTH_PORT" || die "cannot use 127.0.0.1:$PORT and :$AUTH_PORT"
    for s in "${wanted[@]}"; do
        "sample_$s"
    done
    mkdir -p "$SAMPLES_DIR"
    log "wrote:"
    for s in "${wanted[@]}"; do
        local f=$SAMPLES_DIR/${FILE_OF[$s]}
        mv -f "$WORK/${FILE_OF[$s]}" "$f"
        chmod 644 "$f"
        if [[ $s == refused ]]; then
            summary "$f" -d "tcp.port==$AUTH_PORT,mqtt"
        else
            summary "$f" -d "tcp.port==$PORT,mqtt"
        fi
    done
}

main "$@"
