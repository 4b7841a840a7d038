#!/usr/bin/env bash
# Closed-loop YCSB throughput against latte (a Cassandra benchmarking tool
# in Rust), on the same Cassandra node or ring: for each concurrency N,
# latte with N requests in flight (`-t T -p N/T`, T = min(2, N) threads,
# 2 connections per node) running bench/latte/ycsb.rn, and Headroom's
# closed loop with N clients running bench/cassandra-ycsb.yaml (cassandra
# target, 2 connections per node). Both use the same table (100,000
# records of 10 x 100-byte text fields in keyspace latte, loaded by latte;
# see SAME_TABLE), uniform keys, reads of all
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
# default 1024M), PROFILE (see headroom_run), WARMUP, WARMUP_MAX,
# WARM_QUEUE and WARM_JIT (unmeasured passes of each tool before the
# rounds: at least WARMUP, default 3, until the node's JIT compile queue
# holds at most WARM_QUEUE methods, default 10, and it spent at most
# WARM_JIT percent of its CPU compiling in the pass, default 3, at most
# WARMUP_MAX passes, default 20), PROTO (the CQL protocol version
# Headroom speaks: default 4, the only one latte's driver speaks; 0
# negotiates, which is 5 on Cassandra 5.0 and makes the node checksum
# every segment of frames), NODE_CPUS and CLIENT_CPUS (taskset CPU lists:
# NODE_CPUS=0 CLIENT_CPUS=1 keeps the node(s) on the first core and each
# tool on the second, so that a tool's own CPU does not come out of the
# server's; default: both share every core).
# AUTOCOMPACT=1 lets the node compact the tables during the rounds (by
# default the script compacts them before each measured run and the
# node does not; see settle below). Every measured run prints
# where the node's CPU went (its JIT compiler, compaction and garbage
# collector threads), the machine's steal time and the tables' SSTables,
# and a Headroom run with errors prints them by kind.
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
# calls per request (perf stat on the JVMs). NODE_JFR=DIR records each
# measured run on every node with Java Flight Recorder (settings=profile,
# DIR/rROUND-nN-SEQ-TOOL-PID.jfr; read with jfr view hot-methods or
# thread-cpu-load, JDK 21 or later).
# SAME_TABLE (default 1) points Headroom at latte's own table, with
# latte's keys ("user<i>": insert_order ordered) and no population, so
# that the node serves both tools from the same rows; SAME_TABLE=0 gives
# Headroom its own table (keyspace headroom, populated by its first
# run) with YCSB's hashed keys, or with latte's if KEYS=ordered. (With
# the tables compacted, separate tables cost the node at most 8% more CPU
# per Headroom request, with either kind of key: docs/performance.md (g).)
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
	local i=$1 dir=$work/node$1 addr=127.0.0.$1 jmx
	jmx=$(free_port)
	echo "$jmx" > "$work/jmx$i"
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
		-Dcassandra.jmx.local.port="$jmx" -Dcassandra.superuser_setup_delay_ms=1000 \
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
# nodetool I ARGS...: Cassandra's nodetool against node I's JMX port
# (loopback only).
nodetool() {
	local i=$1
	shift
	java -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData -Djava.net.preferIPv4Stack=true \
		--add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-exports java.base/jdk.internal.ref=ALL-UNNAMED \
		--add-exports java.rmi/sun.rmi.registry=ALL-UNNAMED --add-opens java.base/java.io=ALL-UNNAMED \
		-Duser.home="$work" -cp "$classpath" org.apache.cassandra.tools.NodeTool -h 127.0.0.1 -p "$(cat "$work/jmx$i")" "$@"
}
# (checked now rather than after the warm-up)
if [ "${AUTOCOMPACT:-}" != 1 ]; then
	nodetool 1 version > "$work/nodetool.log" 2>&1 || { echo "nodetool does not run:" >&2; tail -n 5 "$work/nodetool.log" >&2; exit 1; }
fi

first=127.0.0.1:$cql
# node_snap FILE: the node JVMs' user + system CPU so far, in seconds, into
# FILE: the processes' totals (which keep the time of threads that have
# ended) and each live thread's, by thread id and name (/proc/PID/task).
# node_cpu BEFORE AFTER: the CPU between two snapshots: the total, then the
# part of it in the JIT compiler threads, the compaction threads and the
# garbage collector threads (by thread name; a thread that ended between
# the two is missing from the parts), so that a run can be told to have
# paid for the node's own background work.
tick=$(getconf CLK_TCK)
node_snap() {
	python3 - "$tick" "$1" "${pids[@]}" <<'PY'
import os, sys
tick = float(sys.argv[1])
def cpu(stat):
    # the name is between the first "(" and the last ")", and may hold
    # spaces; utime and stime are fields 14 and 15
    f = stat[stat.rindex(")") + 2:].split()
    return (int(f[11]) + int(f[12])) / tick
with open(sys.argv[2], "w") as out:
    for pid in sys.argv[3:]:
        try:
            out.write("total %s %r\n" % (pid, cpu(open("/proc/%s/stat" % pid).read())))
            tasks = os.listdir("/proc/%s/task" % pid)
        except OSError:
            continue
        for t in tasks:
            try:
                stat = open("/proc/%s/task/%s/stat" % (pid, t)).read()
            except OSError:
                continue
            name = stat[stat.index("(") + 1:stat.rindex(")")].replace(" ", "_")
            out.write("%s %s %r\n" % (t, name, cpu(stat)))
PY
}
node_cpu() {
	python3 - "$1" "$2" <<'PY'
import sys
def load(path):
    return {(l.split()[0], l.split()[1]): float(l.split()[2]) for l in open(path)}
a, b = load(sys.argv[1]), load(sys.argv[2])
tot = jit = comp = gc = 0
for (tid, name), v in b.items():
    d = v - a.get((tid, name), 0)
    if tid == "total":
        tot += d
    elif name.startswith(("C1_CompilerThre", "C2_CompilerThre")):
        jit += d
    elif name.startswith("CompactionExec"):
        comp += d
    elif name.startswith(("GC_Thread", "G1_")):
        gc += d
print(tot, jit, comp, gc)
PY
}
# steal: the machine's stolen CPU time so far (/proc/stat, in ticks).
steal() { awk '/^cpu /{print $9; exit}' /proc/stat; }
jfr_seq=0
round=0
# measured TOOL N: settles the tables (see settle), then runs TOOL_run N
# with its output in $work/out.txt and the node(s)' CPU seconds and the
# wall seconds it took in $work/node.txt.
# NODE_SYSCALLS=1 also counts the node(s)' read, write and epoll_wait
# system calls over the run (perf stat on the JVMs) and prints them per
# request.
measured() {
	local w0 w1 s0 s1 perf=
	settle
	if [ "${NODE_SYSCALLS:-}" = 1 ]; then
		perf stat -x, -e syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_epoll_wait \
			-p "$(IFS=,; echo "${pids[*]}")" -o "$work/node-perf.txt" &
		perf=$!
	fi
	if [ -n "${NODE_JFR:-}" ]; then
		jfr_seq=$((jfr_seq + 1))
		for p in "${pids[@]}"; do
			jcmd "$p" JFR.start name=bench settings=profile \
				filename="$NODE_JFR/$(printf 'r%d-n%d-%02d-%s-%s' "$round" "$2" "$jfr_seq" "$1" "$p").jfr" > /dev/null
		done
	fi
	local c j k g
	node_snap "$work/snap0"
	w0=$(date +%s.%N) s0=$(steal)
	"$1_run" "$2" > "$work/out.txt"
	node_snap "$work/snap1"
	w1=$(date +%s.%N) s1=$(steal)
	read -r c j k g < <(node_cpu "$work/snap0" "$work/snap1")
	for p in "${pids[@]}"; do
		[ -n "${NODE_JFR:-}" ] && jcmd "$p" JFR.stop name=bench > /dev/null
	done
	python3 -c "print($c, $w1 - $w0)" > "$work/node.txt"
	# where the node's CPU went over the run, and the CPU time the
	# hypervisor gave to others while this machine wanted it (steal), as a
	# share of the run's wall time over all cores
	python3 -c "
c = $c
print('%s N=%s: node CPU %.1f s: JIT %.0f%%, compaction %.0f%%, GC %.0f%%; steal %.1f%% of the cores' % ('$1', '$2', c,
      $j / c * 100, $k / c * 100, $g / c * 100, ($s1 - $s0) / $tick / ($w1 - $w0) / $(nproc) * 100))" >&2
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
hr_keyspace=headroom hr_keys=${KEYS:-hashed}
if [ "${SAME_TABLE:-1}" = 1 ]; then
	hr_keyspace=latte hr_keys=ordered populate=false
fi
prof=()
headroom_run() {
	[ -n "${PROFILE:-}" ] && [ "$populate" = false ] && prof=(perf record -q -g -F 499 -o "$PROFILE/headroom-$1.data" --)
	[ "${SYSCALLS:-}" = 1 ] && [ "$populate" = false ] && prof=(perf stat -x, -e syscalls:sys_enter_write,syscalls:sys_enter_read -o "$work/perf.txt" --)
	rm -f "$work/perf.txt"
	sed -e "s/^  hosts: .*/  hosts: [${hosts//,/, }]/" -e "s/^  replication_factor: .*/  replication_factor: $rf/" \
		-e "s/^  protocol_version: .*/  protocol_version: $proto/" \
		-e "s/^  ycsb: .*/  ycsb: $ycsb/" -e "s/^  clients: .*/  clients: [$1]/" \
		-e "s/^  populate: .*/  populate: $populate/" -e "s/^  measure: .*/  measure: ${measure}s/" \
		-e "s/^  keyspace: .*/  keyspace: $hr_keyspace/" -e "s/^  insert_order: .*/  insert_order: $hr_keys/" \
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
	# A failed request is counted, not retried (latte retries a timeout or
	# an overloaded node up to 3 times by default and counts only what still
	# fails), so say what failed.
	python3 - "$dir/results.db" "$1" <<'PY' >&2
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
kinds = db.execute("SELECT kind, sum(count) FROM interval_error WHERE phase = 'measure' GROUP BY kind ORDER BY 2 DESC").fetchall()
if kinds:
    print("headroom N=%s: errors in the measured phase: %s" % (sys.argv[2], ", ".join("%s %d" % k for k in kinds)))
PY
}

# First passes of each tool at N = 64, not measured: Headroom loads its
# own table (SAME_TABLE=0), and the node's JIT compiles the read and
# write paths. A node pinned to one core compiles slowly, because its
# compiler threads share that core with the request threads: after twelve
# passes (7 minutes) it still had 250-420 methods waiting in its compile
# queues and spent 8-12% of its CPU compiling, and latte's throughput grew
# from 1,022 to 5,030 ok/s over those passes (2026-12-02), so that a later run was favoured over
# an earlier one all through the rounds. So during the warm-up the node
# may use every core (NODE_CPUS pins it again for the rounds), and the
# passes go on, at least WARMUP (default 3) and at most WARMUP_MAX
# (default 20), until the node's compile queues hold at most WARM_QUEUE
# methods (default 10) and it spent at most WARM_JIT percent (default 3)
# of its CPU in the pass compiling.
all_cpus="0-$(( $(nproc) - 1 ))"
repin() { local p; for p in "${pids[@]}"; do taskset -a -p -c "$1" "$p" > /dev/null; done; }
# jit_queue: the methods waiting in (or being compiled by) the node(s)'
# JIT compilers.
jit_queue() {
	local p q=0
	for p in "${pids[@]}"; do
		q=$(( q + $(jcmd "$p" Compiler.queue 2>/dev/null | grep -c '::' || true) ))
	done
	echo "$q"
}
[ -n "${NODE_CPUS:-}" ] && repin "$all_cpus"
pass=0
while :; do
	pass=$((pass + 1))
	node_snap "$work/snap0"
	read -r wt _ < <(latte_run 64)
	headroom_run 64 > /dev/null
	node_snap "$work/snap1"
	read -r c j _ < <(node_cpu "$work/snap0" "$work/snap1")
	jit=$(python3 -c "print(round($j / $c * 100, 1))")
	queue=$(jit_queue)
	printf 'warm-up pass %d: latte %.0f ok/s at N = 64; the node spent %.1f%% of its CPU compiling, %d methods wait\n' "$pass" "$wt" "$jit" "$queue" >&2
	steady=$(python3 -c "print(int($queue <= ${WARM_QUEUE:-10} and $jit <= ${WARM_JIT:-3}))")
	[ "$pass" -ge "${WARMUP:-3}" ] && [ "$steady" = 1 ] && break
	if [ "$pass" -ge "${WARMUP_MAX:-20}" ]; then
		echo "warm-up: the node was still compiling after $pass passes; the rounds may favour the tool that goes later" >&2
		break
	fi
done
[ -n "${NODE_CPUS:-}" ] && repin "$NODE_CPUS"
echo "warmed up after $pass passes" >&2

# A compaction is the node's own work, triggered by the writes of both
# tools, and it falls on whichever run is going when a memtable flush
# completes a tier: 5-10% of the node's CPU in one run of a round and
# none in the next (2026-12-02). So the node compacts neither table by
# itself during the rounds. Without any compaction, though, each run's
# updates are flushed into SSTables of their own, reads merge more and
# more of them, and the node's throughput fell by 40% over a four-round
# bench. Compacting before each concurrency of each round was not enough
# on a fast node: at 20,000-30,000 ok/s its memtables flushed several
# times in each run, up to 11 SSTables a table piled up over the three
# runs of a set, and the set's third run was up to 40% slower than its first
# whichever tool it was (2026-12-03). So settle flushes and compacts both
# tables into one SSTable each before every measured run, and every run
# starts from the same state. AUTOCOMPACT=1 leaves the node compacting as
# it would.
tables=(latte)
[ "$hr_keyspace" = headroom ] && tables+=(headroom)
if [ "${AUTOCOMPACT:-}" != 1 ]; then
	for i in $(seq "$nodes"); do
		for ks in "${tables[@]}"; do nodetool "$i" disableautocompaction "$ks" usertable > /dev/null; done
	done
fi
settle() {
	[ "${AUTOCOMPACT:-}" = 1 ] && return 0
	local i ks
	for i in $(seq "$nodes"); do
		for ks in "${tables[@]}"; do
			nodetool "$i" flush "$ks" usertable > /dev/null
			nodetool "$i" compact "$ks" usertable > /dev/null
		done
	done
}

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
	sstables "$1"
}
# sstables TOOL: each table's SSTables and memtable cells on the first
# node after TOOL's run (the node does not compact them during the rounds
# unless AUTOCOMPACT=1, so more SSTables mean more of them per read).
sstables() {
	[ "${AUTOCOMPACT:-}" = 1 ] && return 0
	{ nodetool 1 tablestats "${tables[@]/%/.usertable}" 2>/dev/null || true; } |
		awk -v tool="$1" '/Keyspace: /{ks=$2} /^[ \t]*SSTable count:/{s = s sprintf("; %s: %s SSTables", ks, $3)}
			/Memtable cell count:/{s = s sprintf(", %s memtable cells", $4)} END{print "after " tool s}' >&2
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
		# Alternate which tool goes first, so that neither always runs on a
		# node the other has just warmed (or tired). BRACKET=1: the tool
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
