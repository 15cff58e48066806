#!/usr/bin/env bash
# Two builds of proto-dissect timed in turn on one capture (A, B, A, B, ...): each run's wall and
# user seconds and peak resident kilobytes, per build. How docs/performance.md's "taken in turn"
# comparisons are made; for one build against tshark and tcpdump, scripts/bench.sh.
#
#   scripts/ab.sh BIN_A BIN_B FORMAT CAPTURE [RUNS]     RUNS: 5 by default
#
# Extra options for both runs go in ARGS (ARGS="--threads 1"); environment for B alone in B_ENV
# (B_ENV="MIMALLOC_DECOMMIT_DELAY=1").
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 BIN_A BIN_B FORMAT CAPTURE [RUNS]" >&2; exit 2; }
a=$1 b=$2 format=$3 capture=$4 runs=${5:-5}
read -r -a args <<< "${ARGS:-}"
read -r -a benv <<< "${B_ENV:-}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((i = 0; i < runs; i++)); do
    /usr/bin/time -f "A %e %U %M" -a -o "$out" "$a" --format "$format" "${args[@]}" "$capture" >/dev/null
    env "${benv[@]}" /usr/bin/time -f "B %e %U %M" -a -o "$out" "$b" --format "$format" "${args[@]}" "$capture" >/dev/null
done
awk '{ w[$1] = w[$1] " " $2; u[$1] = u[$1] " " $3; m[$1] = m[$1] " " $4 }
     END { for (k in w) print k, "wall s:" w[k], "| user s:" u[k], "| peak KB:" m[k] }' "$out" | sort
