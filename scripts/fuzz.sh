#!/usr/bin/env bash
# Fuzzes proto-dissect with libFuzzer (the Swift toolchain's -sanitize=fuzzer, with AddressSanitizer).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]    run each target for SECONDS (default 300)
#   scripts/fuzz.sh --smoke                  every target for FUZZ_SMOKE_SECONDS (default 30): what CI runs
#
# Targets: mqtt and amqp (one connection's bytes, both directions → framer → decoder → the whole
# field tree, nothing rendered), views (the same, then text, JSON and table, the JSON checked),
# pipeline (capture file bytes → reader → reassembly → both dissectors → every renderer).
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
mkdir -p Fuzz/findings
bin=.build-fuzz/release
# SwiftPM links an executable's entry point itself, which clashes with libFuzzer's main: so
# SwiftPM builds the instrumented modules, and swiftc links each fuzzer from them.
echo "== building the instrumented modules" >&2
swift build -c release --scratch-path .build-fuzz --target FuzzTargets -Xswiftc -sanitize=fuzzer,address 2>&1 \
    | grep -E "error|Build" >&2
objects=$(ls $bin/{FuzzTargets,MQTT,AMQP,Pipeline,Capture,Reassembly,Packets,Render,Dissection}.build/*.o)
for t in "${targets[@]}"; do
    dir=$(echo "$t" | sed 's/^./\U&/; s/^Mqtt/MQTT/; s/^Amqp/AMQP/')
    echo "== linking fuzz-$t" >&2
    # shellcheck disable=SC2086
    swiftc -O -sanitize=fuzzer,address -parse-as-library -DFUZZING -I $bin/Modules -I Sources/CPcap \
        "Fuzz/$dir/main-$t.swift" $objects -lpcap -o "$bin/fuzz-$t-libfuzzer" 2>&1 | grep -v "Cannot export local symbol" >&2 || true
    corpus=.build-fuzz/corpus/$t
    mkdir -p "$corpus"
    echo "== fuzzing $t for ${seconds}s" >&2
    if ! "$bin/fuzz-$t-libfuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=16384 -timeout=10 \
        -artifact_prefix="Fuzz/findings/$t-" -print_final_stats=1 "$corpus" "Fuzz/seeds/$t" 2> ".build-fuzz/$t.log"; then
        echo "fuzz-$t FAILED: see .build-fuzz/$t.log and Fuzz/findings/" >&2
        tail -40 ".build-fuzz/$t.log" >&2
        status=1
    else
        grep -E "stat::number_of_executed_units|stat::peak_rss_mb" ".build-fuzz/$t.log" | tr '\n' ' ' >&2
        echo >&2
    fi
done
exit $status
