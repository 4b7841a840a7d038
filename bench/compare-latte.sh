#!/usr/bin/env bash
# Closed-loop YCSB throughput against latte (a Cassandra benchmarking tool
# in Rust), on the same Cassandra node or ring: for each concurrency N,
# latte with N requests in flight (`-t T -p N/T`, T = min(2, N) threads,
# 2 connections per node) running bench/latte/ycsb.rn, and Headroom's
# closed loop with N clients running bench/cassandra-ycsb.yaml (cassandra
# target, 2 connections per node). Both use tables of the same shape and
# size (100,000 records of 10 x 100-byte text fields, latte's in keyspace
# latte, Headroom's in keyspace headroom), uniform keys, reads of all
# fields and updates of one field, prepared statements at QUORUM, and run
# one after the other on the same node(s). Prints each tool's ok/s and p99
# and Headroom / latte. Goal: at least 0.90 at every N. See
# docs/performance.md.
#
#   bash bench/compare-latte.sh [nodes]          (default 1; 3 = a 3-node ring)
#
# Environment: CLIENTS (default "1 4 16 64"), MEASURE (seconds per run,
# default 10), ROUNDS (default 2; the table shows medians), READ_PCT
# (default 50: YCSB A's mix; 100: read-only, YCSB C), HEAP (per node,
# default 1024M), PROFILE (see headroom_run), WARMUP, WARM_TOL and
# WARMUP_MAX (unmeasured passes of each tool before the rounds: at least
# WARMUP, default 3, until latte's throughput moves by at most WARM_TOL
# percent, default 5, from one pass to the next, at most WARMUP_MAX,
# default 10), PROTO (the CQL protocol version
# Headroom speaks: default 4, the only one latte's driver speaks; 0
# negotiates, which is 5 on Cassandra 5.0 and makes the node checksum
# every segment of frames), NODE_CPUS and CLIENT_CPUS (taskset CPU lists:
# NODE_CPUS=0 CLIENT_CPUS=1 keeps the node(s) on the first core and each
# tool on the second, so that a tool's own CPU does not come out of the
# server's; default: both share every core).
# Experiments (docs/performance.md (g)): ALT_BIN (another headroom build)
# and/or ALT_ENV (environment for it, e.g. "GOGC=100") add a third run to
# every round, first in odd rounds and last in even ones, printed beside
# the others; SYSCALLS=1 counts each Headroom run's write and read system
# calls (perf stat) and prints them per request; NODE_VIEW=1 prints the
# node's own latencies per table after every tool's run (bench/cqlviews).
# Every run also reads the node JVMs' CPU time (/proc/PID/stat) before and
# after it and prints the node(s)' CPU per request and how busy they were
# (CPU seconds over the run's wall time: start-up, warm-up and measured
# phase), so that a tool that is slower to send can be told from a node
# that does more work per request for it.
# BRACKET=1 runs the tool that goes first in a round also last and takes
# the means of its two runs (see the loop below).
# NODE_SYSCALLS=1 counts the node(s)' read, write and epoll_wait system
# calls per request (perf stat on the JVMs).
# Replication factor: min(3, nodes).
#
# The script runs its own Cassandra 5.0 node(s) from Headroom's jar cache
# (`make deps` fetches them) with AllowAllAuthenticator on 127.0.0.1,
# 127.0.0.2, ..., so that both tools connect without a login, and removes
# them at the end. Headroom's managed target would make its own role and
# drop the default one, which latte cannot log in as without the password.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build
nodes="${1:-1}"
clients="${CLIENTS:-1 4 16 64}"
measure="${MEASURE:-10}"
rounds="${ROUNDS:-2}"
read_pct="${READ_PCT:-50}"
heap="${HEAP:-1024M}"
proto="${PROTO:-4}"
rows=100000
rf=$(( nodes < 3 ? nodes : 3 ))
node_pin=()
client_pin=()
[ -n "${NODE_CPUS:-}" ] && node_pin=(taskset -c "$NODE_CPUS")
[ -n "${CLIENT_CPUS:-}" ] && client_pin=(taskset -c "$CLIENT_CPUS")

latte=$(command -v latte || echo "$HOME/.cargo/bin/latte")
[ -x "$latte" ] || { echo "latte is not installed: cargo install latte-cli (0.29.0 was used)" >&2; exit 1; }
command -v java >/dev/null || { echo "java is not installed: apt-get install -y openjdk-17-jre-headless" >&2; exit 1; }
if [ "$(id -u)" = 0 ]; then cache=/var/cache/headroom/jars; else cache=$HOME/.cache/headroom/jars; fi
jars=${HEADROOM_JAR_CACHE:-$cache}/cassandra
ls "$jars"/cassandra-all-*.jar >/dev/null 2>&1 || { echo "the Cassandra jars are not in $jars: run make deps" >&2; exit 1; }
classpath=$(ls "$jars"/*.jar | sort | paste -sd:)

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
cql=$(free_port)
storage=$(free_port)
work=$(mktemp -d /tmp/headroom-latte.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	[ "${KEEP:-0}" = 1 ] && echo "kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT

# start_node I: node I on 127.0.0.I, seed 127.0.0.1; returns once its CQL
# port answers (Cassandra opens it after the node has joined the ring).
start_node() {
	local i=$1 dir=$work/node$1 addr=127.0.0.$1
	mkdir -p "$dir"/{data,commitlog,saved_caches,hints,cdc_raw,tmp}
	# The small-node settings of Headroom's managed recipe
	# (internal/deploy/cassandra.go), with no login.
	cat > "$dir/cassandra.yaml" <<-YAML
	cluster_name: "bench-latte"
	listen_address: $addr
	rpc_address: $addr
	storage_port: $storage
	native_transport_port: $cql
	start_native_transport: true
	seed_provider:
	  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
	    parameters:
	      - seeds: "127.0.0.1:$storage"
	partitioner: org.apache.cassandra.dht.Murmur3Partitioner
	data_file_directories: ["$dir/data"]
	commitlog_directory: $dir/commitlog
	saved_caches_directory: $dir/saved_caches
	hints_directory: $dir/hints
	cdc_raw_directory: $dir/cdc_raw
	authenticator: AllowAllAuthenticator
	authorizer: AllowAllAuthorizer
	num_tokens: 16
	allocate_tokens_for_local_replication_factor: 3
	endpoint_snitch: SimpleSnitch
	commitlog_sync: periodic
	commitlog_sync_period: 10000ms
	concurrent_compactors: 1
	key_cache_size: 16MiB
	counter_cache_size: 4MiB
	file_cache_size: 64MiB
	memtable_heap_space: 64MiB
	memtable_offheap_space: 64MiB
	YAML
	cat > "$dir/logback.xml" <<-'XML'
	<configuration scan="false">
	  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
	    <encoder><pattern>%-5level %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
	  </appender>
	  <root level="INFO"><appender-ref ref="STDOUT"/></root>
	</configuration>
	XML
	"${node_pin[@]}" java -Xms"$heap" -Xmx"$heap" -Xss256k -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -XX:-UsePerfData \
		-Djava.net.preferIPv4Stack=true -Djava.security.manager=allow \
		--add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-exports java.base/jdk.internal.ref=ALL-UNNAMED \
		--add-exports java.rmi/sun.rmi.registry=ALL-UNNAMED --add-opens java.base/java.io=ALL-UNNAMED \
		-Djava.io.tmpdir="$dir/tmp" -Dcassandra.config="file://$dir/cassandra.yaml" \
		-Dlogback.configurationFile="file://$dir/logback.xml" -Dcassandra.logdir="$dir" \
		-Dcassandra-foreground=yes -Dcassandra.ring_delay_ms=3000 -Dcassandra.skip_wait_for_gossip_to_settle=0 \
		-Dcassandra.jmx.local.port="$(free_port)" -Dcassandra.superuser_setup_delay_ms=1000 \
		-cp "$classpath" org.apache.cassandra.service.CassandraDaemon > "$dir/server.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 240); do
		python3 -c "import socket; socket.create_connection(('$addr', $cql), 1)" 2>/dev/null && return 0
		kill -0 "${pids[-1]}" 2>/dev/null || break
		sleep 0.5
	done
	echo "node $i did not start; the end of its log:" >&2
	tail -n 20 "$dir/server.log" >&2
	return 1
}

for i in $(seq "$nodes"); do
	start_node "$i"
	echo "node $i up on 127.0.0.$i:$cql" >&2
done
hosts=$(seq -s, -f "127.0.0.%g:$cql" "$nodes")
first=127.0.0.1:$cql
# node_cpu: the node JVMs' user + system CPU so far, in seconds.
tick=$(getconf CLK_TCK)
node_cpu() {
	local t=0 p f
	for p in "${pids[@]}"; do
		# fields 14 and 15 are utime and stime; field 2, the command name,
		# has no spaces here (java)
		read -r -a f < "/proc/$p/stat" 2>/dev/null || continue
		t=$(( t + f[13] + f[14] ))
	done
	python3 -c "print($t / $tick)"
}
# measured TOOL N: runs TOOL_run N with its output in $work/out.txt and
# the node(s)' CPU seconds and the wall seconds it took in $work/node.txt.
# NODE_SYSCALLS=1 also counts the node(s)' read, write and epoll_wait
# system calls over the run (perf stat on the JVMs) and prints them per
# request.
measured() {
	local c0 c1 w0 w1 perf=
	if [ "${NODE_SYSCALLS:-}" = 1 ]; then
		perf stat -x, -e syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_epoll_wait \
			-p "$(IFS=,; echo "${pids[*]}")" -o "$work/node-perf.txt" &
		perf=$!
	fi
	c0=$(node_cpu) w0=$(date +%s.%N)
	"$1_run" "$2" > "$work/out.txt"
	c1=$(node_cpu) w1=$(date +%s.%N)
	python3 -c "print($c1 - $c0, $w1 - $w0)" > "$work/node.txt"
	if [ -n "$perf" ]; then
		kill -INT "$perf"; wait "$perf" || true
		python3 - "$work/node-perf.txt" "$(cut -d' ' -f1 "$work/out.txt")" "$measure" "$1" "$2" <<'PY' >&2
import sys
c = {}
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    if len(f) > 2 and f[2].startswith("syscalls:sys_enter_"):
        c[f[2][len("syscalls:sys_enter_"):]] = int(f[0])
reqs = max(float(sys.argv[2]) * (2 + float(sys.argv[3])), 1)
print("N=%s %s: node system calls per request: %s" % (sys.argv[5], sys.argv[4], ", ".join("%s %.2f" % (k, v / reqs) for k, v in sorted(c.items()))))
PY
	fi
}
lat() { (cd "$work" && "${client_pin[@]}" "$latte" "$@" -P rows=$rows -P read_pct="$read_pct" -P rf=$rf); }
lat schema "$PWD/bench/latte/ycsb.rn" "$first" > "$work/latte-schema.log" 2>&1 ||
	{ cat "$work/latte-schema.log" >&2; exit 1; }
lat load -q -t 2 --concurrency 64 --consistency QUORUM "$PWD/bench/latte/ycsb.rn" "$first" > "$work/latte-load.log" 2>&1 ||
	{ cat "$work/latte-load.log" >&2; exit 1; }

ycsb=a
[ "$read_pct" = 100 ] && ycsb=c
[ "$read_pct" = 50 ] || [ "$read_pct" = 100 ] || { echo "READ_PCT must be 50 or 100 (YCSB A or C)" >&2; exit 1; }

# latte_run N: prints "ok_per_s p99_ms errors cpu_us_per_request"
latte_run() {
	local n=$1 t=1
	[ "$n" -ge 2 ] && t=2
	rm -f "$work/latte.json"
	lat run -q -t "$t" -p $(( n / t )) -c 2 --consistency QUORUM -w 2s -d "${measure}s" \
		-o "$work/latte.json" "$PWD/bench/latte/ycsb.rn" "$first" > "$work/latte-run.log" 2>&1 ||
		{ cat "$work/latte-run.log" >&2; return 1; }
	python3 - "$work/latte.json" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
r = rep["result"]
# latte's requests/s over the measured phase, and the 99th percentile of
# its request latency histogram (ms), at the index of 99 in its list
req = r["req_throughput"]["value"]
p99 = r["request_latency"]["percentiles"][rep["percentiles"].index(99.0)]["value"]
# client CPU (user + system of the latte process over the measured phase)
# per request, in microseconds
cpu = r["cpu_time_s"] / r["request_count"] * 1e6
print(req, p99, r["error_count"], cpu)
PY
}

# headroom_run N: prints "ok_per_s p99_ms errors cpu_us_per_request"
# PROFILE=DIR records each measured Headroom run with perf (perf record -g,
# DIR/headroom-N.data; read it with perf report -i), to see where its time
# goes; the profiler costs some throughput, so do not compare such runs.
populate=true
prof=()
headroom_run() {
	[ -n "${PROFILE:-}" ] && [ "$populate" = false ] && prof=(perf record -q -g -F 499 -o "$PROFILE/headroom-$1.data" --)
	[ "${SYSCALLS:-}" = 1 ] && [ "$populate" = false ] && prof=(perf stat -x, -e syscalls:sys_enter_write,syscalls:sys_enter_read -o "$work/perf.txt" --)
	rm -f "$work/perf.txt"
	sed -e "s/^  hosts: .*/  hosts: [${hosts//,/, }]/" -e "s/^  replication_factor: .*/  replication_factor: $rf/" \
		-e "s/^  protocol_version: .*/  protocol_version: $proto/" \
		-e "s/^  ycsb: .*/  ycsb: $ycsb/" -e "s/^  clients: .*/  clients: [$1]/" \
		-e "s/^  populate: .*/  populate: $populate/" -e "s/^  measure: .*/  measure: ${measure}s/" \
		bench/cassandra-ycsb.yaml > "$work/spec.yaml"
	populate=false
	rm -rf "$work/hr"
	env ${HR_ENV:-} "${client_pin[@]}" "${prof[@]}" "${HR_BIN:-bin/headroom}" run -q -o "$work/hr" "$work/spec.yaml" > /dev/null 2> "$work/hr.err" ||
		{ cat "$work/hr.err" >&2; return 1; }
	local dir
	dir=$(ls -d "$work"/hr/bench-cassandra-*)
	bin/headroom export -t runs "$dir" > "$work/runs.csv"
	bin/headroom export -t intervals "$dir" > "$work/intervals.csv"
	python3 - "$work/runs.csv" "$work/intervals.csv" "$work/perf.txt" "$measure" <<'PY'
import csv, os, sys
run = next(csv.DictReader(open(sys.argv[1])))
# p99 over all operations of the measured phase: the count-weighted mean of
# the per-interval, per-operation p99s (as compare-pgbench.sh does).
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r.get("phase", "measure") == "measure" and r["count"] not in ("", "0")]
n = sum(int(r["count"]) for r in rows)
p99 = sum(int(r["count"]) * int(r["p99_us"]) for r in rows) / n / 1000
# client CPU per request in microseconds: the process's CPU share of one
# core over the measured phase, divided by the request rate
cpu = float(run["client_cpu_pct"]) / 100 / float(run["throughput"]) * 1e6
# system calls per request (SYSCALLS=1): over the whole process, so over
# the warm-up and the measured phase (2 + MEASURE seconds of requests at
# about the measured rate)
sc = {"write": 0, "read": 0}
if os.path.exists(sys.argv[3]):
    for line in open(sys.argv[3]):
        f = line.strip().split(",")
        if len(f) > 2 and f[2].startswith("syscalls:sys_enter_"):
            sc[f[2][len("syscalls:sys_enter_"):]] = int(f[0])
reqs = max(float(run["throughput"]) * (2 + float(sys.argv[4])), 1)
print(run["throughput"], p99, run["errors"], cpu, sc["write"] / reqs, sc["read"] / reqs)
PY
}

# First passes of each tool at N = 64, not measured: Headroom loads its
# table, and the node's JIT compiles the read and write paths. On a cold
# node the first runs go at half the speed of later ones, and after one
# pass each the node still sped up from run to run, so that whichever tool
# went second was favoured. At least WARMUP passes (default 3), then more
# until latte's throughput in a pass is within WARM_TOL percent (default
# 5) of the pass before, at most WARMUP_MAX passes (default 10): on a
# slower machine (2026-12-01) the node was still 1.5 times faster in the
# third measured round than in the second after three passes.
prev=0 pass=0
while :; do
	pass=$((pass + 1))
	read -r wt _ < <(latte_run 64)
	headroom_run 64 > /dev/null
	printf 'warm-up pass %d: latte %.0f ok/s at N = 64\n' "$pass" "$wt" >&2
	steady=$(python3 -c "print(int($prev > 0 and abs($wt - $prev) <= ${WARM_TOL:-5} / 100 * $prev))")
	prev=$wt
	[ "$pass" -ge "${WARMUP:-3}" ] && [ "$steady" = 1 ] && break
	if [ "$pass" -ge "${WARMUP_MAX:-10}" ]; then
		echo "warm-up: latte's throughput still moved by more than ${WARM_TOL:-5}% after $pass passes; the rounds may favour the tool that goes second" >&2
		break
	fi
done
echo "warmed up after $pass passes" >&2

# alt_run N ROUND: the ALT_BIN / ALT_ENV run of this round, if asked for.
alt_run() {
	[ -n "${ALT_BIN:-}${ALT_ENV:-}" ] || return 0
	local at ap ae ac aw ar anc anw
	HR_BIN="${ALT_BIN:-bin/headroom}" HR_ENV="${ALT_ENV:-}" measured headroom "$1"
	read -r at ap ae ac aw ar < "$work/out.txt"
	read -r anc anw < "$work/node.txt"
	local anu
	anu=$(python3 -c "print($anc / ($at * (2 + $measure)) * 1e6)")
	echo "$2 $1 $at $ap $ac $aw $anu" >> "$work/alt.txt"
	printf 'round %d N=%-3d alt (%s %s) %7.0f ok/s p99 %.2f ms cpu %.1f µs/request %.2f writes/request, node CPU %.1f µs/request\n' \
		"$2" "$1" "${ALT_BIN:-bin/headroom}" "${ALT_ENV:-}" "$at" "$ap" "$ac" "$aw" "$anu" >&2
}

# node_view ROUND N TOOL: the node's own latencies per table (NODE_VIEW=1).
node_view() {
	[ "${NODE_VIEW:-}" = 1 ] || return 0
	echo "round $1 N=$2 after $3:" >&2
	"$work/cqlviews" "$first" >&2
}
[ "${NODE_VIEW:-}" = 1 ] && go build -o "$work/cqlviews" ./bench/cqlviews

# one TOOL N: a measured run of TOOL, its figures and the node(s)' CPU and
# wall seconds appended to $work/TOOL.runs.
one() {
	measured "$1" "$2"
	echo "$(cat "$work/out.txt") $(cat "$work/node.txt")" >> "$work/$1.runs"
	printf '%s %.0f  ' "$1" "$(cut -d' ' -f1 "$work/out.txt")" >> "$work/order.txt"
	node_view "$round" "$2" "$1"
}
# mean FILE: the column means of FILE's lines, but the sum of the third
# column (errors).
mean() {
	python3 - "$1" <<'PY'
import sys
rows = [[float(x) for x in l.split()] for l in open(sys.argv[1])]
out = [sum(c) / len(c) for c in zip(*rows)]
out[2] = sum(r[2] for r in rows)
print(*out)
PY
}

results=$work/results.txt
for round in $(seq "$rounds"); do
	for n in $clients; do
		# Alternate which tool goes first, so that neither always meets the
		# compactions the other's writes left behind. BRACKET=1: the tool
		# that goes first also goes last, and its figures are the means of
		# its two runs, which cancels a node that speeds up (or slows down)
		# steadily through the round.
		rm -f "$work/latte.runs" "$work/headroom.runs" "$work/order.txt"
		if [ $(( round % 2 )) = 1 ]; then
			alt_run "$n" "$round"
			one latte "$n"
			one headroom "$n"
			[ "${BRACKET:-}" = 1 ] && one latte "$n"
		else
			one headroom "$n"
			one latte "$n"
			[ "${BRACKET:-}" = 1 ] && one headroom "$n"
			alt_run "$n" "$round"
		fi
		read -r lt lp le lc lnc lnw < <(mean "$work/latte.runs")
		read -r ht hp he hc hw hr hnc hnw < <(mean "$work/headroom.runs")
		printf 'round %d N=%-3d runs in order (ok/s): %s\n' "$round" "$n" "$(cat "$work/order.txt")" >&2
		[ "${SYSCALLS:-}" = 1 ] && printf 'round %d N=%-3d headroom: %.2f writes and %.2f reads per request\n' "$round" "$n" "$hw" "$hr" >&2
		# node CPU µs per request (the run's requests: its measured rate over
		# warm-up and measured phase, as for SYSCALLS) and busy share
		read -r lnu lnb hnu hnb < <(python3 -c "
w = 2 + $measure
print($lnc / ($lt * w) * 1e6, $lnc / $lnw, $hnc / ($ht * w) * 1e6, $hnc / $hnw)")
		printf 'round %d N=%-3d node CPU: latte %.1f µs/request (busy %.2f cores), headroom %.1f µs/request (busy %.2f cores)\n' \
			"$round" "$n" "$lnu" "$lnb" "$hnu" "$hnb" >&2
		echo "$round $n $lt $lp $le $ht $hp $he $lc $hc $lnu $hnu" >> "$results"
		printf 'round %d N=%-3d latte %7.0f ok/s   headroom %7.0f ok/s\n' "$round" "$n" "$lt" "$ht" >&2
	done
done

python3 - "$results" "$nodes" "$rf" "$read_pct" "$measure" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by_n = {}
for r in rows:
    by_n.setdefault(int(r[1]), []).append([float(x) for x in r[2:]])
print("%s node(s), replication factor %s, %s%% reads, %s s measured, median of %d round(s); p99 in ms, client CPU in µs per request"
      % (sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], len({r[0] for r in rows})))
print("%4s %11s %11s %6s %9s %9s %7s %7s %9s %9s %9s %9s" % ("N", "latte ok/s", "hr ok/s", "ratio", "latte p99", "hr p99", "lt err", "hr err", "latte cpu", "hr cpu", "node/lt", "node/hr"))
for n in sorted(by_n):
    v = by_n[n]  # latte ok/s, p99, errors, headroom ok/s, p99, errors, latte cpu, headroom cpu, node cpu for latte, for headroom
    med = lambda i: statistics.median(x[i] for x in v)
    ratio = statistics.median(x[3] / x[0] for x in v)
    print("%4d %11.0f %11.0f %6.2f %9.2f %9.2f %7d %7d %9.1f %9.1f %9.1f %9.1f" % (n, med(0), med(3), ratio, med(1), med(4), sum(x[2] for x in v), sum(x[5] for x in v), med(6), med(7), med(8), med(9)))
print("ratio: median over rounds of Headroom / latte in the same round; errors: summed over rounds; node/lt, node/hr: the node(s)' CPU µs per request in each tool's runs")
PY
