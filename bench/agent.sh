#!/usr/bin/env bash
# Load agent capacity on one core: runs bench/agent-null.yaml (one local
# agent) with GOMAXPROCS=1, coordinator and agent pinned to one CPU, and
# prints per offered rate the achieved rate, the late and dropped shares
# and the agent's CPU use. The coordinator only merges one interval a
# second, so the CPU is the agent's.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build
out=$(mktemp -d)
GOMAXPROCS=1 taskset -c 1 bin/headroom run -q -o "$out" bench/agent-null.yaml > "$out/summary.txt"
dir=$(ls -d "$out"/bench-agent-null-*)
bin/headroom export -t runs "$dir" | python3 -c '
import csv, sys
rows = sorted(csv.DictReader(sys.stdin), key=lambda r: float(r["level"]))
print("%12s %12s %8s %8s %8s" % ("offered/s", "achieved/s", "late%", "drop%", "cpu%"))
for r in rows:
    offered = int(r["sent"]) + int(r["dropped"])
    late = 100.0 * int(r["late"]) / offered
    drop = 100.0 * int(r["dropped"]) / offered
    print("%12.0f %12.0f %8.3f %8.3f %8.1f" % (float(r["level"]), float(r["throughput"]), late, drop, float(r["client_cpu_pct"])))
'
rm -rf "$out"
