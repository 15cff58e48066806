#!/usr/bin/env bash
# Compares proto-dissect with tshark PDU by PDU (../shared/tools/tshark-oracle) on every capture in
# samples/ and ../shared/captures/suricata-verify/, and prints the per-capture lines and the totals.
# Builds the release binary first. Options for a sample come from samples/NAME.args; ORACLE_ARGS
# are given for every capture (`ORACLE_ARGS=--no-analysis`: the oracle counts the analysis records,
# which name their protocol too, among the "PDUs only in ours").
set -uo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product proto-dissect 2>&1 | grep -E "error|Build" >&2
bin=$(swift build -c release --show-bin-path)/proto-dissect
oracle=../shared/tools/tshark-oracle
agree=0 total=0 extra=0 files=0
while IFS= read -r f; do
    args=""
    [ -f "${f%.*}.args" ] && args=$(cat "${f%.*}.args")
    line=$(python3 "$oracle" "$f" --cmd "$bin --format json ${ORACLE_ARGS:-} $args" --min-agree 0 | tail -1)
    echo "$line"
    nums=$(echo "$line" | grep -oE '[0-9]+/[0-9]+ tshark' | cut -d' ' -f1)
    only=$(echo "$line" | grep -oE '[0-9]+ PDUs only in ours' | cut -d' ' -f1)
    agree=$((agree + ${nums%/*})); total=$((total + ${nums#*/})); extra=$((extra + ${only:-0})); files=$((files + 1))
done < <(ls samples/*.pcap; find ../shared/captures/suricata-verify -name '*.pcap' | sort)
echo "TOTAL: $files captures, $agree/$total tshark PDUs agree, $extra PDUs only in ours"
