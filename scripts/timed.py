#!/usr/bin/env python3
"""timed.py FORMAT OUTFILE COMMAND...: runs COMMAND (its output to /dev/null) under
/usr/bin/time and writes to OUTFILE one line of FORMAT (%e wall seconds, %U user and %S system
CPU seconds, %M peak resident KB) with the wall time to the millisecond: /usr/bin/time gives %e
in hundredths, and a bare read of about 0.055 s shows as 0.05 or 0.06 (a ratio off by a tenth
either way). CPU and memory are /usr/bin/time's (a child spawned from Python would carry
Python's resident memory into its peak). Exits with the command's status."""
import os
import subprocess
import sys
import tempfile
import time

fmt, out, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
with tempfile.NamedTemporaryFile("r") as usage:
    start = time.perf_counter()
    status = subprocess.call(["/usr/bin/time", "-o", usage.name, "-f", "%U %S %M"] + cmd,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    user, system, peak = usage.read().split("\n")[-2].split()
values = {"e": f"{wall:.3f}", "U": user, "S": system, "M": peak}
line = fmt
for key, value in values.items():
    line = line.replace("%" + key, value)
with open(out, "w") as f:
    f.write(line + "\n")
sys.exit(status)
