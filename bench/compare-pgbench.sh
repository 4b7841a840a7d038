#!/usr/bin/env bash
# Select-by-primary-key throughput against the same PostgreSQL: pgbench's
# select-only transaction (pgbench -S) and Headroom's closed loop running
# the same statement (bench/pg-select.yaml), at the same concurrency, one
# after the other on a private cluster this script starts and removes.
# Prints, per number of clients N: pgbench's tps in prepared and simple
# mode, Headroom's requests/s (prepared mode), their ratio, and Headroom's
# per-request p50/p99. The goal is a ratio of at least 0.90. See
# docs/performance.md.
#
#   bash bench/compare-pgbench.sh [seconds per run] [scale] [clients...]
#
# Defaults: 20 s, scale 10 (1,000,000 accounts), clients 1 4 16 32.
# PIN=1 pins the server to CPU 0 and the load generators (pgbench, Headroom)
# to CPU 1, so that neither tool takes CPU from the server.
# Needs the postgresql and postgresql-contrib packages (pgbench); run as
# root (the cluster runs as user postgres) or as a user who may run initdb.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build
secs="${1:-20}"
scale="${2:-10}"
shift $(( $# > 2 ? 2 : $# ))
clients=("${@:-1 4 16 32}")
read -r -a clients <<< "${clients[*]}"

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$bindir" ] || ! command -v pgbench >/dev/null; then
  echo "PostgreSQL is not installed: apt-get install -y postgresql postgresql-contrib" >&2
  exit 1
fi

srv_cpu=() cli_cpu=()
if [ "${PIN:-0}" = 1 ]; then
  srv_cpu=(taskset -c 0) cli_cpu=(taskset -c 1)
fi

tmp=$(mktemp -d /tmp/headroom-pgbench.XXXXXX)
chmod 755 "$tmp"
as=()
if [ "$(id -u)" = 0 ]; then
  chown postgres: "$tmp"
  as=(runuser -u postgres --)
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cleanup() {
  "${as[@]}" "$bindir/pg_ctl" -D "$tmp/data" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

"${as[@]}" "$bindir/initdb" -D "$tmp/data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync >/dev/null
# shared_buffers holds the whole data set at scale 10 (about 160 MB), so
# both tools measure the same cached reads.
"${srv_cpu[@]}" "${as[@]}" "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w -o \
  "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$tmp -c shared_buffers=384MB -c max_connections=100" \
  start >/dev/null
export PGHOST=127.0.0.1 PGPORT=$port PGUSER=postgres
psql -q -d postgres -c "CREATE DATABASE bench" >/dev/null
pgbench -i -q -s "$scale" bench 2>&1 | tail -n 1
accounts=$((100000 * scale))

cp bench/pgbench-schema.sql "$tmp/"
pgb() { # mode clients -> tps
  "${cli_cpu[@]}" pgbench -S -M "$1" -c "$2" -j "$(( $2 < 2 ? $2 : 2 ))" -T "$secs" bench 2>/dev/null |
    sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}
hr() { # clients -> "throughput p50_us p99_us"
  sed -e "s/^  port: 5432 .*/  port: $port/" -e "s/uniform: \[1, 1000000\]/uniform: [1, $accounts]/" \
      -e "s/^  clients: \[1\] .*/  clients: [$1]/" -e "s/^  measure: 20s/  measure: ${secs}s/" \
      -e "s#^output: .*#output: $tmp/out#" bench/pg-select.yaml > "$tmp/pg-select.yaml"
  rm -rf "$tmp/out"
  "${cli_cpu[@]}" bin/headroom run -q "$tmp/pg-select.yaml" > "$tmp/summary.txt" 2>"$tmp/stderr.txt" || { cat "$tmp/stderr.txt" >&2; exit 1; }
  dir=$(ls -d "$tmp"/out/bench-pg-select-*)
  bin/headroom export -t runs "$dir" > "$tmp/runs.csv"
  bin/headroom export -t intervals "$dir" > "$tmp/intervals.csv"
  bin/headroom report "$dir" > "$tmp/report.txt"
  python3 - "$tmp/runs.csv" "$tmp/intervals.csv" "$tmp/report.txt" <<'PY'
import csv, re, sys
run = next(csv.DictReader(open(sys.argv[1])))
# Per-request percentiles of the measured phase: the count-weighted mean
# of the per-second interval percentiles (the store keeps each interval's
# histogram; this is close to the merged percentile when intervals agree).
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r.get("phase", "measure") == "measure" and r["count"] not in ("", "0")]
n = sum(int(r["count"]) for r in rows)
p50 = sum(int(r["count"]) * int(r["p50_us"]) for r in rows) / n
p99 = sum(int(r["count"]) * int(r["p99_us"]) for r in rows) / n
# The engine's client-side delay (docs/measurement.md), from the summary.
unit = {"ns": 1e-3, "µs": 1.0, "ms": 1e3, "s": 1e6}
us = lambda v: float(v[0]) * unit[v[1]]
d = re.search(r"client-side delay p50 ([0-9.]+)(ns|µs|ms|s) · p99 ([0-9.]+)(ns|µs|ms|s)", open(sys.argv[3]).read())
d50, d99 = (us(d.group(1, 2)), us(d.group(3, 4))) if d else (float("nan"), float("nan"))
print("%s %.0f %.0f %s %.0f %.0f" % (run["throughput"], p50, p99, run["errors"], d50, d99))
PY
}

printf "%-4s %14s %14s %14s %7s %9s %9s %6s %9s %9s %6s\n" N pgbench_prep pgbench_simple headroom ratio p50_us p99_us errors delay50 delay99 share
for n in "${clients[@]}"; do
  tp=$(pgb prepared "$n")
  ts=$(pgb simple "$n")
  read -r th p50 p99 errs d50 d99 <<< "$(hr "$n")"
  printf "%-4s %14.0f %14.0f %14.0f %7.2f %9s %9s %6s %9s %9s %5.0f%%\n" "$n" "$tp" "$ts" "$th" \
    "$(python3 -c "print($th / $tp)")" "$p50" "$p99" "$errs" "$d50" "$d99" "$(python3 -c "print(100 * $d99 / $p99)")"
done
