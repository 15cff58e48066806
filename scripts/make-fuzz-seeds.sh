#!/usr/bin/env bash
# Makes the fuzzers' seed corpora from samples/: each TCP stream's payload bytes (both
# directions, as tshark follows them) for the mqtt and amqp targets, and the small captures
# themselves for the pipeline target. Needs tshark.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p Fuzz/seeds/mqtt Fuzz/seeds/amqp Fuzz/seeds/pipeline
for f in samples/*.pcap; do
    name=$(basename "$f" .pcap)
    size=$(stat -c %s "$f")
    [ "$size" -le 65536 ] && cp "$f" "Fuzz/seeds/pipeline/$name.pcap"
    case "$name" in amqp*) target=amqp ;; *) target=mqtt ;; esac
    streams=$(tshark -r "$f" -T fields -e tcp.stream 2>/dev/null | sort -un | head -5)
    for s in $streams; do
        # Raw follow output: hex lines, server→client ones indented by a tab; one seed per stream.
        tshark -r "$f" -q -z "follow,tcp,raw,$s" 2>/dev/null | grep -E '^\s*[0-9a-f]+$' | tr -d ' \t\n' \
            | xxd -r -p > "Fuzz/seeds/$target/$name-$s.full"
        # Small seeds keep the fuzzers fast; the start of a stream holds its handshake.
        head -c 4096 "Fuzz/seeds/$target/$name-$s.full" > "Fuzz/seeds/$target/$name-$s.bin"
        rm -f "Fuzz/seeds/$target/$name-$s.full"
        [ -s "Fuzz/seeds/$target/$name-$s.bin" ] || rm -f "Fuzz/seeds/$target/$name-$s.bin"
    done
done
ls Fuzz/seeds/* | head -50
