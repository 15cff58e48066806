#!/usr/bin/env bash
# Fuzzes proto-dissect with libFuzzer (the Swift toolchain's -sanitize=fuzzer). docs/fuzzing.md
# describes the targets, their inputs and the measured rates.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]    run each target for SECONDS (default 300)
#   scripts/fuzz.sh --smoke                  every target for FUZZ_SMOKE_SECONDS (default 30): what CI runs
#   FUZZ_FLAGS="-runs=1000000" scripts/fuzz.sh 7200 mqtt    more libFuzzer flags (here: stop after 10^6 inputs)
#   FUZZ_ASAN=1 scripts/fuzz.sh ...          every target fuzzed under AddressSanitizer
#   FUZZ_PIPELINE_FAST=1 scripts/fuzz.sh ... pipeline fuzzed without ASan too (about 4 times as fast), its corpus replayed under ASan
#
# Targets: mqtt and amqp (one connection's bytes, both directions → framer → decoder → the whole
# field tree, nothing rendered), views (the same, then text, JSON and table, the JSON checked),
# pipeline (capture file bytes → reader → reassembly → both dissectors → every renderer).
#
# Two instrumented builds of the modules, both keeping Swift's debug preconditions in optimized
# code (-assert-config Debug: every subscript of an unsafe buffer is bounds-checked):
#   .build-fuzz-fast  libFuzzer's coverage alone. mqtt, amqp and views fuzz here, about 4 times as
#                     fast as under ASan (whose allocator and libFuzzer's malloc hooks cost more
#                     than the decoding: about 450 allocations an input);
#   .build-fuzz       the same with AddressSanitizer. pipeline fuzzes here, so every one of its
#                     executions (every decoder and renderer) is checked by ASan; after each of
#                     the others' runs, its whole corpus is replayed here.
# Seeds come from Fuzz/seeds/TARGET (made from samples/ by scripts/make-fuzz-seeds.sh); the
# growing corpus lives in .build-fuzz/corpus/TARGET. A crash leaves its input in
# Fuzz/findings/: add it to Fuzz/regressions/TARGET/ with the fix, where the test suite replays it.
# Exit status: non-zero when a target crashed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=300
if [ "${1:-}" = "--smoke" ]; then
    seconds=${FUZZ_SMOKE_SECONDS:-30}
    shift
elif [[ "${1:-}" =~ ^[0-9]+$ ]]; then
    seconds=$1
    shift
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(mqtt amqp views pipeline)

status=0
mkdir -p Fuzz/findings .build-fuzz
# SwiftPM links an executable's entry point itself, which clashes with libFuzzer's main: so
# SwiftPM builds the instrumented modules, and swiftc links each fuzzer from them.
build() { # scratch path, sanitizers
    echo "== building the instrumented modules in $1 (-sanitize=$2)" >&2
    swift build -c release --scratch-path "$1" --target FuzzTargets -Xswiftc -sanitize="$2" \
        -Xswiftc -assert-config -Xswiftc Debug 2>&1 | grep -E "error|Build" >&2
}
link() { # scratch path, sanitizers, target, output
    local bin=$1/release dir
    dir=$(echo "$3" | sed 's/^./\U&/; s/^Mqtt/MQTT/; s/^Amqp/AMQP/')
    # Each module's objects are those of its current sources (the build's `sources` list): an
    # object of a source file since deleted stays in the scratch path and must not be linked.
    local objects=() m f
    for m in FuzzTargets MQTT MQTTViews AMQP AMQPViews Pipeline Capture Reassembly Packets Render Dissection; do
        while IFS= read -r f; do objects+=("$bin/$m.build/$(basename "$f").o"); done < "$bin/$m.build/sources"
    done
    swiftc -O -assert-config Debug -sanitize="$2" -parse-as-library -DFUZZING -I "$bin/Modules" -I Sources/CPcap \
        "Fuzz/$dir/main-$3.swift" "${objects[@]}" \
        -lpcap -o "$4" 2>&1 | grep -v "Cannot export local symbol" >&2 || true
}
asan=.build-fuzz fast=.build-fuzz-fast
build $asan fuzzer,address
needs_fast=""
for t in "${targets[@]}"; do { [ "$t" = pipeline ] && [ -z "${FUZZ_PIPELINE_FAST:-}" ]; } || [ -n "${FUZZ_ASAN:-}" ] || needs_fast=1; done
[ -z "$needs_fast" ] || build $fast fuzzer

for t in "${targets[@]}"; do
    log=.build-fuzz/$t.log corpus=.build-fuzz/corpus/$t
    mkdir -p "$corpus"
    echo "== linking fuzz-$t" >&2
    link $asan fuzzer,address "$t" "$asan/release/fuzz-$t-libfuzzer"
    fuzzer=$asan/release/fuzz-$t-libfuzzer
    if { [ "$t" != pipeline ] || [ -n "${FUZZ_PIPELINE_FAST:-}" ]; } && [ -z "${FUZZ_ASAN:-}" ]; then
        link $fast fuzzer "$t" "$fast/release/fuzz-$t-libfuzzer"
        fuzzer=$fast/release/fuzz-$t-libfuzzer
    fi
    # A connection's first 4 KB hold its handshake and a good deal more; a capture needs room for
    # its headers and several connections.
    case "$t" in pipeline) max_len=16384 ;; *) max_len=4096 ;; esac
    echo "== fuzzing $t for ${seconds}s ($fuzzer)" >&2
    # shellcheck disable=SC2086
    if ! "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=$max_len -timeout=10 \
        -artifact_prefix="Fuzz/findings/$t-" -print_final_stats=1 ${FUZZ_FLAGS:-} "$corpus" "Fuzz/seeds/$t" 2> "$log"; then
        echo "fuzz-$t FAILED: see $log and Fuzz/findings/" >&2
        tail -40 "$log" >&2
        status=1
        continue
    fi
    grep -E "stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)" "$log" | tr -s ' ' | tr '\n' ' ' >&2
    echo >&2
    [ "$fuzzer" != "$asan/release/fuzz-$t-libfuzzer" ] || continue
    # Every input the run kept (and the seeds) once more under ASan.
    echo "== replaying the $t corpus under ASan" >&2
    if ! "$asan/release/fuzz-$t-libfuzzer" -runs=0 -rss_limit_mb=2048 -max_len=$max_len -timeout=10 \
        -artifact_prefix="Fuzz/findings/$t-asan-" "$corpus" "Fuzz/seeds/$t" 2> "${log%.log}-asan.log"; then
        echo "fuzz-$t FAILED under ASan: see ${log%.log}-asan.log and Fuzz/findings/" >&2
        tail -40 "${log%.log}-asan.log" >&2
        status=1
    else
        grep -E "INITED|DONE" "${log%.log}-asan.log" | tail -1 >&2
    fi
done
exit $status
