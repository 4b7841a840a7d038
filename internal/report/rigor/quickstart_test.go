package rigor_test

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/analysis/capacity"
	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/report"
	"github.com/headroom-dev/headroom/internal/report/rigor"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
	_ "github.com/headroom-dev/headroom/internal/target/sqlite"
)

// The quickstart (examples/quickstart.yaml: embedded SQLite, open-loop
// rates at fractions of the rate a short probe finds first, SLO p99 <= 10
// ms), shortened to two repetitions of 1 s warmup and 2 s measured, run for
// real (the probe included): its summary's findings must not
// contradict each other. One capacity figure; no level both client-limited
// and the capacity; the capacity meets the SLO; and no run or finding
// calls the client the limit, because the target runs inside the process
// and the engine's own share of its CPU is small (about 0.4 µs per request
// against SQLite's tens of µs).
func TestQuickstartFindingsAreConsistent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the quickstart for about a minute")
	}
	data, err := os.ReadFile("../../../examples/quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, r := range []struct{ old, new string }{
		{"warmup: 2s", "warmup: 1s"}, {"measure: 5s", "measure: 2s"}, {"cooldown: 1s", "cooldown: 0s"},
		{"repetitions: 3", "repetitions: 2"}, {"output: results", "output: " + t.TempDir()},
	} {
		if !strings.Contains(text, r.old) {
			t.Fatalf("the quickstart no longer has %q; update this test's shortening", r.old)
		}
		text = strings.Replace(text, r.old, r.new, 1)
	}
	s, err := spec.Parse("quickstart.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	// As headroom run does for an in-process target (cli/run.go): twice
	// the scheduler slots, the verdict judged against the real cores.
	procs := runtime.GOMAXPROCS(0)
	load.SetCPUBudget(procs)
	runtime.GOMAXPROCS(2 * procs)
	defer func() { runtime.GOMAXPROCS(procs); load.SetCPUBudget(0) }()
	out, err := campaign.Start(context.Background(), s, campaign.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := results.Open(out.StorePath)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	// The summary as headroom run prints it.
	tr := r.Treatments()[0]
	in, incomplete, err := levels.FromResults(r, tr.Name)
	if err != nil {
		t.Fatal(err)
	}
	var summary bytes.Buffer
	report.Terminal(&summary, report.HeaderOf(r.Campaign().Name, tr), levels.Summarize(in), incomplete)
	fs, err := rigor.Findings(r, tr.Name)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Load.Relative == nil || !(tr.Load.Relative.Base > 0) || len(tr.Load.Levels) != len(tr.Load.Relative.Fractions) {
		t.Errorf("the quickstart's levels should be fractions of a probed rate: %+v, levels %v", tr.Load.Relative, tr.Load.Levels)
	}
	labels := map[string][]string{}
	for _, f := range fs {
		labels[f.Label] = append(labels[f.Label], f.Text)
		summary.WriteString(f.Label + ": " + f.Text + "\n")
	}
	t.Logf("summary:\n%s", summary.String())

	if n := len(labels["Capacity"]); n != 1 {
		t.Errorf("%d capacity findings, want exactly one", n)
	}
	if c, ok := labels["Client"]; ok {
		t.Errorf("a client-limit finding for an in-process target: %v", c)
	}
	if strings.Contains(summary.String(), "Client  was the limit") {
		t.Error("the summary calls the client the limit")
	}
	for _, run := range r.AllCompletedRuns() {
		if run.Summary.ClientLimited {
			t.Errorf("run %d (%g req/s) judged client-limited: %s", run.ID, run.Level, run.Summary.ClientNote)
		}
	}

	cc, err := capacity.FromResults(r, capacity.Config{})
	if err != nil || cc.Problem != nil || len(cc.Curves) != 1 {
		t.Fatalf("capacity: %v %v (%d curves)", err, cc.Problem, len(cc.Curves))
	}
	c := cc.Curves[0].Curve
	for _, i := range c.ClientLimited {
		if i == c.MaxIndex {
			t.Errorf("level %d is both client-limited and the capacity", i)
		}
	}
	if c.MaxIndex < 0 {
		if !strings.Contains(labels["Capacity"][0], "no capacity estimate") {
			t.Errorf("no capacity, but the finding says %q", labels["Capacity"][0])
		}
		return
	}
	p := c.Points[c.MaxIndex]
	if p.SLO == nil || !p.SLO.Pass || (c.FirstFail >= 0 && c.MaxIndex > c.LastPass) {
		t.Errorf("the capacity level %g req/s does not meet the SLO (first failure at index %d)", p.Level.Level, c.FirstFail)
	}
	if !strings.Contains(labels["Capacity"][0], "meets the SLO") {
		t.Errorf("capacity finding %q does not say it meets the SLO", labels["Capacity"][0])
	}
}
