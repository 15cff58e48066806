#!/usr/bin/env bash
# What the pipeline costs before any PDU is dissected: reading, link/IP/TCP headers, reassembly,
# the hand-over to the workers. Builds the current commit in a worktree of its own with one change,
# `StreamStage.handle` returning at once (no connection state, no dissector, no analysis, no table
# row: every reassembly event is dropped where the dissecting begins), and times it against the
# bare read (`tcpdump -r FILE -w /dev/null`) and the unchanged table, with one thread and two
# workers each, taken in turn
# (scripts/bench.sh's way: the machine's speed drifts from minute to minute).
#
#   scripts/floor.sh [CAPTURE ...]    default: the bench and fleet captures of .build-bench/ (paths without spaces)
#
# Prints, per capture and round, the wall times in seconds and their ratios to the read, then the
# best of the rounds and the least CPU time (user + system) of each: what two workers add to the
# floor is the hand-over's own cost; what they add to the table beyond it, running the dissectors on
# two cores. The floor is what no change to the dissectors, the analyses or the views
# can take below: a target ratio under it needs the reading and the reassembly themselves made
# cheaper. Beside them, scripts/floor-probe.swift (compiled with `swiftc -O`): reading, headers and
# a flow table of plain values with nothing counted per packet, what the floor's design is judged
# against (classic little-endian pcap of Ethernet only). Environment: RUNS (5 rounds); KEEP=DIR
# keeps the floor's binary as DIR/proto-dissect-floor, to profile it (callgrind, perf,
# scripts/refcount-sites.sh with BIN=).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
captures=("$@")
[ ${#captures[@]} -gt 0 ] || captures=(.build-bench/bench.pcap .build-bench/fleet-100000.pcap)
for c in "${captures[@]}"; do [ -f "$c" ] || { echo "no capture $c (scripts/bench.sh makes the default ones)" >&2; exit 2; }; done

swift build -c release --product proto-dissect 2>&1 | grep -E "error|Build" | tail -1 >&2
full=$(swift build -c release --show-bin-path)/proto-dissect

tree=$(mktemp -d)/floor
cleanup() { git worktree remove --force "$tree" 2>/dev/null || true; rm -rf "$(dirname "$tree")"; }
trap cleanup EXIT
git worktree add -q --detach "$tree" HEAD
python3 - "$tree/Sources/Pipeline/StreamStage.swift" <<'PY'
import re, sys
path = sys.argv[1]
text = open(path).read()
head = re.search(r"\n    func handle\(_ events: ArraySlice<ReassemblyEvent>[^\n]*\{\n", text)
if not head:
    sys.exit("floor.sh: StreamStage.handle not found; update the patch")
# A return that depends on the events: a bare `return` makes the rest of the body unreachable,
# which the compiler warns of (and no event list is empty here: nothing changes for an empty one).
text = text[:head.end()] + "        if !events.isEmpty { return }\n" + text[head.end():]
open(path, "w").write(text)
PY
(cd "$tree" && swift build -c release --product proto-dissect 2>&1 | grep -E "error|Build" | tail -1 >&2)
floor=$(cd "$tree" && swift build -c release --show-bin-path)/proto-dissect
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$floor" "$KEEP/proto-dissect-floor" && echo "floor build kept: $KEEP/proto-dissect-floor" >&2; fi
# What reading, the headers and a flow table can cost with nothing counted per packet (its header says
# what it leaves out): the floor's design judged against it.
probe="$(dirname "$tree")/floor-probe"
swiftc -O -o "$probe" scripts/floor-probe.swift

timing=$(mktemp)
# one run: "WALL CPU" (CPU: user + system), the wall time to the millisecond (scripts/timed.py)
run() { python3 scripts/timed.py "%e %U %S" "$timing" "$@" || true; awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$timing"; }
least() { if [ -z "$2" ] || awk "BEGIN{exit !($1 < $2)}"; then echo "$1"; else echo "$2"; fi; }
ratio() { awk "BEGIN{ if ($2 > 0) printf \"%.1f\", $1/$2; else print \"inf\" }"; }

names=(read probe "floor 1t" "floor 2w" "table 1t" "table 2w")
for capture in "${captures[@]}"; do
    echo "$capture: wall seconds per round (ratio to that round's read)"
    printf '  %-6s' round; printf ' %16s' "${names[@]}"; echo
    # Untimed first: the capture into the page cache, each binary into memory.
    cat "$capture" >/dev/null
    for bin in "$floor" "$full"; do "$bin" --format table "$capture" >/dev/null || true; done
    walls=(); cpus=()
    for ((r = 1; r <= RUNS; r++)); do
        commands=("tcpdump -r $capture -w /dev/null" "$probe $capture"
                  "$floor --threads 1 --format table $capture" "$floor --threads 2 --format table $capture"
                  "$full --threads 1 --format table $capture" "$full --threads 2 --format table $capture")
        printf '  %-6s' "$r"
        for i in "${!commands[@]}"; do
            # shellcheck disable=SC2086  # the commands are words without spaces inside them
            read -r w c < <(run ${commands[$i]})
            [ "$i" -eq 0 ] && t_read=$w
            if [ "$i" -eq 0 ]; then printf ' %16s' "$w"; else printf ' %16s' "$w ($(ratio "$w" "$t_read")×)"; fi
            walls[i]=$(least "$w" "${walls[i]:-}"); cpus[i]=$(least "$c" "${cpus[i]:-}")
        done
        echo
    done
    printf '  %-6s' best; for i in "${!walls[@]}"; do
        if [ "$i" -eq 0 ]; then printf ' %16s' "${walls[0]}"; else printf ' %16s' "${walls[i]} ($(ratio "${walls[i]}" "${walls[0]}")×)"; fi
    done; echo
    printf '  %-6s' CPU; for i in "${!cpus[@]}"; do printf ' %16s' "${cpus[i]}"; done; echo "   (least, user + system)"
done
rm -f "$timing"
