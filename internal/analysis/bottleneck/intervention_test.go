package bottleneck

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestQuantileType7(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3} // sorted 1..5, h = 4p
	for _, c := range []struct{ p, want float64 }{{0, 1}, {0.1, 1.4}, {0.2, 1.8}, {0.5, 3}, {0.8, 4.2}, {0.9, 4.6}, {1, 5}} {
		if got := quantile(xs, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Fatalf("q(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if xs[0] != 5 {
		t.Fatal("quantile sorted its input")
	}
	if got := quantile([]float64{7}, 0.9); got != 7 {
		t.Fatalf("one value: %v", got)
	}
	if !math.IsNaN(quantile(nil, 0.5)) {
		t.Fatal("no values must give NaN")
	}
}

// TestInterventionPointByHand: S at three levels, two trials each.
// Level 1: {100, 100}: mean 100, sd 0, bound 100.
// Level 2: {100, 100, 99, 98}: mean 99.25, sd sqrt(2.75/3) = 0.957427,
// bound 99.25 - 1.96*0.957427 = 97.3734.
// Level 3: adds {80, 85}: mean 562/6 = 93.6667, sum of squares 1168/3,
// sd sqrt(1168/15) = 8.824209, bound 93.6667 - 17.295450 = 76.3712 < 90:
// w* = 3.
func TestInterventionPointByHand(t *testing.T) {
	trials := []Trial{
		{Level: 1, Repetition: 1, Satisfaction: 100}, {Level: 1, Repetition: 2, Satisfaction: 100},
		{Level: 2, Repetition: 1, Satisfaction: 99}, {Level: 2, Repetition: 2, Satisfaction: 98},
		{Level: 3, Repetition: 1, Satisfaction: 80}, {Level: 3, Repetition: 2, Satisfaction: 85},
		{Level: 4, Repetition: 1, Satisfaction: 50}, {Level: 4, Repetition: 2, Satisfaction: 40},
	}
	in, err := AnalyzeIntervention(trials, InterventionConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if !in.Found || in.WStar != 3 || len(in.Steps) != 3 {
		t.Fatalf("w* = %v (found %v), steps %+v", in.WStar, in.Found, in.Steps)
	}
	want := []Step{
		{Level: 1, N: 2, Mean: 100, SD: 0, Lower: 100},
		{Level: 2, N: 4, Mean: 99.25, SD: math.Sqrt(2.75 / 3), Lower: 99.25 - 1.96*math.Sqrt(2.75/3)},
		{Level: 3, N: 6, Mean: 562.0 / 6, SD: math.Sqrt(1168.0 / 15), Lower: 562.0/6 - 1.96*math.Sqrt(1168.0/15), BelowThreshold: true},
	}
	for i, w := range want {
		g := in.Steps[i]
		if g.Level != w.Level || g.N != w.N || math.Abs(g.Mean-w.Mean) > 1e-9 || math.Abs(g.SD-w.SD) > 1e-9 || math.Abs(g.Lower-w.Lower) > 1e-9 || g.BelowThreshold != w.BelowThreshold {
			t.Fatalf("step %d: %+v, want %+v", i, g, w)
		}
	}
	if !strings.HasPrefix(in.Finding, "intervention point w* = 3 (lower bound of SLO satisfaction 76.4% < 90%); no metric changes its trend there") {
		t.Fatalf("finding: %s", in.Finding)
	}
}

func TestInterventionNotFoundAndAtStart(t *testing.T) {
	good := []Trial{{Level: 1, Satisfaction: 99}, {Level: 2, Satisfaction: 98}, {Level: 3, Satisfaction: 99}}
	in, err := AnalyzeIntervention(good, InterventionConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// One trial per level: at level 1 the bound is S itself (sd taken as 0).
	if in.Found || !math.IsNaN(in.WStar) || len(in.Steps) != 3 || in.Steps[0].Lower != 99 {
		t.Fatalf("%+v", in)
	}
	if !strings.HasPrefix(in.Finding, "no intervention point: the lower bound of SLO satisfaction stayed at or above 90% up to the highest level w = 3") {
		t.Fatalf("finding: %s", in.Finding)
	}
	bad := []Trial{{Level: 1, Satisfaction: 50}, {Level: 2, Satisfaction: 40}}
	in, _ = AnalyzeIntervention(bad, InterventionConfig{})
	if !in.Found || in.WStar != 1 || !strings.HasPrefix(in.Finding, "SLO satisfaction is below 90% already at the lowest level w = 1") {
		t.Fatalf("%+v", in)
	}
}

// TestRulesByHand checks the rules and R on first differences worked out
// by hand (type-7 quantiles).
func TestRulesByHand(t *testing.T) {
	// Rule A: dI = {1..5}: q(0.2) = 1.8, q(0.5) = 3, q(0.8) = 4.2;
	// dI' = {0, 0.1, 0.2}: q'(0.1) = 0.02, q'(0.5) = 0.1, q'(0.9) = 0.18.
	// 0.1 < 3 and |1.8 - 4.2| = 2.4 > 0.16: rule A; R = 3 / 0.1 = 30.
	qa, qpa := quantiles([]float64{1, 2, 3, 4, 5}), quantiles([]float64{0, 0.1, 0.2})
	if rule(qa, qpa) != RuleA || math.Abs(ratio(3, 0.1)-30) > 1e-12 {
		t.Fatalf("rule A case: %v %v -> %s", qa, qpa, rule(qa, qpa))
	}
	// Rule B: dI = {1, 2, 3}: q(0.9) = 2.8; dI' = {10, 20, 30}:
	// q'(0.1) = 12 > 2.8: rule B; R = 2 / 20 = 0.1.
	qb, qpb := quantiles([]float64{1, 2, 3}), quantiles([]float64{10, 20, 30})
	if rule(qb, qpb) != RuleB || math.Abs(ratio(2, 20)-0.1) > 1e-12 {
		t.Fatalf("rule B case -> %s", rule(qb, qpb))
	}
	// The same distribution in both intervals matches neither.
	if r := rule(qa, qa); r != RuleNone {
		t.Fatalf("no change -> %s", r)
	}
	// A flattening whose spread does not shrink: median falls, but
	// |q(0.2)-q(0.8)| = 2.4 < |q'(0.1)-q'(0.9)| = 4: not rule A.
	if r := rule(qa, quantiles([]float64{-2, 0, 0, 0, 3})); r != RuleNone {
		t.Fatalf("wide I' -> %s", r)
	}
	// Division by zero.
	if !math.IsInf(ratio(1, 0), 1) || !math.IsNaN(ratio(0, 0)) || ratio(-2, 4) != 0.5 {
		t.Fatal("ratio edge cases")
	}
}

// TestInterventionSmallSweep runs the whole analysis on a sweep small
// enough to follow by hand: levels 10, 20, 30, 40, one trial each, w* = 30.
func TestInterventionSmallSweep(t *testing.T) {
	trials := []Trial{
		{Level: 10, Repetition: 1, Satisfaction: 100, Metrics: map[string]float64{"app1/cpu util_pct": 40, "db1/disk:vda await_ms": 1, "db1/cpu util_pct": 10}},
		{Level: 20, Repetition: 1, Satisfaction: 100, Metrics: map[string]float64{"app1/cpu util_pct": 80, "db1/disk:vda await_ms": 2, "db1/cpu util_pct": 20}},
		{Level: 30, Repetition: 1, Satisfaction: 60, Metrics: map[string]float64{"app1/cpu util_pct": 99, "db1/disk:vda await_ms": 30, "db1/cpu util_pct": 30}},
		{Level: 40, Repetition: 1, Satisfaction: 30, Metrics: map[string]float64{"app1/cpu util_pct": 100, "db1/disk:vda await_ms": 100, "db1/cpu util_pct": 40}},
	}
	in, err := AnalyzeIntervention(trials, InterventionConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if in.WStar != 30 {
		t.Fatalf("w* = %v", in.WStar)
	}
	m := map[string]MetricEffect{}
	for _, e := range in.Metrics {
		m[e.Metric] = e
	}
	// app1/cpu: dY in I = {4} (20), in I' = {1.9, 0.1} (30, 40): q(0.5) = 4 >
	// q'(0.5) = 1, spreads 0 vs |0.28 - 1.72| = 1.44: rule A fails on the
	// spread (one difference in I has none). R = 4 / 1 = 4.
	a := m["app1/cpu util_pct"]
	if a.NI != 1 || a.NIPrime != 2 || math.Abs(a.MeanIPrime-1) > 1e-12 || math.Abs(a.R-4) > 1e-12 || a.Rule != RuleNone || a.Resource != "APP_CPU" || !a.Bounded {
		t.Fatalf("app cpu %+v", a)
	}
	// await: dY in I = {0.1}, in I' = {2.8, 7}: q(0.9) = 0.1 < q'(0.1) =
	// 3.22: rule B; R = 0.1 / 4.9.
	w := m["db1/disk:vda await_ms"]
	if w.Rule != RuleB || math.Abs(w.R-0.1/4.9) > 1e-12 || w.Resource != "DB_DISK" || w.Bounded || w.Dropped {
		t.Fatalf("await %+v", w)
	}
	// db1/cpu never exceeds 90%: dropped.
	if d := m["db1/cpu util_pct"]; !d.Dropped || d.Max != 40 {
		t.Fatalf("db cpu %+v", d)
	}
	if len(in.Ranked) != 1 || in.Ranked[0].Metric != "db1/disk:vda await_ms" || len(in.Resources) != 1 || in.Resources[0].Resource != "DB_DISK" {
		t.Fatalf("ranked %+v resources %+v", in.Ranked, in.Resources)
	}
	if !strings.Contains(in.Finding, "most likely bottleneck: DB_DISK (R = 0.02 from db1/disk:vda await_ms, rule B: its growth jumps)") {
		t.Fatalf("finding: %s", in.Finding)
	}
	// StrictRules still admits a rule-B match of an unbounded metric, and
	// refuses it for a bounded one.
	in2, _ := AnalyzeIntervention(trials, InterventionConfig{StrictRules: true})
	if len(in2.Ranked) != 1 || in2.Ranked[0].Rule != RuleB {
		t.Fatalf("strict: %+v", in2.Ranked)
	}
	in3, _ := AnalyzeIntervention(trials, InterventionConfig{StrictRules: true, Bounded: func(string) bool { return true }, UtilFilter: -1})
	if len(in3.Ranked) != 0 {
		t.Fatalf("strict, all bounded: %+v", in3.Ranked)
	}
}

// TestInterventionDesignedCause: a generated sweep (25 levels, 3
// repetitions) whose designed cause is the application CPU saturating.
func TestInterventionDesignedCause(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		in, err := AnalyzeIntervention(genSweep(seed, 3), InterventionConfig{})
		if err != nil {
			t.Fatal(err)
		}
		// The satisfaction falls from level 150; the bound crosses 90% at
		// 150 or 160.
		if !in.Found || in.WStar < 150 || in.WStar > 160 {
			t.Fatalf("seed %d: w* = %v", seed, in.WStar)
		}
		if len(in.Ranked) == 0 || in.Ranked[0].Metric != "app1/cpu util_pct" || in.Ranked[0].Rule != RuleA || in.Ranked[0].R < 10 {
			t.Fatalf("seed %d: ranked %+v", seed, in.Ranked)
		}
		if in.Resources[0].Resource != "APP_CPU" {
			t.Fatalf("seed %d: resources %+v", seed, in.Resources)
		}
		for _, e := range in.Metrics {
			switch e.Metric {
			case "app1/cpu util_pct":
			case "db1/cpu util_pct":
				if !e.Dropped {
					t.Fatalf("seed %d: db1/cpu never exceeds 90%% but was kept: %+v", seed, e)
				}
			default:
				if e.R < 0.6 || e.R > 1.6 {
					t.Fatalf("seed %d: %s has R = %v, want near 1", seed, e.Metric, e.R)
				}
			}
		}
		if !strings.Contains(in.Finding, "most likely bottleneck: APP_CPU (R = ") {
			t.Fatalf("finding: %s", in.Finding)
		}
	}
}

func TestInterventionErrors(t *testing.T) {
	for _, c := range []struct {
		trials []Trial
		cfg    InterventionConfig
		want   string
	}{
		{nil, InterventionConfig{}, "needs trials"},
		{[]Trial{{Level: 1, Satisfaction: 101}, {Level: 2}}, InterventionConfig{}, "has SLO satisfaction 101; give the percentage"},
		{[]Trial{{Level: 1, Satisfaction: math.NaN()}}, InterventionConfig{}, "has SLO satisfaction NaN"},
		{[]Trial{{Level: math.NaN()}}, InterventionConfig{}, "has level NaN"},
		{[]Trial{{Level: 1, Repetition: 1}, {Level: 1, Repetition: 1}}, InterventionConfig{}, "two trials at level 1 have repetition 1"},
		{[]Trial{{Level: 1, Repetition: 1}, {Level: 1, Repetition: 2}}, InterventionConfig{}, "all trials are at level 1"},
		{[]Trial{{Level: 1}, {Level: 2}}, InterventionConfig{Floor: 120}, "floor 120 is outside (0, 100]"},
		{[]Trial{{Level: 1}, {Level: 2}}, InterventionConfig{Z: -1}, "z -1 is not a positive number"},
	} {
		if _, err := AnalyzeIntervention(c.trials, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("error %v, want %q", err, c.want)
		}
	}
}

func TestMetricResource(t *testing.T) {
	for key, want := range map[string]string{
		"app1/cpu util_pct":                  "APP_CPU",
		"app1/cpu3 user_pct":                 "APP_CPU",
		"db2/disk:vda await_ms":              "DB_DISK",
		"db1/memory cached_bytes":            "DB_MEMORY",
		"web-1/net:eth0 tx_bytes_per_s":      "WEB_NET",
		"db1/cgroup:/lab/db1 throttled_pct":  "DB_CPU",
		"db1/cgroup:/lab/db1 memory_bytes":   "DB_MEMORY",
		"db1/cgroup:/lab/db1 read_ops_per_s": "DB_IO",
		"db1/cgroup:/lab/db1#iops util_pct":  "DB_IO",
		"db1/cgroup:/lab/db1#cpu util_pct":   "DB_CPU",
		"i-0abc/volume:vol-1 queue_length":   "I_0ABC_VOLUME",
		"cm1/proc:java cpu_pct":              "CM_CPU",
		"pool active_connections":            "POOL_ACTIVE_CONNECTIONS",
	} {
		if got := MetricResource(key); got != want {
			t.Errorf("%s -> %s, want %s", key, got, want)
		}
	}
	for key, want := range map[string]bool{"a/cpu util_pct": true, "a/cpu iowait_pct": true, "a/proc:x cpu_pct": false, "a/memory used_bytes": false} {
		if BoundedMetric(key) != want {
			t.Errorf("bounded(%s) != %v", key, want)
		}
	}
}

// TestInterventionDesignedQueue: the designed cause is a disk queue that
// grows slowly below level 140 and steeply above (rule B, R << 1), while
// the application CPU stays linear. The step into level 150 (still in I,
// as w* = 160) already carries part of the jump, so R is about 0.1.
func TestInterventionDesignedQueue(t *testing.T) {
	trials := genSweep(9, 3)
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range trials {
		w := trials[i].Level
		q := 0.02*w + 0.05*rng.NormFloat64()
		if w > 140 {
			q = 0.02*140 + 0.8*(w-140) + 0.5*rng.NormFloat64()
		}
		trials[i].Metrics["db1/disk:vda queue_length"] = math.Max(0, q)
		trials[i].Metrics["app1/cpu util_pct"] = 0.38*w + 1.5*rng.NormFloat64()
	}
	in, err := AnalyzeIntervention(trials, InterventionConfig{})
	if err != nil {
		t.Fatal(err)
	}
	top := in.Ranked[0]
	if top.Metric != "db1/disk:vda queue_length" || top.Rule != RuleB || top.R > 0.2 || in.Resources[0].Resource != "DB_DISK" {
		t.Fatalf("ranked %+v", in.Ranked)
	}
	for _, e := range in.Metrics {
		if e.Metric != top.Metric && !e.Dropped && (e.R < 0.6 || e.R > 1.6) {
			t.Fatalf("%s has R = %v, want near 1", e.Metric, e.R)
		}
	}
}
