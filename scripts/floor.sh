#!/usr/bin/env bash
# What the pipeline costs before any PDU is dissected: reading, link/IP/TCP headers, reassembly,
# the hand-over to the workers. Builds the current commit in a worktree of its own with one change,
# `StreamStage.handle` returning at once (no connection state, no dissector, no analysis, no table
# row: every reassembly event is dropped where the dissecting begins), and times it against the
# bare read (`tcpdump -r FILE -w /dev/null`) and the unchanged table, each taken in turn
# (scripts/bench.sh's way: the machine's speed drifts from minute to minute).
#
#   scripts/floor.sh [CAPTURE ...]    default: the bench capture and the fleet capture of .build-bench/
#
# Prints, per capture and round, the wall times in seconds and the ratios to the read, and then
# the best of the rounds. The floor is what no change to the dissectors, the analyses or the views
# can take below: a target ratio under it needs the reading and the reassembly themselves made
# cheaper. Environment: RUNS (5 rounds).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
captures=("$@")
[ ${#captures[@]} -gt 0 ] || captures=(.build-bench/bench.pcap .build-bench/fleet-100000.pcap)
for c in "${captures[@]}"; do [ -f "$c" ] || { echo "no capture $c (scripts/bench.sh makes the default ones)" >&2; exit 2; }; done

swift build -c release --product proto-dissect 2>&1 | grep -E "error|Build" | tail -1 >&2
full=$(swift build -c release --show-bin-path)/proto-dissect

tree=$(mktemp -d)/floor
cleanup() { git worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"; }
trap cleanup EXIT
git worktree add -q --detach "$tree" HEAD
python3 - "$tree/Sources/Pipeline/StreamStage.swift" <<'PY'
import re, sys
path = sys.argv[1]
text = open(path).read()
head = re.search(r"\n    func handle\(_ events: ArraySlice<ReassemblyEvent>[^\n]*\{\n", text)
if not head:
    sys.exit("floor.sh: StreamStage.handle not found; update the patch")
text = text[:head.end()] + "        if !events.isEmpty { return }\n" + text[head.end():]
open(path, "w").write(text)
PY
(cd "$tree" && swift build -c release --product proto-dissect 2>&1 | grep -E "error|Build" | tail -1 >&2)
floor=$(cd "$tree" && swift build -c release --show-bin-path)/proto-dissect

timing=$(mktemp)
wall() { python3 scripts/timed.py "%e" "$timing" "$@" || true; cat "$timing"; }
least() { if [ -z "$2" ] || awk "BEGIN{exit !($1 < $2)}"; then echo "$1"; else echo "$2"; fi; }
ratio() { awk "BEGIN{ if ($2 > 0) printf \"%.1f\", $1/$2; else print \"inf\" }"; }

for capture in "${captures[@]}"; do
    echo "$capture"
    printf '  %-6s %8s %10s %10s %10s   %s\n' round read "floor 1t" "floor 2w" "table" "ratios to the read"
    # Untimed first: the capture into the page cache, each binary into memory.
    cat "$capture" >/dev/null
    for bin in "$floor" "$full"; do "$bin" --format table "$capture" >/dev/null || true; done
    br="" b1="" b2="" bt=""
    for ((r = 1; r <= RUNS; r++)); do
        t_read=$(wall tcpdump -r "$capture" -w /dev/null)
        t1=$(wall "$floor" --threads 1 --format table "$capture")
        t2=$(wall "$floor" --threads 2 --format table "$capture")
        tt=$(wall "$full" --format table "$capture")
        printf '  %-6s %8s %10s %10s %10s   %s× %s× %s×\n' "$r" "$t_read" "$t1" "$t2" "$tt" \
            "$(ratio "$t1" "$t_read")" "$(ratio "$t2" "$t_read")" "$(ratio "$tt" "$t_read")"
        br=$(least "$t_read" "$br"); b1=$(least "$t1" "$b1"); b2=$(least "$t2" "$b2"); bt=$(least "$tt" "$bt")
    done
    printf '  %-6s %8s %10s %10s %10s   %s× %s× %s×\n' best "$br" "$b1" "$b2" "$bt" \
        "$(ratio "$b1" "$br")" "$(ratio "$b2" "$br")" "$(ratio "$bt" "$br")"
done
rm -f "$timing"
