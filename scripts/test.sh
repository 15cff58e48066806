#!/usr/bin/env bash
# Runs the whole test suite, installing what it needs first (see scripts/setup.sh), then a short
# fuzzing smoke run of every libFuzzer target (scripts/fuzz.sh --smoke; SKIP_FUZZ=1 skips it,
# FUZZ_SMOKE_SECONDS sets its budget per target, 20 s by default), and the library example
# (Examples/CodecCheck: a package that depends on this one re-encodes the samples' MQTT packets),
# and that every unchecked exclusivity or Sendable has its reason beside it (scripts/check-unchecked.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
log=$(mktemp "${TMPDIR:-/tmp}/proto-dissect-test.XXXXXX")
trap 'rm -f "$log"' EXIT
status=0
swift test "$@" 2>&1 | tee "$log" || status=$?
if [ "$status" -eq 0 ] && [ $# -eq 0 ]; then
    scripts/check-unchecked.sh || status=$?
fi
if [ "$status" -eq 0 ] && [ $# -eq 0 ]; then
    swift run --package-path Examples/CodecCheck CodecCheck samples/mqtt*.pcap 2>&1 | tail -3 || status=$?
fi
if [ "$status" -eq 0 ] && [ -z "${SKIP_FUZZ:-}" ] && [ $# -eq 0 ]; then
    FUZZ_SMOKE_SECONDS=${FUZZ_SMOKE_SECONDS:-20} scripts/fuzz.sh --smoke || status=$?
fi
# The test runner's closing line, last, where a reader of the log looks for it.
grep -E "^(✔|✘|􁁛|􀢄)? ?Test run with [0-9]+ tests" "$log" | tail -1 || true
exit "$status"
