#!/usr/bin/env bash
# Times proto-dissect in each format against tshark and tcpdump on the same capture, in one run,
# and prints the times, the ratios and the peak memory (best of RUNS runs each; machines are noisy,
# so each comparison is taken in turn: ours, theirs, ours, theirs...).
#
#   scripts/bench.sh [CAPTURE]     default: .build-bench/bench.pcap (made by make-bench-capture.sh)
#
# Also each format with one thread (`--threads 1`) against two workers (`--threads 2`), wall and
# CPU time (what sharing the connections out gains and costs), and the peak memory with the
# capture repeated as distinct connections.
#
# Then the fleet: one real short MQTT session replayed as FLEET_DEVICES devices, each from its own
# address, about 1,500 connections open at once (scripts/make-fleet-capture.py, generated into
# .build-bench/ when missing): the bare read, the table, JSON and `tshark -q` on it, and the table
# on HALF_OPEN half-open connections (SYN only) against `tshark -Y mqtt`, with peak memory, and
# the table on SUBSCRIBERS (20000) devices each subscribed to a filter of its own against the same
# with one shared filter (scripts/make-subscriber-fleet.py), and on as many AMQP clients each
# binding a queue of their own (scripts/make-amqp-fleet.py).
#
# Environment: RUNS (3), TSHARK_RUNS (1: tshark is slow, 20 s and more a run on 150 MB; more runs
# make its best time as fair as ours), REPEAT (4: the capture repeated as distinct connections, for
# the memory check; 0 skips it), SKIP_TSHARK=1, PARTS ("bench fleet": "fleet" alone skips the
# capture of real brokers, which make-bench-capture.sh takes minutes to make), FLEET_DEVICES
# (100000), HALF_OPEN (200000).
set -euo pipefail
cd "$(dirname "$0")/.."
CAPTURE=${1:-.build-bench/bench.pcap}
RUNS=${RUNS:-3}
REPEAT=${REPEAT:-4}
PARTS=${PARTS:-bench fleet}
part() { case " $PARTS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
if part bench; then [ -f "$CAPTURE" ] || scripts/make-bench-capture.sh "$CAPTURE"; fi
swift build -c release --product proto-dissect 2>&1 | grep -E "error|Compiling|Build" | tail -1 >&2
bin=$(swift build -c release --show-bin-path)/proto-dissect

timing=$(mktemp)
failed=$(mktemp)
trap 'rm -f "$timing" "$failed"' EXIT
# one run of a command: SECONDS PEAK_KB (its output goes to /dev/null). A run that fails is still
# timed (so the table prints), but the script then fails: a fast crash must not pass for a fast run.
once() { timed "%e %M" "$@"; }
# `once` with /usr/bin/time's format FORMAT (%e %U %S %M): its line of numbers, the times to the
# millisecond (scripts/timed.py; /usr/bin/time's %e has hundredths, a tenth of a 0.06 s read).
timed() {
    local format=$1; shift
    python3 scripts/timed.py "$format" "$timing" "$@" || echo "$*" >>"$failed"
    tail -1 "$timing"
}
# the lesser of a number and the least so far (empty: none yet)
least() { if [ -z "$2" ] || awk "BEGIN{exit !($1 < $2)}"; then echo "$1"; else echo "$2"; fi; }
# best SECONDS and least PEAK_KB of RUNS runs of a command
best() {
    local t m bt="" bm="" i
    for ((i = 0; i < RUNS; i++)); do
        read -r t m < <(once "$@")
        bt=$(least "$t" "$bt")
        bm=$(least "$m" "$bm")
    done
    echo "$bt $bm"
}
row() { printf '%-44s %9s s %9s MB\n' "$1" "$2" "$(awk "BEGIN{printf \"%.1f\", $3/1024}")"; }
ratio() { awk "BEGIN{ if ($2 > 0) printf \"%.1f\", $1/$2; else print \"inf\" }"; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{ if (NR == 0) print "-"; else if (NR % 2) printf "%.1f", a[(NR+1)/2]; else printf "%.1f", (a[NR/2]+a[NR/2+1])/2 }'; }

# The machine's speed drifts from minute to minute, for every program alike, so each comparison is
# taken in turn: ROUNDS rounds of the first command (PER runs, its best kept) then the second (one
# run). Prints FIRST_BEST FIRST_PEAK SECOND_BEST SECOND_PEAK and the round-by-round ratios (second / first).
in_turn() {
    local rounds=$1 per=$2; shift 2
    local ours=() theirs=() seen=0 a
    for a in "$@"; do
        if [ "$a" = "--" ]; then seen=1; elif [ $seen = 0 ]; then ours+=("$a"); else theirs+=("$a"); fi
    done
    local ob="" om="" tb="" tm="" ratios="" r i t m rb
    for ((r = 0; r < rounds; r++)); do
        rb=""
        for ((i = 0; i < per; i++)); do
            read -r t m < <(once "${ours[@]}")
            rb=$(least "$t" "$rb")
            om=$(least "$m" "$om")
        done
        ob=$(least "$rb" "$ob")
        read -r t m < <(once "${theirs[@]}")
        tb=$(least "$t" "$tb")
        tm=$(least "$m" "$tm")
        ratios="$ratios $(awk "BEGIN{ if ($rb > 0) printf \"%.3f\", $t/$rb; else print 0 }")"
    done
    echo "$ob $om $tb $tm$ratios"
}

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -m); best of $RUNS runs, each comparison taken in turn"
if part bench; then
    size=$(stat -c %s "$CAPTURE")
    echo "capture: $CAPTURE ($(awk "BEGIN{printf \"%.1f\", $size/1e6}") MB, $(tcpdump -r "$CAPTURE" 2>/dev/null | wc -l) packets)"
    echo
    read -r t_read m_read t_table m_table table_ratios < <(in_turn "$RUNS" 1 tcpdump -r "$CAPTURE" -w /dev/null -- "$bin" --format table "$CAPTURE")
    row "tcpdump -r FILE -w /dev/null" "$t_read" "$m_read"
    row "proto-dissect --format table" "$t_table" "$m_table"
    if [ -z "${SKIP_TSHARK:-}" ]; then
        tshark_runs=${TSHARK_RUNS:-1}
        per=$(( (RUNS + tshark_runs - 1) / tshark_runs ))
        read -r t_json m_json t_tj m_tj json_ratios < <(in_turn "$tshark_runs" "$per" "$bin" --format json "$CAPTURE" -- tshark -r "$CAPTURE" -T json -Y 'mqtt||amqp')
        row "proto-dissect --format json" "$t_json" "$m_json"
        read -r t_text m_text t_tv m_tv text_ratios < <(in_turn "$tshark_runs" "$per" "$bin" --format text "$CAPTURE" -- tshark -r "$CAPTURE" -V -Y 'mqtt||amqp')
        row "proto-dissect --format text" "$t_text" "$m_text"
        row "tshark -T json -Y 'mqtt||amqp' ($tshark_runs run(s))" "$t_tj" "$m_tj"
        row "tshark -V -Y 'mqtt||amqp' ($tshark_runs run(s))" "$t_tv" "$m_tv"
        echo
        echo "json: $(ratio "$t_tj" "$t_json")x faster than tshark -T json, best against best; round by round (median): $(echo "$json_ratios" | median)x (target >= 60x)"
        echo "text: $(ratio "$t_tv" "$t_text")x faster than tshark -V, best against best; round by round (median): $(echo "$text_ratios" | median)x (target >= 20x)"
    else
        read -r t_json m_json < <(best "$bin" --format json "$CAPTURE"); row "proto-dissect --format json" "$t_json" "$m_json"
        read -r t_text m_text < <(best "$bin" --format text "$CAPTURE"); row "proto-dissect --format text" "$t_text" "$m_text"
    fi
    echo "table: $(ratio "$t_table" "$t_read")x the bare libpcap read, best against best; round by round (median): $(echo "$table_ratios" | median)x (target <= 2x)"
    # What sharing the connections out among workers gains and costs: each format with one
    # thread and with two workers, in turn, each's best wall time and least CPU time (user +
    # system). Workers that cost nothing would use the one thread's CPU time in half its time.
    cpu_once() { timed "%e %U %S" "$@" | awk '{printf "%s %.3f\n", $1, $2 + $3}'; }
    for format in table json text; do
        w1="" c1="" w2="" c2=""
        for ((i = 0; i < RUNS; i++)); do
            read -r w c < <(cpu_once "$bin" --format "$format" --threads 1 "$CAPTURE")
            w1=$(least "$w" "$w1")
            c1=$(least "$c" "$c1")
            read -r w c < <(cpu_once "$bin" --format "$format" --threads 2 "$CAPTURE")
            w2=$(least "$w" "$w2")
            c2=$(least "$c" "$c2")
        done
        echo "$format, 1 thread: $w1 s, CPU $c1 s; 2 workers: $w2 s, CPU $c2 s (their extra CPU: $(awk "BEGIN{ if ($c1 > 0) printf \"%+.0f\", ($c2 / $c1 - 1) * 100; else print \"?\" }")%)"
    done
    echo "peak memory: $(awk "BEGIN{printf \"%.1f\", ($m_json > $m_text ? ($m_json > $m_table ? $m_json : $m_table) : ($m_text > $m_table ? $m_text : $m_table))/1024}") MB (target <= 32 MB)"
    if [ "$REPEAT" -gt 1 ]; then
        big=.build-bench/repeat-$REPEAT.pcap
        python3 scripts/repeat_capture.py "$CAPTURE" "$big" "$REPEAT" >/dev/null
        read -r t_big m_big < <(RUNS=1 best "$bin" --format json "$big")
        row "proto-dissect --format json, capture x$REPEAT" "$t_big" "$m_big"
        echo "memory as the capture grows x$REPEAT: $(awk "BEGIN{printf \"%.1f\", $m_json/1024}") MB -> $(awk "BEGIN{printf \"%.1f\", $m_big/1024}") MB"
        rm -f "$big"
    fi
fi
if part fleet; then
    # capinfos reads the records' headers alone (`tcpdump -r | wc -l` looks up 100,000 addresses' names).
    packets() { capinfos -c -M "$1" | awk '/Number of packets/ {print $NF}'; }
    devices=${FLEET_DEVICES:-100000}
    half=${HALF_OPEN:-200000}
    fleet=.build-bench/fleet-$devices.pcap
    halfopen=.build-bench/half-open-$half.pcap
    mkdir -p .build-bench
    [ -f "$fleet" ] || python3 scripts/make-fleet-capture.py "$fleet" --devices "$devices" >&2
    [ -f "$halfopen" ] || python3 scripts/make-fleet-capture.py "$halfopen" --syn-only --devices "$half" >&2
    size=$(stat -c %s "$fleet")
    echo
    echo "fleet capture: $fleet ($(awk "BEGIN{printf \"%.1f\", $size/1e6}") MB, $devices devices, $(packets "$fleet") packets)"
    read -r f_read fm_read f_table fm_table f_ratios < <(in_turn "$RUNS" 1 tcpdump -r "$fleet" -w /dev/null -- "$bin" --format table "$fleet")
    row "tcpdump -r FILE -w /dev/null" "$f_read" "$fm_read"
    row "proto-dissect --format table" "$f_table" "$fm_table"
    read -r f_json fm_json < <(best "$bin" --format json "$fleet")
    row "proto-dissect --format json" "$f_json" "$fm_json"
    if [ -z "${SKIP_TSHARK:-}" ]; then
        read -r f_tq fm_tq < <(best tshark -q -r "$fleet")
        row "tshark -q -r FILE" "$f_tq" "$fm_tq"
    fi
    echo "fleet table: $(ratio "$f_table" "$f_read")x the bare libpcap read, best against best; round by round (median): $(echo "$f_ratios" | median)x (target <= 3x)"
    echo "fleet json: $(ratio "$f_json" "$f_read")x the bare read${f_tq:+; tshark -q $(ratio "$f_tq" "$f_read")x}"
    size=$(stat -c %s "$halfopen")
    echo
    echo "half-open capture: $halfopen ($(awk "BEGIN{printf \"%.1f\", $size/1e6}") MB, $half connections, SYN only)"
    if [ -z "${SKIP_TSHARK:-}" ]; then
        read -r h_table hm_table h_tshark hm_tshark h_ratios < <(in_turn "$RUNS" 1 "$bin" --format table "$halfopen" -- tshark -r "$halfopen" -Y mqtt)
        row "proto-dissect --format table" "$h_table" "$hm_table"
        row "tshark -r FILE -Y mqtt" "$h_tshark" "$hm_tshark"
        echo "half-open table: $(ratio "$h_tshark" "$h_table")x faster than tshark -Y mqtt, best against best; round by round (median): $(echo "$h_ratios" | median)x (target >= 1x)"
    else
        read -r h_table hm_table < <(best "$bin" --format table "$halfopen")
        row "proto-dissect --format table" "$h_table" "$hm_table"
    fi
    echo "half-open peak memory: $(awk "BEGIN{printf \"%.1f\", $hm_table/1024}") MB (README: about 1 KiB per tracked connection, 64 MiB at --max-connections 65536)"
    # Devices each subscribed to a filter of their own (synthetic): the broker model's cost per
    # PUBLISH must not grow with the filters open; the same traffic with one shared filter beside it.
    subs=${SUBSCRIBERS:-20000}
    own=.build-bench/subscribers-$subs.pcap
    shared=.build-bench/subscribers-$subs-shared.pcap
    [ -f "$own" ] || python3 scripts/make-subscriber-fleet.py "$own" --devices "$subs" >&2
    [ -f "$shared" ] || python3 scripts/make-subscriber-fleet.py "$shared" --devices "$subs" --shared >&2
    echo
    echo "subscriber fleet: $own ($subs devices, a filter each, about 1,500 connected at once; scripts/make-subscriber-fleet.py)"
    read -r s_read sm_read s_table sm_table s_ratios < <(in_turn "$RUNS" 1 tcpdump -r "$own" -w /dev/null -- "$bin" --format table "$own")
    row "tcpdump -r FILE -w /dev/null" "$s_read" "$sm_read"
    row "proto-dissect --format table" "$s_table" "$sm_table"
    read -r s_shared sm_shared < <(best "$bin" --format table "$shared")
    row "proto-dissect --format table (shared filter)" "$s_shared" "$sm_shared"
    echo "subscriber fleet table: $(ratio "$s_table" "$s_read")x the bare read; with one shared filter $(ratio "$s_shared" "$s_read")x"
    # AMQP clients each binding a queue of their own to amq.topic (synthetic): the broker model's
    # cost per publish, declare, bind and delete must not grow with the bindings open.
    amqp=.build-bench/amqp-clients-$subs.pcap
    [ -f "$amqp" ] || python3 scripts/make-amqp-fleet.py "$amqp" --clients "$subs" >&2
    echo
    echo "AMQP client fleet: $amqp ($subs clients, a queue and binding each, about 1,500 connected at once; scripts/make-amqp-fleet.py)"
    read -r a_read am_read a_table am_table a_ratios < <(in_turn "$RUNS" 1 tcpdump -r "$amqp" -w /dev/null -- "$bin" --format table "$amqp")
    row "tcpdump -r FILE -w /dev/null" "$a_read" "$am_read"
    row "proto-dissect --format table" "$a_table" "$am_table"
    echo "AMQP client fleet table: $(ratio "$a_table" "$a_read")x the bare read"
fi
if [ -s "$failed" ]; then
    echo "FAILED (times above are not valid for these):" >&2
    sort -u "$failed" >&2
    exit 1
fi
