#!/usr/bin/env bash
# Which objects proto-dissect counts references on: every swift_retain and swift_release of one
# run, grouped by the type of the object (its metadata pointer, named by gdb), most first. Atomic
# reference counting is about a third of the run's cycles (docs/performance.md, ninth session),
# spread over many callers; this says on what.
#
#   scripts/refcounts.sh CAPTURE [FORMAT] [TOP]    FORMAT: table (default), json or text; TOP: 25
#
# Runs the release build with one thread (`--threads 1`). Needs perf (with uprobes: run as root)
# and gdb. "nil or unreadable" counts calls on nil (cheap) and on values whose first word is not
# an object's metadata; the empty-array singleton is immortal (no atomic write).
set -euo pipefail
cd "$(dirname "$0")/.."
capture=${1:?usage: scripts/refcounts.sh CAPTURE [FORMAT] [TOP]}
format=${2:-table}
top=${3:-25}
command -v perf >/dev/null && command -v gdb >/dev/null || { echo "needs perf and gdb" >&2; exit 2; }
swift build -c release --product proto-dissect 2>&1 | grep -E "error|Build" >&2
bin=$(readlink -f "$(swift build -c release --show-bin-path)/proto-dissect")
work=$(mktemp -d)
cleanup() { perf probe -q -d 'probe_proto:*' 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
perf probe -q -d 'probe_proto:*' 2>/dev/null || true
for f in swift_retain swift_release; do
    perf probe -q -x "$bin" -a "$f obj=%di:u64 meta=+0(%di):u64" >/dev/null
done
perf record -q -e probe_proto:swift_retain -e probe_proto:swift_release -o "$work/perf.data" \
    "$bin" --threads 1 --format "$format" "$capture" >/dev/null 2>"$work/record.log"
perf script -i "$work/perf.data" -F event,ip,trace 2>/dev/null >"$work/calls"
# The binary's load address: a call's address less swift_retain's address in the file.
static=$(nm "$bin" | awk '$3 == "swift_retain" { print $1 }' | head -1)
python3 - "$work" "$static" "$bin" "$top" <<'EOF'
import collections, re, subprocess, sys
work, static, binary, top = sys.argv[1], int(sys.argv[2], 16), sys.argv[3], int(sys.argv[4])
counts = collections.Counter()
base = None
total = 0
for line in open(f"{work}/calls"):
    m = re.search(r"\(([0-9a-f]+)\).*meta=(\d+)", line)
    if not m:
        continue
    total += 1
    if base is None and "swift_retain" in line:
        base = int(m.group(1), 16) - static
    counts[int(m.group(2))] += 1
rows = counts.most_common(top)
names = {}
offsets = [meta - base for meta, _ in rows if meta and base is not None]
if offsets:
    args = []
    for off in offsets:
        args += ["-ex", f"info symbol {off:#x}"]
    out = subprocess.run(["gdb", "-batch", "-nx", *args, binary], capture_output=True, text=True).stdout
    lines = [l for l in out.splitlines() if l.strip() and not l.startswith(("During", "warning"))]
    symbols = [l.split(" in section")[0] for l in lines]
    demangled = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(symbols),
                               capture_output=True, text=True).stdout.splitlines()
    for off, name in zip(offsets, demangled):
        names[off] = name
print(f"{total} calls of swift_retain and swift_release")
for meta, n in rows:
    name = "nil or unreadable" if not meta else names.get(meta - base, "?")
    print(f"{n:>10}  {name}")
EOF
