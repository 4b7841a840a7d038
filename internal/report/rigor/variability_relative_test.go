package rigor

import (
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
)

// Two lab instances created equal, one with a noisy neighbour (issue 14):
// at 400 req/s tau is 1.17/1.18/1.19 ms on quiet and 14.2/14.7/15.2 ms on
// noisy. By default (relative thresholds) the section must call them
// different: |Δtau| = 13.52 ms is 1146% of the smaller tau (far over 20%),
// and Welch's t on the repetitions is 13.52 / sqrt(0.5²/3 + 0.01²/3) =
// 46.8 with about 2 degrees of freedom, p ≈ 0.0005. Each instance alone is
// repeatable: tau_se / tau = 0.0058/1.18 = 0.5% and 0.289/14.7 = 2.0%.
const noisySpec = `name: noisyvar
lab:
  hosts:
    - {name: db, count: 2, type: small}
target: {type: postgres, managed: {host: db1}}
workload: {ycsb: c, record_count: 100}
load: {model: open, arrival: constant, rates: [400]}
phases: {warmup: 0s, measure: 10s}
repetitions: 3
analysis:
  variability: {trim: 2s, equal: [[quiet, noisy]]}
treatments:
  - name: quiet
  - name: noisy
    set: {target.managed.host: db2}
`

func TestNoisyNeighbourSection(t *testing.T) {
	s := newSynth(t, "noisyvar", noisySpec)
	small := []labHost{host("db1", "small", 0.5, 0.09), host("db2", "small", 0.5, 0.09)}
	s.labs["quiet"], s.labs["noisy"] = small, small
	taus := map[string][3]float64{"quiet": {1.17, 1.18, 1.19}, "noisy": {14.2, 14.7, 15.2}}
	for ti, tr := range []string{"quiet", "noisy"} {
		for rep := 1; rep <= 3; rep++ {
			s.run(synthRun{treatment: tr, slotBase: ti * 100000, rep: rep, level: 400, tauMS: taus[tr][rep-1], tput: 400, host: map[string]string{"quiet": "db1", "noisy": "db2"}[tr], cpu: 40})
		}
	}
	secs := all(t, s.st)
	validates(t, secs)
	sec := mustSection(t, secs, "variability")
	if !strings.Contains(sec.Summary, "quiet = noisy: measurements are not repeatable even at the lowest level") ||
		!strings.Contains(sec.Summary, "above tau(quiet) = 1.18 ms (>= 20.0%)") {
		t.Errorf("summary:\n%s", sec.Summary)
	}
	lv := table(t, secs, "variability-levels")
	verdict, rel := col(t, lv, "(a) tau_se < 5% of tau"), col(t, lv, "tau_se / tau")
	// Instances in name order: noisy, then quiet.
	for i, want := range []float64{100 * 0.5 / 1.7320508 / 14.7, 100 * 0.01 / 1.7320508 / 1.18} {
		r := lv.Rows[i]
		if r[verdict].Text != "pass" || !near(value(r[rel]), want, 0.05) {
			t.Errorf("level row %d: (a) %s at %v%%, want pass at %.2f%%", i, r[verdict].Text, value(r[rel]), want)
		}
	}
	cross := table(t, secs, "variability-cross")
	if len(cross.Rows) != 1 {
		t.Fatalf("%d cross rows", len(cross.Rows))
	}
	r := cross.Rows[0]
	b, share, p, why := col(t, cross, "(b) |Δtau| < 20% of tau, by Welch's t"), col(t, cross, "|Δtau| / tau"), col(t, cross, "Welch p"), col(t, cross, "why")
	if r[b].Text != "fail" || r[b].Mark != "fail" || !near(value(r[share]), 100*13.52/1.18, 2) {
		t.Errorf("cross row %+v", r)
	}
	wantP, _ := stats.WelchTest([]float64{14.2, 14.7, 15.2}, []float64{1.17, 1.18, 1.19})
	if !near(value(r[p]), wantP.P, wantP.P*0.05) || !(value(r[p]) < 0.001) {
		t.Errorf("Welch p %v, want about %v", value(r[p]), wantP.P)
	}
	if !strings.Contains(r[why].Text, "tau(noisy) = 14.7 ms is") {
		t.Errorf("why %q", r[why].Text)
	}
	if c := chartByID(t, secs, "variability-cross-diff"); c.Line.Y.Unit != "%" || c.Line.Rules[0].Value != 20 {
		t.Errorf("cross chart axis %+v rules %+v", c.Line.Y, c.Line.Rules)
	}
}

// mu below zero (the server's time above the client's) is measurement
// error, not a negative duration.
func TestMuWithinMeasurementError(t *testing.T) {
	c := muCell(stats.Estimate{Mean: -106, SE: 20, N: 3})
	if c.Text != "within measurement error" || c.Value == nil || *c.Value != -106 {
		t.Errorf("negative mu: %+v", c)
	}
	if c := muCell(stats.Estimate{Mean: 2000, SE: 10, N: 3}); c.Text != "2.00 ± 0.01" {
		t.Errorf("positive mu: %q", c.Text)
	}
}
