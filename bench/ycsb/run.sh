#!/usr/bin/env bash
# run.sh [operationcount] [threads] [extra YCSB args...]
#
# Runs YCSB 0.17.0's own harness (site.ycsb.Client, transaction phase) with
# workload A (./workloada) against the no-op binding site.ycsb.BasicDB, and
# measures throughput and the process's CPU time, so that operations per
# CPU-second can be compared with Headroom's. See README.md.
#
# Defaults: operationcount 50000000, threads 1. Extra arguments are passed
# to site.ycsb.Client after the fixed ones (e.g. -p measurementtype=raw).
#
# Environment:
#   JAVA         java binary (default: java on PATH)
#   JAVA_OPTS    extra JVM flags, word-split (default: none)
#   STATUS=N     add YCSB's -s status thread, printing every N seconds
#                (-p status.interval=N), and derive steady-state figures from
#                it; 0 (the default) runs the plain command, no steady state
#   TIMER=bash   measure CPU with bash's `times` even when /usr/bin/time exists
#   WARMUP_S     steady-state window starts at the first status line at or
#                after this many seconds of the run phase (default 5)
#
# Output: YCSB's own report is kept in logs/<stamp>.out/.err; the last line
# printed is exactly
#   ycsb ops=<n> wall_s=<x> cpu_s=<user+sys> throughput=<ops/s> ops_per_cpu_s=<x>
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

ops="${1:-50000000}"
threads="${2:-1}"
shift $(( $# < 2 ? $# : 2 ))
extra=("$@")
warmup="${WARMUP_S:-5}"
status="${STATUS:-0}"
java="${JAVA:-java}"
# shellcheck disable=SC2206 # JAVA_OPTS is meant to be word-split.
java_opts=(${JAVA_OPTS:-})

[[ "$ops" =~ ^[0-9]+$ && "$ops" -gt 0 ]] || { echo "run.sh: operationcount must be a positive integer" >&2; exit 2; }
[[ "$threads" =~ ^[0-9]+$ && "$threads" -gt 0 ]] || { echo "run.sh: threads must be a positive integer" >&2; exit 2; }
[[ "$status" =~ ^[0-9]+$ ]] || { echo "run.sh: STATUS must be whole seconds (0: off)" >&2; exit 2; }
[[ "$warmup" =~ ^[0-9]+$ ]] || { echo "run.sh: WARMUP_S must be whole seconds" >&2; exit 2; }
[[ -n "${EPOCHREALTIME:-}" ]] || { echo "run.sh: needs bash >= 5 (EPOCHREALTIME)" >&2; exit 2; }

./fetch.sh >&2

clk_tck="$(getconf CLK_TCK)"
mkdir -p logs
stamp="$(date -u +%Y%m%dT%H%M%SZ)-$$"
out="logs/$stamp.out"   # YCSB's stdout: the final measurement report
err="logs/$stamp.err"   # YCSB's stderr: banner and status lines
timef="logs/$stamp.time"
fifo="$(mktemp -u "${TMPDIR:-/tmp}/ycsb-run.XXXXXX")"
mkfifo "$fifo"
trap 'rm -f "$fifo"' EXIT

ycsb_args=(-t)
[[ "$status" == 0 ]] || ycsb_args+=(-s -p status.interval="$status")
ycsb_args+=(-db site.ycsb.BasicDB -P workloada
            -p basicdb.verbose=false
            -p operationcount="$ops"
            -threads "$threads"
            "${extra[@]}")
cmd=("$java" "${java_opts[@]}" -cp 'lib/*' site.ycsb.Client "${ycsb_args[@]}")
echo "run.sh: $(printf "%q " "${cmd[@]}")" >&2

# The JVM runs as the only child of a timer process: GNU time when it is
# installed (Debian package "time"), else a subshell whose `times` builtin
# reports its children's user and sys CPU. Either way the CPU figure covers
# every thread of the JVM (worker, JIT compilers, GC, status thread) from
# exec to exit.
read -r -a stat0 </proc/stat
t0=$EPOCHREALTIME
if [[ "${TIMER:-}" != bash && -x /usr/bin/time ]]; then
  timer=gnu-time
  /usr/bin/time -o "$timef" -f '%U %S' "${cmd[@]}" >"$out" 2>"$fifo" &
else
  timer=bash-times
  ( rc=0; "${cmd[@]}" || rc=$?; times >"$timef"; exit "$rc" ) >"$out" 2>"$fifo" &
fi
tpid=$!
exec 3<"$fifo"

# The JVM's pid, for sampling its CPU time at each status line.
jpid=""
for _ in $(seq 500); do
  if [[ -r /proc/$tpid/task/$tpid/children ]]; then
    read -r jpid _ </proc/$tpid/task/$tpid/children || true
  else
    jpid="$(pgrep -P "$tpid" | head -n1 || true)"
  fi
  [[ -n "$jpid" ]] && break
  kill -0 "$tpid" 2>/dev/null || break
  sleep 0.01
done

# Read YCSB's stderr as it is written. Each status line ("<date> <s> sec:
# <n> operations; ...") is printed once a second by YCSB's StatusThread;
# on reading one, sample the wall clock and the JVM's utime+stime
# (/proc/<pid>/stat fields 14 and 15, in clock ticks). Pairs of samples
# give throughput and CPU over a window that excludes JVM start-up, class
# loading, workload init and the early JIT warm-up.
samples=()
while IFS= read -r line <&3; do
  printf '%s\n' "$line" >>"$err"
  if [[ -n "$jpid" && "$line" =~ \ ([0-9]+)\ sec:\ ([0-9]+)\ operations\; ]]; then
    now=$EPOCHREALTIME
    if read -r -a st </proc/"$jpid"/stat 2>/dev/null; then
      samples+=("$now ${BASH_REMATCH[1]} ${BASH_REMATCH[2]} $(( st[13] + st[14] ))")
    fi
  fi
done
exec 3<&-
rc=0
wait "$tpid" || rc=$?
t1=$EPOCHREALTIME
read -r -a stat1 </proc/stat

if [[ "$rc" != 0 ]]; then
  echo "run.sh: YCSB exited with status $rc; see $here/$out and $here/$err" >&2
  tail -n 20 "$err" >&2 || true
  exit 1
fi

# CPU seconds (user, sys) of the whole JVM process.
if [[ "$timer" == gnu-time ]]; then
  read -r cpu_user cpu_sys < <(tail -n1 "$timef")
else
  # Second line of `times`: children's user and sys, as e.g. 0m1.674s.
  read -r cpu_user cpu_sys < <(sed -n 2p "$timef" | awk '
    function s(x,  m) { m = x; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", x); sub(/s$/, "", x); return m * 60 + x }
    { print s($1), s($2) }')
fi

# YCSB's own report.
read -r runtime_ms ycsb_tput done_ops ok_ops <<<"$(awk -F', ' '
  $1 == "[OVERALL]" && $2 == "RunTime(ms)"        { rt = $3 }
  $1 == "[OVERALL]" && $2 == "Throughput(ops/sec)" { tp = $3 }
  $1 != "[CLEANUP]" && $2 == "Operations"         { n += $3 }
  $1 != "[CLEANUP]" && $2 == "Return=OK"          { ok += $3 }
  END { printf "%s %s %d %d\n", rt == "" ? "NA" : rt, tp == "" ? "NA" : tp, n, ok }' "$out")"

# YCSB 0.17.0 exits 0 even when the workload fails to initialise, so a
# missing report is the failure signal.
if [[ "$ycsb_tput" == NA || "$runtime_ms" == NA || "$done_ops" == 0 ]]; then
  echo "run.sh: YCSB produced no [OVERALL] report; see $here/$out and $here/$err" >&2
  tail -n 20 "$err" >&2 || true
  exit 1
fi
if [[ "$done_ops" != "$ops" || "$ok_ops" != "$ops" ]]; then
  echo "run.sh: warning: asked for $ops operations, YCSB reports $done_ops done, $ok_ops OK" >&2
fi

# Measurement type in effect: an explicit -p on the command line wins over
# the workload file, which wins over YCSB 0.17.0's default (hdrhistogram).
mtype="$(sed -n 's/^measurementtype=//p' workloada | tail -n1)"
for a in "${extra[@]}"; do
  [[ "$a" == measurementtype=* ]] && mtype="${a#measurementtype=}"
done
mtype="${mtype:-hdrhistogram}"
recordcount="$(sed -n 's/^recordcount=//p' workloada | tail -n1)"

awk -v ops="$ops" -v threads="$threads" -v t0="$t0" -v t1="$t1" \
    -v user="$cpu_user" -v sys="$cpu_sys" -v rt="$runtime_ms" -v tp="$ycsb_tput" \
    -v mtype="$mtype" -v rc="$recordcount" -v timer="$timer" -v logf="$out" \
    -v warmup="$warmup" -v tck="$clk_tck" -v hz0="${stat0[*]:1:8}" -v hz1="${stat1[*]:1:8}" \
    -v ncpu="$(getconf _NPROCESSORS_ONLN)" -v samples="$(printf '%s\n' "${samples[@]}")" '
BEGIN {
  wall = t1 - t0; cpu = user + sys
  printf "ycsb-info measurementtype=%s recordcount=%s threads=%d timer=%s log=%s\n", mtype, rc, threads, timer, logf
  # Whole process, JVM start-up and shutdown included.
  printf "ycsb-process wall_s=%.3f cpu_user_s=%.2f cpu_sys_s=%.2f cpu_s=%.2f cores=%.2f throughput_wall=%.0f ops_per_cpu_s=%.0f\n", \
    wall, user, sys, cpu, cpu / wall, ops / wall, ops / cpu
  # YCSB RunTime: from the start of the client threads to their end (no JVM
  # start-up or workload init, but early JIT warm-up included).
  # Whole machine over the same wall interval (/proc/stat "cpu" line:
  # user nice system idle iowait irq softirq steal, in ticks). CPU used by
  # anything other than this JVM, or steal, means the run was disturbed.
  split(hz0, p, " "); split(hz1, q, " ")
  for (i = 1; i <= 8; i++) d[i] = (q[i] - p[i]) / tck
  busy = d[1] + d[2] + d[3] + d[6] + d[7]
  other = busy - cpu; if (other < 0) other = 0
  printf "ycsb-host ncpu=%d busy_cpu_s=%.2f other_cpu_s=%.2f idle_s=%.2f steal_s=%.2f\n", ncpu, busy, other, d[4] + d[5], d[8]
  if (other > 0.05 * cpu || d[8] > 0.05 * cpu || cpu / wall < 0.9)
    printf "ycsb-warning: run looks disturbed (other processes, steal, or the JVM got under 0.9 of a core); rerun on a quiet machine\n"
  printf "ycsb-runtime runtime_s=%.3f throughput=%.0f\n", rt / 1000, tp

  # Steady state: first status sample at >= warmup seconds to the last one.
  n = split(samples, line, "\n"); a = 0; b = 0
  for (i = 1; i <= n; i++) {
    if (split(line[i], f, " ") != 4) continue
    if (!a && f[2] + 0 >= warmup + 0) { a = i; at = f[1]; aops = f[3]; atk = f[4] }
    b = i; bt = f[1]; bops = f[3]; btk = f[4]
  }
  if (a && b > a && bt - at >= 1 && btk > atk) {
    w = bt - at; sc = (btk - atk) / tck; so = bops - aops
    printf "ycsb-steady from_s=%d window_s=%.3f ops=%d cpu_s=%.2f cores=%.2f throughput=%.0f ops_per_cpu_s=%.0f\n", \
      warmup, w, so, sc, sc / w, so / w, so / sc
  } else if (n == 0 || samples == "") {
    printf "ycsb-steady n/a (STATUS=0: rerun with STATUS=1 for a steady-state window)\n"
  } else {
    printf "ycsb-steady n/a (no status window from %ss on: run longer or lower WARMUP_S)\n", warmup
  }
  printf "ycsb ops=%d wall_s=%.3f cpu_s=%.2f throughput=%.0f ops_per_cpu_s=%.0f\n", ops, wall, cpu, tp, ops / cpu
}'
