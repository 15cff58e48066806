#!/usr/bin/env bash
# Checks that the working tree's proto-dissect writes exactly what BASE's writes: every capture in
# samples/ and ../shared/captures/suricata-verify/, the bench's generated captures when they are
# there (.build-bench/fleet-10000.pcap and half-open-200000.pcap, from make-fleet-capture.py), and
# any given as arguments, in each format (text, json, table): standard output, standard error and
# exit status compared.
#
#   scripts/same-output.sh BASE [CAPTURE...]
#
# BASE (a commit) is built once from `git archive` into .build-bench/base-COMMIT/ (ignored by git,
# kept for the next run); the working tree is built as it is. Options for a sample come from
# samples/NAME.args. FORMATS (default "text json table") and EXTRA_ARGS (added to every run, e.g.
# "-c 1000000000" for the one-thread path) narrow or widen it; NEW_ARGS are added to the working
# tree's runs alone (NEW_ARGS="--threads 3": the same output with three workers as BASE's). Exits 1
# on any difference.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 BASE [CAPTURE...]" >&2; exit 2; }
base=$(git rev-parse --short=12 "$1^{commit}")
shift
formats=${FORMATS:-text json table}
dir=.build-bench/base-$base
# A release build of proto-dissect here; its log shown only when it fails.
build() {
    local log
    log=$(mktemp)
    if ! swift build -c release --product proto-dissect >"$log" 2>&1; then
        grep -E "error" "$log" >&2 || tail -20 "$log" >&2
        rm -f "$log"
        return 1
    fi
    rm -f "$log"
}
if [ ! -x "$dir/proto-dissect" ]; then
    echo "building $base in $dir ..." >&2
    rm -rf "$dir.src"
    mkdir -p "$dir.src/.build"
    git archive "$base" | tar -x -C "$dir.src"
    # The dependencies as this tree resolved them: no network needed.
    [ -f Package.resolved ] && cp Package.resolved "$dir.src/"
    cp -r .build/checkouts .build/repositories .build/workspace-state.json "$dir.src/.build/" 2>/dev/null || true
    (cd "$dir.src" && build)
    mkdir -p "$dir"
    cp "$dir.src/.build/release/proto-dissect" "$dir/proto-dissect"
    rm -rf "$dir.src"
fi
build
new=$(swift build -c release --show-bin-path)/proto-dissect
old=$dir/proto-dissect

captures=()
while IFS= read -r f; do captures+=("$f"); done < <(ls samples/*.pcap; find ../shared/captures/suricata-verify -name '*.pcap' | sort)
for f in .build-bench/fleet-10000.pcap .build-bench/half-open-200000.pcap; do [ -f "$f" ] && captures+=("$f"); done
captures+=("$@")

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
runs=0 differ=0
# One run: stdout, stderr and status, as digests (a JSON run of a large capture is hundreds of MB).
run() {
    local bin=$1; shift
    local status
    set +e
    "$bin" "$@" 2>"$out/err" | sha256sum >"$out/sum"
    status=${PIPESTATUS[0]}
    set -e
    echo "$(cut -c1-64 "$out/sum") $(sha256sum <"$out/err" | cut -c1-64) $status"
}
for f in "${captures[@]}"; do
    args=()
    [ -f "${f%.*}.args" ] && read -r -a args <"${f%.*}.args"
    for format in $formats; do
        # shellcheck disable=SC2086
        a=$(run "$old" --format "$format" ${EXTRA_ARGS:-} "${args[@]}" "$f")
        # shellcheck disable=SC2086
        b=$(run "$new" --format "$format" ${EXTRA_ARGS:-} ${NEW_ARGS:-} "${args[@]}" "$f")
        runs=$((runs + 1))
        if [ "$a" != "$b" ]; then
            differ=$((differ + 1))
            echo "DIFFERS: --format $format ${EXTRA_ARGS:-} ${NEW_ARGS:-} ${args[*]} $f" >&2
        fi
    done
done
if [ "$differ" -gt 0 ]; then
    echo "$differ of $runs runs differ from $base" >&2
    exit 1
fi
echo "output identical to $base on $runs runs (${#captures[@]} captures x formats: $formats${EXTRA_ARGS:+, $EXTRA_ARGS}${NEW_ARGS:+; new: $NEW_ARGS})"
