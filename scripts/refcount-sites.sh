#!/usr/bin/env bash
# Where proto-dissect retains and releases objects: every swift_retain and swift_release of one
# run on an object (not nil), grouped by the object's type and the function that called, most
# first, after the total. scripts/refcounts.sh groups by type alone; this says which copy or
# destroy to look at. Each call is an atomic write, about 20 cycles and more on an object another
# core touched (docs/performance.md, thirteenth session), so the total is a measure of its own
# beside callgrind's instructions.
#
#   scripts/refcount-sites.sh CAPTURE [FORMAT] [TOP]    FORMAT: table (default), json or text; TOP: 40
#
# Runs the release build with one thread (`--threads 1`; THREADS=2 for two workers). Needs perf (with uprobes: run as root)
# and gdb. The calls are read as perf writes them, never stored as text (a run of 20,000 packets
# makes millions, gigabytes as text). BIN overrides the binary (another build, to compare);
# DEPTH=2 names each site's caller's caller too (`site < its caller`). SHARED=1 (with THREADS=2)
# keeps only the calls on objects whose address more than one thread counted: atomic writes on a
# cache line that goes between the cores (an address freed and reused by another thread's object
# counts too, and the runtime's immortal objects, such as the empty array, are counted though
# they are never written: an upper bound).
set -euo pipefail
cd "$(dirname "$0")/.."
capture=${1:?usage: scripts/refcount-sites.sh CAPTURE [FORMAT] [TOP]}
format=${2:-table}
top=${3:-40}
command -v perf >/dev/null && command -v gdb >/dev/null || { echo "needs perf and gdb" >&2; exit 2; }
if [ -z "${BIN:-}" ]; then
    swift build -c release --product proto-dissect 2>&1 | grep -E "error|Build" >&2
    BIN=$(swift build -c release --show-bin-path)/proto-dissect
fi
bin=$(readlink -f "$BIN")
work=$(mktemp -d)
cleanup() { perf probe -q -d 'pdrc:*' 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
perf probe -q -d 'pdrc:*' 2>/dev/null || true
perf probe -q -x "$bin" -a "pdrc:retain=swift_retain obj=%di:u64 meta=+0(%di):u64"
perf probe -q -x "$bin" -a "pdrc:release=swift_release obj=%di:u64 meta=+0(%di):u64"
perf record -q -g -e pdrc:retain -e pdrc:release -o "$work/perf.data" -- "$bin" --threads "${THREADS:-1}" --format "$format" "$capture" \
    >/dev/null 2>"$work/record.log"
# The binary's load address: a call's address less swift_retain's address in the file.
static=$(nm "$bin" | awk '$3 == "swift_retain" { print $1 }' | head -1)
perf script -i "$work/perf.data" -F tid,event,ip,sym,trace 2>/dev/null | python3 -c '
import collections, re, subprocess, sys
binary, static, top, depth, shared = sys.argv[1], int(sys.argv[2], 16), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
sites, types = collections.Counter(), collections.Counter()
# SHARED=1: per object address, the threads that counted it, and its calls by site.
threads, perobject = collections.defaultdict(set), collections.Counter()
event = meta = obj = tid = None
chain, base = [], None
# Copy and destroy helpers (outlined copies, value witnesses, the runtime array and tuple
# destroys) and the standard library say little: the caller named is the first frame above
# them, the first helper after "via".
helper = re.compile(r"(W[Oo][a-z]|w[A-Za-z]{2}|Wv[a-z]|_Tm)$|^(\$ss|swift_|tuple_|\[unknown\]|_swift_)")
def caller_of(chain):
    frames = chain[1:]
    named = [f for f in frames if not helper.search(f)][:depth]
    if not named:
        return frames[0] if frames else "?"
    return " < ".join(named) + ("" if named[0] == frames[0] else f" via {frames[0]}")
def flush():
    if event and meta:
        if shared:
            threads[obj].add(tid)
            perobject[(obj, event, meta, caller_of(chain))] += 1
        else:
            sites[(event, meta, caller_of(chain))] += 1
        types[meta] += 1
for line in sys.stdin:
    if "pdrc:" in line:
        flush()
        chain = []
        event = "retain " if "pdrc:retain" in line else "release"
        m = re.search(r"\(([0-9a-f]+)\).*obj=(\w+).*meta=(\d+)", line)
        meta = int(m.group(3)) if m else 0
        obj = m.group(2) if m else None
        tid = line.split()[0]
        if base is None and m and event == "retain ":
            base = int(m.group(1), 16) - static
    elif line.strip():
        parts = line.split()
        if len(parts) >= 2:
            chain.append(parts[1])
flush()
if shared:
    types = collections.Counter()
    for (o, e, mt, c), n in perobject.items():
        if len(threads[o]) > 1:
            sites[(e, mt, c)] += n
            types[mt] += n
metas = [m for m, _ in types.most_common(80)]
args = []
for m in metas:
    args += ["-ex", f"info symbol {m - base:#x}"]
out = subprocess.run(["gdb", "-batch", "-nx", *args, binary], capture_output=True, text=True).stdout
lines = [l for l in out.splitlines() if l.strip() and not l.startswith(("During", "warning"))]
names = {m: l.split(" in section")[0] for m, l in zip(metas, lines)}
rows = sites.most_common(top)
mangled = sorted({p for (_, _, c), _ in rows for p in re.split(" via | < ", c)} | set(names.values()))
demangled = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(mangled),
                           capture_output=True, text=True).stdout.splitlines()
plain = dict(zip(mangled, demangled))
print(f"{sum(sites.values())} retains and releases of objects" + (" counted by more than one thread" if shared else ""))
for (event, meta, caller), n in rows:
    kind = plain.get(names.get(meta, "?"), "?")
    named, _, via = caller.partition(" via ")
    where = " < ".join(plain.get(f, f)[:90] for f in named.split(" < "))
    if via:
        where += " via " + plain.get(via, via)[:60]
    print(f"{n:>9}  {event}  {kind[:44]:<44}  in {where}")
' "$bin" "$static" "$top" "${DEPTH:-1}" "${SHARED:-0}"
