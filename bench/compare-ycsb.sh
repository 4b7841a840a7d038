#!/usr/bin/env bash
# Harness overhead against YCSB 0.17.0, in one run: YCSB's own client with
# its no-op binding (site.ycsb.BasicDB) and Headroom's closed loop with the
# null target, both running workload A (zipfian, 10 fields x 100 bytes)
# with one client thread. Prints throughput per wall second and per
# CPU-second of each, and Headroom's ratio. See docs/performance.md.
#
#   bash bench/compare-ycsb.sh [ycsb_operationcount]
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build
ops="${1:-50000000}"

ycsb_line=$(bash bench/ycsb/run.sh "$ops" 1 | tail -n 1)
echo "$ycsb_line"

out=$(mktemp -d)
bin/headroom run -q -o "$out" bench/null-closed.yaml > "$out/summary.txt"
dir=$(ls -d "$out"/bench-null-closed-*)
hr_line=$(bin/headroom export -t runs "$dir" | python3 -c '
import csv, sys
r = next(csv.DictReader(sys.stdin))
tput = float(r["throughput"]); cpu = float(r["client_cpu_pct"]) / 100
print("headroom ops=%s measure_s=%s cpu_cores=%.3f throughput=%.0f ops_per_cpu_s=%.0f" % (r["completed"], r["measure_secs"], cpu, tput, tput / cpu))
')
echo "$hr_line"
rm -rf "$out"

python3 - "$ycsb_line" "$hr_line" <<'PY'
import sys
def fields(line):
    return dict(kv.split("=", 1) for kv in line.split()[1:])
y, h = fields(sys.argv[1]), fields(sys.argv[2])
print("ratio throughput=%.2f ops_per_cpu_s=%.2f" % (
    float(h["throughput"]) / float(y["throughput"]),
    float(h["ops_per_cpu_s"]) / float(y["ops_per_cpu_s"])))
PY
