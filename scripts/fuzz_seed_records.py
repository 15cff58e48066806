"""Writes one TCP connection as a fuzz input of the mqtt, amqp and views targets (the records of
Fuzz/Targets/FuzzedConnection.swift): a selector byte, then per segment a header byte (direction
bit 0x80, length 1-126, or 127 and a two-byte length) and the segment's bytes.

    tshark -r CAPTURE -q -z follow,tcp,raw,STREAM | fuzz_seed_records.py SELECTOR MAX_BYTES > SEED

Reads tshark's raw follow output: a hex line per segment, the server's indented by a tab. Whole
segments only, as many as fit in MAX_BYTES (at least the first, cut to fit). Writes nothing for a
connection without payload.
"""
import re
import sys


def main():
    selector, limit = int(sys.argv[1], 0), int(sys.argv[2])
    out = bytearray([selector])
    for line in sys.stdin:
        if not re.fullmatch(r"\t?[0-9a-f]+\n?", line):
            continue
        to_client = line.startswith("\t")
        data = bytes.fromhex(line.strip())
        while data:
            part, data = data[:65535], data[65535:]
            header = bytes([0x80 * to_client | len(part)]) if len(part) < 127 \
                else bytes([0x80 * to_client | 127, len(part) >> 8, len(part) & 0xFF])
            record = header + part
            if len(out) + len(record) > limit:
                if len(out) == 1:
                    out += record[:limit - 1]
                sys.stdout.buffer.write(out)
                return
            out += record
    if len(out) > 1:
        sys.stdout.buffer.write(out)


main()
