#!/usr/bin/env bash
# Makes the fuzzers' seed corpora from samples/ (needs tshark): for the mqtt and amqp targets,
# up to five TCP connections of each sample as FuzzedConnection records (each segment with its
# direction, scripts/fuzz_seed_records.py); for the views target, each sample's first connection
# once per detail the views show (the selector's 0x18 bits); for the pipeline target, the small
# captures themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf Fuzz/seeds/mqtt Fuzz/seeds/amqp Fuzz/seeds/views
mkdir -p Fuzz/seeds/mqtt Fuzz/seeds/amqp Fuzz/seeds/views Fuzz/seeds/pipeline
for f in samples/*.pcap; do
    name=$(basename "$f" .pcap)
    size=$(stat -c %s "$f")
    [ "$size" -le 65536 ] && cp "$f" "Fuzz/seeds/pipeline/$name.pcap"
    # Views selector: 0x20 for AMQP, the MQTT version guessed (0x03 clear).
    case "$name" in amqp*) target=amqp protocol=0x20 ;; *) target=mqtt protocol=0x00 ;; esac
    streams=$(tshark -r "$f" -T fields -e tcp.stream 2>/dev/null | sort -un | head -5)
    for s in $streams; do
        # Small seeds keep the fuzzers fast; a connection's start holds its handshake.
        tshark -r "$f" -q -z "follow,tcp,raw,$s" 2>/dev/null | python3 scripts/fuzz_seed_records.py 0 4096 \
            > "Fuzz/seeds/$target/$name-$s.bin"
        [ -s "Fuzz/seeds/$target/$name-$s.bin" ] || rm -f "Fuzz/seeds/$target/$name-$s.bin"
    done
    first=$(echo "$streams" | head -1)
    for detail in 0 1 2 3; do
        selector=$((protocol | detail << 3))
        tshark -r "$f" -q -z "follow,tcp,raw,$first" 2>/dev/null | python3 scripts/fuzz_seed_records.py $selector 2048 \
            > "Fuzz/seeds/views/$name-d$detail.bin"
        [ -s "Fuzz/seeds/views/$name-d$detail.bin" ] || rm -f "Fuzz/seeds/views/$name-d$detail.bin"
    done
done
ls Fuzz/seeds/*/ | wc -l
