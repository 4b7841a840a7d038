#!/usr/bin/env bash
# A CI gate on latency (docs/compare.md): run a campaign and compare it
# with a stored baseline; fail the build when p99 got detectably worse by
# more than 10%, and print the comparison as Markdown for a pull request.
#
#   examples/ci/gate.sh BASELINE_DIR [SPEC]
#
# BASELINE_DIR holds the baseline's results (keep it between builds, e.g.
# as an artifact of the main branch). When it holds none yet, the campaign
# run now becomes the baseline and the gate passes. SPEC defaults to
# examples/ci/campaign.yaml. HEADROOM names the binary (default: headroom
# on the PATH), FAIL_ON the rules (default p99:+10%), and the Markdown is
# also written to $COMMENT (default comparison.md).
#
# Exit codes: 0 the gate held, 3 a rule failed, others: the campaign or
# the comparison could not be made (compare's codes, docs/compare.md).
set -euo pipefail

baseline=${1:?usage: gate.sh BASELINE_DIR [SPEC]}
spec=${2:-$(dirname "$0")/campaign.yaml}
headroom=${HEADROOM:-headroom}
fail_on=${FAIL_ON:-p99:+10%}
comment=${COMMENT:-comparison.md}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A managed server runs as an unprivileged user, which must be able to
# enter the results directory.
chmod 755 "$work"

out=$("$headroom" run -q --no-report -o "$work" "$spec")
results=$(printf '%s\n' "$out" | sed -n 's/^results database: //p' | head -n 1)
if [ -z "$results" ]; then
	echo "gate.sh: the campaign printed no results database:" >&2
	printf '%s\n' "$out" >&2
	exit 1
fi

if [ ! -e "$baseline/results.db" ]; then
	mkdir -p "$baseline"
	cp "$results" "$baseline/results.db"
	echo "gate.sh: no baseline in $baseline yet; this campaign is now the baseline"
	exit 0
fi

set +e
"$headroom" compare --fail-on "$fail_on" --markdown "$baseline/results.db" "$results" > "$comment"
code=$?
set -e
cat "$comment"
exit "$code"
