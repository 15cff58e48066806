#!/usr/bin/env bash
# Makes the fuzzers' seed corpora from samples/ (needs tshark): for the mqtt and amqp targets,
# up to five TCP connections of each sample as FuzzedConnection records (each segment with its
# direction, scripts/fuzz_seed_records.py); for the pipeline target, the small captures themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf Fuzz/seeds/mqtt Fuzz/seeds/amqp
mkdir -p Fuzz/seeds/mqtt Fuzz/seeds/amqp Fuzz/seeds/pipeline
for f in samples/*.pcap; do
    name=$(basename "$f" .pcap)
    size=$(stat -c %s "$f")
    [ "$size" -le 65536 ] && cp "$f" "Fuzz/seeds/pipeline/$name.pcap"
    case "$name" in amqp*) target=amqp ;; *) target=mqtt ;; esac
    streams=$(tshark -r "$f" -T fields -e tcp.stream 2>/dev/null | sort -un | head -5)
    for s in $streams; do
        # Small seeds keep the fuzzers fast; a connection's start holds its handshake.
        tshark -r "$f" -q -z "follow,tcp,raw,$s" 2>/dev/null | python3 scripts/fuzz_seed_records.py 0 4096 \
            > "Fuzz/seeds/$target/$name-$s.bin"
        [ -s "Fuzz/seeds/$target/$name-$s.bin" ] || rm -f "Fuzz/seeds/$target/$name-$s.bin"
    done
done
ls Fuzz/seeds/*/ | wc -l
