#!/usr/bin/env bash
# Fetch YCSB 0.17.0's core harness (site.ycsb:core:0.17.0) and its runtime
# dependencies from Maven Central into bench/ycsb/lib/, using the
# dependency-only pom.xml beside this script.
#
# Idempotent: does nothing when lib/ already holds every expected jar and
# they match jars.sha256 (the bytes first taken from Maven Central).
# FORCE=1 re-fetches. Needs Maven (mvn) and a JDK; the jars land in the
# local Maven repository (~/.m2) as well, so a second fetch is offline.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

# The closure of site.ycsb:core:0.17.0 at runtime scope (its pom also
# names testng, test scope only, which is not fetched).
expected=(
  core-0.17.0.jar
  HdrHistogram-2.1.4.jar
  htrace-core4-4.1.0-incubating.jar
  jackson-core-asl-1.9.4.jar
  jackson-mapper-asl-1.9.4.jar
)

have_all() {
  local j
  for j in "${expected[@]}"; do
    [[ -s "lib/$j" ]] || return 1
  done
}

# jars.sha256 pins the exact bytes taken from Maven Central on first use.
verify() {
  if ! sha256sum --quiet -c jars.sha256; then
    echo "fetch.sh: lib/ does not match jars.sha256 (FORCE=1 re-fetches)" >&2
    return 1
  fi
}

if [[ "${FORCE:-0}" != 1 ]] && have_all; then
  verify
  echo "fetch.sh: lib/ already complete (${#expected[@]} jars); FORCE=1 to re-fetch"
  exit 0
fi

command -v mvn >/dev/null || { echo "fetch.sh: mvn not found (apt-get install maven)" >&2; exit 1; }

rm -rf lib
# Output is kept only for a failure: on success quiet Maven still prints
# bare colour escapes.
if ! log="$(mvn -B -q dependency:copy-dependencies \
              -DincludeScope=runtime \
              -DoutputDirectory="$here/lib" 2>&1)"; then
  printf '%s\n' "$log" >&2
  echo "fetch.sh: mvn dependency:copy-dependencies failed" >&2
  exit 1
fi

if ! have_all; then
  echo "fetch.sh: lib/ is missing expected jars after the fetch:" >&2
  ls -l lib >&2 || true
  exit 1
fi
verify
echo "fetch.sh: fetched into $here/lib:"
ls -1 lib
