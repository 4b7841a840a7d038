#!/usr/bin/env bash
# Closed-loop GET throughput against redis-benchmark, on the same private
# redis-server: for each number of connections N, `redis-benchmark -t get
# -c N` (no pipelining, 100-byte values, 100000 keys) and Headroom's closed
# loop with N clients (bench/redis-get.yaml: mode string, so each request is
# one GET of a 100-byte value, 100000 records, uniform keys). The two run
# one after the other for each N, for several rounds, and the table shows
# the median of the rounds. Goal: Headroom reaches at least 90% of
# redis-benchmark's throughput at the same N. See docs/performance.md.
#
#   bash bench/compare-redis.sh [rounds]        (default 3)
#
# Environment: CLIENTS (default "1 4 16 64"), MEASURE (seconds per run,
# default 10), PIN=1 to pin redis-server to CPU 0 and the load generator
# (either tool) to CPU 1.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build
rounds="${1:-3}"
clients="${CLIENTS:-1 4 16 64}"
measure="${MEASURE:-10}"
keys=100000

for p in redis-server redis-benchmark redis-cli; do
	command -v "$p" >/dev/null || { echo "$p is not installed: apt-get install -y redis-server redis-tools" >&2; exit 1; }
done

srv_cpu=() cli_cpu=()
if [ "${PIN:-0}" = 1 ]; then
	srv_cpu=(taskset -c 0) cli_cpu=(taskset -c 1)
fi

work=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${srv_cpu[@]}" redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
	--daemonize no --dir "$work" --logfile "$work/redis.log" &
srv=$!
trap 'kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do
	redis-cli -p "$port" ping >/dev/null 2>&1 && break
	sleep 0.1
done

# redis-benchmark's keys (key:000000000000 ... with -r) in db 0, every one
# present so that each GET returns a value; Headroom's records go to db 1.
python3 - "$keys" <<'PY' | redis-cli -p "$port" --pipe >/dev/null
import sys
val = "x" * 100
out = sys.stdout
for i in range(int(sys.argv[1])):
    k = "key:%012d" % i
    out.write("*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$100\r\n%s\r\n" % (len(k), k, val))
PY

spec_for() { # clients populate
	sed -e "s/^  address: .*/  address: 127.0.0.1:$port/" \
		-e "s/^  clients: .*/  clients: [$1]/" \
		-e "s/^  populate: .*/  populate: $2/" \
		-e "s/^  measure: .*/  measure: ${measure}s/" bench/redis-get.yaml > "$work/spec.yaml"
}

# redis_benchmark N COUNT: prints "rps p50_ms p99_ms cpu_s"
redis_benchmark() {
	local line t
	t=$( { /usr/bin/time -f "%U %S" "${cli_cpu[@]}" redis-benchmark -p "$port" -t get -c "$1" -n "$2" \
		-d 100 -r "$keys" -P 1 --csv > "$work/rb.csv"; } 2>&1 )
	line=$(tail -n 1 "$work/rb.csv")
	python3 - "$line" "$t" <<'PY'
import sys
f = [x.strip('"') for x in sys.argv[1].split(",")]
u, s = map(float, sys.argv[2].split()[-2:])
print(f[1], f[4], f[6], u + s)
PY
}

# headroom_run N: prints "throughput p50_ms p99_ms cpu_s secs delay_p50_ms delay_p99_ms"
populate=true
headroom_run() {
	spec_for "$1" "$populate"
	populate=false
	rm -rf "$work/hr"
	"${cli_cpu[@]}" bin/headroom run -q -o "$work/hr" "$work/spec.yaml" > /dev/null 2> "$work/hr.err" ||
		{ cat "$work/hr.err" >&2; return 1; }
	local dir
	dir=$(ls -d "$work"/hr/bench-redis-get-*)
	{ bin/headroom export -t runs "$dir"; echo ---; bin/headroom report "$dir"; } | python3 -c '
import csv, re, sys
text = sys.stdin.read()
runs, report = text.split("---\n", 1)
r = next(csv.DictReader(runs.splitlines()))
unit = {"ns": 1e-6, "µs": 1e-3, "ms": 1.0, "s": 1e3}
def ms(v):
    m = re.fullmatch(r"([0-9.]+)(ns|µs|ms|s)", v)
    return float(m.group(1)) * unit[m.group(2)]
row = next(l.split() for l in report.splitlines() if l.split()[:1] == ["read"])
# columns: op ok/run mean p50 p95 p99 max
cpu = float(r["client_cpu_pct"]) / 100 * float(r["measure_secs"])
# "client-side delay p50 X · p99 Y": the engine own scheduling delay
d = re.search(r"client-side delay p50 (\S+) · p99 (\S+)", report)
d50, d99 = (ms(d.group(1)), ms(d.group(2))) if d else (float("nan"), float("nan"))
print(r["throughput"], ms(row[3]), ms(row[5]), cpu, float(r["measure_secs"]), d50, d99)
'
}

results="$work/results.txt"
for round in $(seq "$rounds"); do
	for n in $clients; do
		# A short run to warm up and size the measured one to about $measure s.
		read -r rps _ _ _ < <(redis_benchmark "$n" 20000)
		count=$(python3 -c "print(max(20000, int($rps * $measure)))")
		read -r rb_rps rb_p50 rb_p99 rb_cpu < <(redis_benchmark "$n" "$count")
		read -r hr_tput hr_p50 hr_p99 hr_cpu hr_secs hr_d50 hr_d99 < <(headroom_run "$n")
		echo "$round $n $rb_rps $rb_p50 $rb_p99 $rb_cpu $count $hr_tput $hr_p50 $hr_p99 $hr_cpu $hr_secs $hr_d50 $hr_d99" >> "$results"
		printf 'round %d N=%-3d redis-benchmark %9.0f ops/s   headroom %9.0f ops/s\n' "$round" "$n" "$rb_rps" "$hr_tput" >&2
	done
done

python3 - "$results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by_n = {}
for r in rows:
    by_n.setdefault(int(r[1]), []).append([float(x) for x in r[2:]])
print("median of %d rounds; latencies in ms; CPU in microseconds of client CPU time per request" % len({r[0] for r in rows}))
print("%4s %14s %14s %6s %8s %8s %8s %8s %8s %8s %8s %8s %6s" % ("N", "rb ops/s", "headroom ops/s", "ratio", "rb p50", "rb p99", "hr p50", "hr p99", "rb cpu", "hr cpu", "delay50", "delay99", "share"))
for n in sorted(by_n):
    v = by_n[n]  # rb_rps rb_p50 rb_p99 rb_cpu count hr_tput hr_p50 hr_p99 hr_cpu hr_secs delay_p50 delay_p99
    med = lambda i: statistics.median(x[i] for x in v)
    ratio = statistics.median(x[5] / x[0] for x in v)
    rb_cpu = statistics.median(x[3] / x[4] * 1e6 for x in v)
    hr_cpu = statistics.median(x[8] / (x[5] * x[9]) * 1e6 for x in v)
    share = statistics.median(x[11] / x[7] for x in v)
    print("%4d %14.0f %14.0f %6.2f %8.3f %8.3f %8.3f %8.3f %8.1f %8.1f %8.3f %8.3f %5.0f%%" % (
        n, med(0), med(5), ratio, med(1), med(2), med(6), med(7), rb_cpu, hr_cpu, med(10), med(11), 100 * share))
print("ratio: median over rounds of headroom / redis-benchmark in the same round")
print("delay50/99: Headroom's client-side delay (its goroutines' wait for a processor, docs/measurement.md);")
print("share: median over rounds of delay p99 / Headroom's p99")
PY
