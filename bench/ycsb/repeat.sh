#!/usr/bin/env bash
# repeat.sh [runs] [operationcount] [threads] [extra YCSB args...]
#
# Runs run.sh `runs` times (default 3), each after waiting for the machine
# to be quiet, and prints every run's result lines followed by the medians:
#   ycsb-median runs=<n> throughput=<ops/s> ops_per_cpu_s=<x> [steady_...]
# Environment as for run.sh (STATUS, WARMUP_S, JAVA_OPTS, ...), plus
#   QUIET_WAIT_S  how long to wait for a quiet machine before each run
#                 (default 300); a run that starts or ends up disturbed is
#                 still reported, marked by run.sh's ycsb-warning line.
#   RETRIES       how many times to redo a run that run.sh flags as
#                 disturbed (default 2); the last try counts either way.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
runs="${1:-3}"
shift $(( $# < 1 ? $# : 1 ))
wait_s="${QUIET_WAIT_S:-300}"
retries="${RETRIES:-2}"
[[ "$runs" =~ ^[0-9]+$ && "$runs" -gt 0 ]] || { echo "repeat.sh: runs must be a positive integer" >&2; exit 2; }

# Busy share of all CPUs over one second, in percent, from /proc/stat.
busy_pct() {
  local a b
  read -r -a a </proc/stat
  sleep 1
  read -r -a b </proc/stat
  local busy=$(( (b[1]+b[2]+b[3]+b[6]+b[7]) - (a[1]+a[2]+a[3]+a[6]+a[7]) ))
  local all=$(( busy + (b[4]+b[5]+b[8]) - (a[4]+a[5]+a[8]) ))
  echo $(( all > 0 ? 100 * busy / all : 0 ))
}

wait_quiet() {
  local deadline=$(( SECONDS + wait_s )) quiet=0 pct
  while (( SECONDS < deadline )); do
    pct="$(busy_pct)"
    if (( pct < 5 )); then
      quiet=$(( quiet + 1 ))
      (( quiet >= 3 )) && return 0
    else
      quiet=0
    fi
  done
  echo "repeat.sh: machine not quiet after ${wait_s}s; running anyway" >&2
}

"$here/fetch.sh" >&2
results=()
for (( i = 1; i <= runs; i++ )); do
  for (( try = 0; try <= retries; try++ )); do
    wait_quiet
    res="$("$here/run.sh" "$@" 2>/dev/null)" || { echo "repeat.sh: run $i failed; rerun run.sh by hand to see why" >&2; exit 1; }
    grep -q '^ycsb-warning' <<<"$res" || break
    if (( try < retries )); then
      echo "# run $i try $(( try + 1 )) disturbed, redone: $(grep -E '^ycsb-host ' <<<"$res")"
    fi
  done
  echo "# run $i"
  grep -E '^ycsb(-info|-process|-host|-warning|-steady|-runtime)?[ :]' <<<"$res"
  results+=("$(grep -E '^ycsb(-steady)? ' <<<"$res" | tr '\n' ' ')")
done

printf '%s\n' "${results[@]}" | awk -v runs="$runs" '
  function med(arr, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && arr[j-1] > arr[j]; j--) { t = arr[j]; arr[j] = arr[j-1]; arr[j-1] = t }
    return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
  }
  {
    steady = 0
    for (i = 1; i <= NF; i++) {
      if ($i == "ycsb-steady") steady = 1
      if ($i == "ycsb") steady = 0
      split($i, kv, "=")
      if (steady && kv[1] == "throughput")    st[++ns] = kv[2]
      if (steady && kv[1] == "ops_per_cpu_s") sc[++nc] = kv[2]
      if (!steady && kv[1] == "throughput")    tp[++nt] = kv[2]
      if (!steady && kv[1] == "ops_per_cpu_s") pc[++np] = kv[2]
    }
  }
  END {
    line = sprintf("ycsb-median runs=%d throughput=%.0f ops_per_cpu_s=%.0f", runs, med(tp, nt), med(pc, np))
    if (ns == runs && nc == runs)
      line = line sprintf(" steady_throughput=%.0f steady_ops_per_cpu_s=%.0f", med(st, ns), med(sc, nc))
    print line
  }'
