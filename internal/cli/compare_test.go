package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
)

// compareCampaign runs a one-level campaign on the null target whose
// every operation takes serviceTime, and returns its results database.
func compareCampaign(t *testing.T, name, serviceTime, ycsb string, reps int) string {
	t.Helper()
	dir := t.TempDir()
	spec := filepath.Join(dir, name+".yaml")
	text := `name: ` + name + `
seed: 11
target: {type: null, service_time: ` + serviceTime + `}
workload: {ycsb: ` + ycsb + `, record_count: 100}
load: {model: open, arrival: constant, rates: [200], max_in_flight: 16}
phases: {warmup: 500ms, measure: 2s}
repetitions: ` + strconv.Itoa(reps) + `
`
	if err := os.WriteFile(spec, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return resultsPath(t, runQuiet(t, spec))
}

type comparedCell struct {
	Op, Figure, Verdict string
	Change, Lo, Hi      *float64
	MeanA               *float64 `json:"mean_a"`
	MeanB               *float64 `json:"mean_b"`
}

func compareJSON(t *testing.T, args ...string) ([]comparedCell, int) {
	t.Helper()
	out, errOut, code := headroom(t, append([]string{"compare", "--json"}, args...)...)
	var doc struct {
		Format int
		Cells  []comparedCell
		Failed bool
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Format != 1 {
		t.Fatalf("compare --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	return doc.Cells, code
}

// `headroom compare` on two null-target campaigns whose operations take
// 1.0 ms and 1.1 ms, five repetitions each (issue 32): the median
// latency is found worse, with an interval that excludes 0, and a --fail-on
// under the change fails the command with code 3 while one above it
// holds. A campaign against itself: no detectable difference. A campaign
// with another workload is refused unless the difference is accepted.
func TestCompareFindsATenPercentSlowerServer(t *testing.T) {
	a := compareCampaign(t, "base", "1ms", "a", 5)
	b := compareCampaign(t, "slower", "1100us", "a", 5)

	cells, code := compareJSON(t, a, b)
	if code != 0 {
		t.Fatalf("compare without --fail-on exited %d", code)
	}
	// The median: the slowest requests of a run wait for this machine's
	// scheduler as much as for the server, so the mean and the high
	// percentiles vary from run to run by more than the 0.1 ms.
	var p50 *comparedCell
	for i, c := range cells {
		if c.Op == "all" && c.Figure == "p50" {
			p50 = &cells[i]
		}
		if c.Op == "all" && c.Change != nil && c.Lo != nil {
			t.Logf("%-10s %-24s change %+.1f%% [%+.1f%%, %+.1f%%]", c.Figure, c.Verdict, 100**c.Change, 100**c.Lo, 100**c.Hi)
		}
	}
	if p50 == nil || p50.Change == nil || p50.Lo == nil || p50.MeanA == nil || p50.MeanB == nil {
		t.Fatalf("no judged median latency among %+v", cells)
	}
	// The harness adds about the same overhead to both sides (a quarter
	// of a millisecond here), so the change is somewhat under the 10% of
	// the service times. (Before the null target slept the last
	// millisecond on its own, Go's millisecond timers made it +82%.)
	if p50.Verdict != "worse" || !(*p50.Lo > 0) || !(*p50.Change > 0.03 && *p50.Change < 0.16) {
		t.Errorf("median latency %.0f -> %.0f µs: %s, change %+.1f%% [%+.1f%%, %+.1f%%]; want worse by 3-16%%, the interval above 0",
			*p50.MeanA, *p50.MeanB, p50.Verdict, 100**p50.Change, 100**p50.Lo, 100**p50.Hi)
	}

	out, errOut, code := headroom(t, "compare", "--fail-on", "p50:+1%", a, b)
	if code != ExitRuleBroken || !strings.Contains(out, "--fail-on p50:+1%: FAILED at level 1") {
		t.Errorf("--fail-on p50:+1%%: exit %d, want %d\n%s%s", code, ExitRuleBroken, out, errOut)
	}
	out, _, code = headroom(t, "compare", "--fail-on", "p50:+50%", "--markdown", a, b)
	if code != 0 || !strings.Contains(out, "--fail-on p50:+50%: held") || !strings.Contains(out, "| figure | A | B | change | interval | verdict |") {
		t.Errorf("--fail-on p50:+50%% --markdown: exit %d\n%s", code, out)
	}

	same, code := compareJSON(t, "--fail-on", "p99:+1%", a, a)
	for _, c := range same {
		if c.Verdict != "no detectable difference" {
			t.Errorf("a campaign against itself: %s %s is %q", c.Op, c.Figure, c.Verdict)
		}
	}
	if code != 0 {
		t.Errorf("a campaign against itself failed --fail-on p99:+1%%: exit %d", code)
	}

	other := compareCampaign(t, "reads", "1ms", "c", 2)
	_, errOut, code = headroom(t, "compare", a, other)
	if code != ExitUsage || !strings.Contains(errOut, "the campaigns differ in what they measured (A's vs B's): workload YCSB a") || !strings.Contains(errOut, "--accept workload") {
		t.Errorf("another workload: exit %d, %s", code, errOut)
	}
	if _, errOut, code = headroom(t, "compare", "--accept", "workload", a, other); code != 0 {
		t.Errorf("another workload, accepted: exit %d, %s", code, errOut)
	}
	for _, bad := range [][]string{{"--fail-on", "p99:-5%"}, {"--fail-on", "p98:+5%"}, {"--json", "--markdown"}, {"--accept", "colour"}} {
		_, errOut, code := headroom(t, append(append([]string{"compare"}, bad...), a, b)...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("compare %v: exit %d, %q; want one sentence and exit %d", bad, code, errOut, ExitUsage)
		}
	}
}

// The CI example (examples/ci): gate.sh runs the campaign against a
// private PostgreSQL and, with no baseline yet, keeps it as the baseline;
// run again on a candidate whose every commit waits 10 ms before its WAL
// flush (commit_delay with commit_siblings 0: a regression designed into
// the server, far above what a 2-core runner's noise could hide), the
// gate fails with code 3 and prints the Markdown comparison with p99
// detectably worse. The workflow file is valid YAML that runs the gate.
func TestCIExampleGatesARegression(t *testing.T) {
	labtest.NeedServer(t, "postgres", "postgresql")
	dir := t.TempDir()
	baseline := filepath.Join(dir, "baseline")
	gate := func(spec string) (string, string, int) {
		cmd := exec.Command("bash", "../../examples/ci/gate.sh", baseline, spec)
		cmd.Env = append(os.Environ(), "HEADROOM="+binary, "COMMENT="+filepath.Join(dir, "comparison.md"))
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), code
	}
	out, errOut, code := gate("../../examples/ci/campaign.yaml")
	if code != 0 || !strings.Contains(out, "this campaign is now the baseline") {
		t.Fatalf("first gate: exit %d\n%s%s", code, out, errOut)
	}
	src, err := os.ReadFile("../../examples/ci/campaign.yaml")
	if err != nil {
		t.Fatal(err)
	}
	slower := strings.Replace(string(src), "  managed: {}\n", "  managed: {settings: {commit_delay: \"10000\", commit_siblings: \"0\"}}\n", 1)
	if slower == string(src) {
		t.Fatal("examples/ci/campaign.yaml has no `managed: {}` line to change")
	}
	cand := filepath.Join(dir, "candidate.yaml")
	if err := os.WriteFile(cand, []byte(slower), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = gate(cand)
	t.Logf("gate on the slower candidate:\n%s", out)
	if code != ExitRuleBroken || !strings.Contains(out, "--fail-on p99:+10%: FAILED at level 1") || !regexp.MustCompile(`\| p99 \| [^|]+ \| [^|]+ \| \+[0-9.]+% \| [^|]+ \| worse \|`).MatchString(out) {
		t.Errorf("gate on a candidate 10 ms slower per commit: exit %d, want %d with p99 worse\n%s%s", code, ExitRuleBroken, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "comparison.md")); err != nil || string(b) != out {
		t.Errorf("the comment file should hold what was printed: %v", err)
	}

	wf, err := os.ReadFile("../../examples/ci/github-workflow.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Jobs map[string]struct {
			Steps []struct{ Run string }
		}
	}
	if err := yaml.Unmarshal(wf, &doc); err != nil {
		t.Fatalf("github-workflow.yml: %v", err)
	}
	runsGate := false
	for _, s := range doc.Jobs["gate"].Steps {
		runsGate = runsGate || strings.Contains(s.Run, "gate.sh baseline")
	}
	if !runsGate {
		t.Error("the workflow has no step that runs gate.sh")
	}
}
