package bottleneck

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// truthF is the share of a series' points above alpha: the designed f_R,
// counted directly from the generated data.
func truthF(s []Series, id string, alpha float64) float64 {
	for _, x := range s {
		if x.Resource == id {
			n := 0
			for _, p := range x.Points {
				if p.Util > alpha {
					n++
				}
			}
			return float64(n) / float64(len(x.Points))
		}
	}
	return math.NaN()
}

func stat(t *testing.T, r Result, id string) ResourceStat {
	t.Helper()
	for _, st := range r.Resources {
		if st.Resource == id {
			return st
		}
	}
	t.Fatalf("no resource %s in %+v", id, r.Resources)
	return ResourceStat{}
}

func classify(t *testing.T, s []Series, cfg Config) Result {
	t.Helper()
	r, err := Classify(s, Window{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSingle(t *testing.T) {
	s := synth(1, 600, genSingle)
	r := classify(t, s, Config{})
	if r.Intervals != 600 {
		t.Fatalf("intervals = %d, want 600", r.Intervals)
	}
	st := stat(t, r, "db1/cpu")
	if st.Class != ClassSingle || st.Saturation != SaturationFull {
		t.Fatalf("db1/cpu: %+v, want single, full", st)
	}
	if want := truthF(s, "db1/cpu", 95); st.F != want || math.Abs(st.F-0.97) > 0.02 {
		t.Fatalf("f_R = %v, want %v (about 0.97)", st.F, want)
	}
	for _, id := range []string{"app1/cpu", "db1/disk:vda"} {
		if st := stat(t, r, id); st.Class != "" || st.Saturation != SaturationNone || st.F != 0 {
			t.Fatalf("%s: %+v, want no bottleneck", id, st)
		}
	}
	if len(r.Bottlenecks) != 1 || !r.Bottlenecks[0].Primary || r.Bottlenecks[0].F != st.F {
		t.Fatalf("bottlenecks = %+v", r.Bottlenecks)
	}
	want := fmt.Sprintf("single bottleneck: db1/cpu, critically saturated in %.0f%% of 1s intervals (f_R = %.2f, mean utilisation %.0f%%)", 100*st.F, st.F, st.Mean)
	if r.Finding != want {
		t.Fatalf("finding:\n%s\nwant\n%s", r.Finding, want)
	}
	// A single bottleneck resource has two states: saturated or not.
	if len(r.States) != 2 || len(r.States[0].Saturated) != 0 || math.Abs(r.States[1].Freq-st.F) > 1e-12 {
		t.Fatalf("states = %+v", r.States)
	}
	if got := r.Bottlenecks[0].Label(); got != "DB_CPU" {
		t.Fatalf("label = %q", got)
	}
}

func TestConcurrent(t *testing.T) {
	s := synth(2, 600, genConcurrent)
	r := classify(t, s, Config{})
	a, b := stat(t, r, "app1/cpu"), stat(t, r, "db1/net:eth0")
	if a.Class != ClassConcurrent || b.Class != ClassConcurrent {
		t.Fatalf("classes %s, %s; want concurrent", a.Class, b.Class)
	}
	if math.Abs(a.F-0.4) > 0.06 || math.Abs(b.F-0.5) > 0.06 {
		t.Fatalf("f_R = %v, %v; designed 0.4, 0.5", a.F, b.F)
	}
	if len(r.Pairs) != 1 || r.Pairs[0].Dependent || math.Abs(r.Pairs[0].Joint-0.2) > 0.05 || math.Abs(r.Pairs[0].Independent-a.F*b.F) > 1e-12 {
		t.Fatalf("pair = %+v, want independent with joint about 0.2", r.Pairs)
	}
	// Primary: the higher frequency, db1/net:eth0.
	p := r.Primary()
	if len(p) != 1 || p[0].Resources[0] != "db1/net:eth0" || p[0].Class != ClassConcurrent {
		t.Fatalf("primary = %+v", p)
	}
	if !strings.HasPrefix(r.Finding, fmt.Sprintf("concurrent bottlenecks: app1/cpu and db1/net:eth0 saturate independently, each part of the time (f_R = %.2f to %.2f)", a.F, b.F)) ||
		!strings.HasSuffix(r.Finding, fmt.Sprintf("Primary bottleneck: db1/net:eth0 (f_B = %.2f)", b.F)) {
		t.Fatalf("finding: %s", r.Finding)
	}
	// Four states: none, each alone, both; frequencies sum to 1.
	if len(r.States) != 4 || len(r.States[3].Saturated) != 2 {
		t.Fatalf("states = %+v", r.States)
	}
	var sum float64
	for _, st := range r.States {
		sum += st.Freq
	}
	if math.Abs(sum-1) > 1e-12 || math.Abs(r.States[3].Freq-r.Pairs[0].Joint) > 1e-12 {
		t.Fatalf("state frequencies sum to %v; both = %v, joint %v", sum, r.States[3].Freq, r.Pairs[0].Joint)
	}
}

func TestOscillatory(t *testing.T) {
	s := synth(3, 600, genOscillatory)
	r := classify(t, s, Config{})
	disks := []string{"db1/disk:vda", "db2/disk:vda", "db3/disk:vda"}
	most := 0.0
	for _, id := range disks {
		st := stat(t, r, id)
		if st.Class != ClassOscillatory || st.Saturation != SaturationPartial || math.Abs(st.F-0.85/3) > 0.05 {
			t.Fatalf("%s: %+v, want oscillatory, partial, f_R about 0.28", id, st)
		}
		most = math.Max(most, st.F)
		// Average utilisation is far below saturation: the case 003 §6.6
		// warns about.
		if st.Mean > 70 {
			t.Fatalf("%s mean %v", id, st.Mean)
		}
	}
	for _, p := range r.Pairs {
		if !p.Dependent || p.Both != 0 {
			t.Fatalf("pair %+v, want dependent with no overlap", p)
		}
	}
	if len(r.Bottlenecks) != 1 {
		t.Fatalf("bottlenecks = %+v, want one oscillatory set", r.Bottlenecks)
	}
	b := r.Bottlenecks[0]
	wantFB := truthF(s, "db1/disk:vda", 95) + truthF(s, "db2/disk:vda", 95) + truthF(s, "db3/disk:vda", 95)
	if b.Class != ClassOscillatory || strings.Join(b.Resources, ",") != strings.Join(disks, ",") || math.Abs(b.F-wantFB) > 1e-12 || !b.Primary {
		t.Fatalf("bottleneck = %+v, want the three disks with f_B = %v", b, wantFB)
	}
	if math.Abs(b.F-0.85) > 0.04 {
		t.Fatalf("f_B = %v, designed 0.85", b.F)
	}
	want := fmt.Sprintf("oscillatory bottleneck: disk:vda of db1..db3 saturate in turn (f_B = %.2f), none alone more than %.0f%% of the time", b.F, 100*most)
	if r.Finding != want {
		t.Fatalf("finding:\n%s\nwant\n%s", r.Finding, want)
	}
	// Four states: none or exactly one disk.
	if len(r.States) != 4 {
		t.Fatalf("states = %+v", r.States)
	}
	for _, st := range r.States {
		if len(st.Saturated) > 1 {
			t.Fatalf("overlapping state %+v", st)
		}
	}
	if b.Label() != "DB_DISK (oscillatory)" {
		t.Fatalf("label %q", b.Label())
	}
}

func TestSimultaneous(t *testing.T) {
	s := synth(4, 600, genSimultaneous)
	r := classify(t, s, Config{})
	for _, id := range []string{"app1/cpu", "db1/disk:vda"} {
		st := stat(t, r, id)
		if st.Class != ClassSimultaneous || st.Saturation != SaturationFull {
			t.Fatalf("%s: %+v, want simultaneous, full", id, st)
		}
	}
	if len(r.Pairs) != 1 || r.Pairs[0].Dependent || r.Pairs[0].Joint < 0.9 {
		t.Fatalf("pair = %+v", r.Pairs)
	}
	if !strings.HasPrefix(r.Finding, "simultaneous bottlenecks: app1/cpu and db1/disk:vda are saturated in nearly every interval, independently (f_R = ") {
		t.Fatalf("finding: %s", r.Finding)
	}
}

func TestNoBottleneck(t *testing.T) {
	s := synth(5, 120, func(c int, rng *rand.Rand) map[string]float64 {
		return map[string]float64{"db1/cpu": busy(rng, 60), "db1/disk:vda": busy(rng, 20)}
	})
	r := classify(t, s, Config{})
	if len(r.Bottlenecks) != 0 || r.States != nil || r.Pairs != nil {
		t.Fatalf("result = %+v", r)
	}
	if !strings.HasPrefix(r.Finding, "no bottleneck: no resource was above 95% utilisation in more than 1% of its 1s intervals (busiest: db1/cpu") {
		t.Fatalf("finding: %s", r.Finding)
	}
	r = classify(t, nil, Config{})
	if r.Finding != "no bottleneck can be judged: no resource utilisation was observed" {
		t.Fatalf("empty finding: %s", r.Finding)
	}
}

// series from explicit utilisations, one per second.
func explicit(u map[string][]float64) []Series {
	n := 0
	for _, v := range u {
		n = len(v)
	}
	return synth(0, n, func(c int, _ *rand.Rand) map[string]float64 {
		m := map[string]float64{}
		for id, v := range u {
			m[id] = v[c]
		}
		return m
	})
}

// TestHandComputed checks every count on ten intervals worked out by hand.
func TestHandComputed(t *testing.T) {
	const S, L = 99.0, 10.0 // saturated, low
	s := explicit(map[string][]float64{
		//        0  1  2  3  4  5  6  7  8  9
		"a/cpu":  {S, S, S, S, S, S, L, L, L, L}, // f = 0.6
		"b/cpu":  {S, S, S, L, L, L, L, L, L, S}, // f = 0.4, with a: 3/10
		"c/cpu":  {L, L, L, L, L, L, S, S, L, L}, // f = 0.2, with a: 0, with b: 0
		"d/cpu":  {L, L, L, L, L, L, L, L, L, L}, // f = 0
		"e/disk": {S, S, S, S, S, S, S, S, S, S}, // f = 1, full
	})
	r := classify(t, s, Config{})
	wantF := map[string]float64{"a/cpu": 0.6, "b/cpu": 0.4, "c/cpu": 0.2, "d/cpu": 0, "e/disk": 1}
	for id, f := range wantF {
		if st := stat(t, r, id); math.Abs(st.F-f) > 1e-12 {
			t.Fatalf("%s f_R = %v, want %v", id, st.F, f)
		}
	}
	joint := map[string]float64{"a/cpu-b/cpu": 0.3, "a/cpu-c/cpu": 0, "b/cpu-c/cpu": 0, "a/cpu-e/disk": 0.6, "b/cpu-e/disk": 0.4, "c/cpu-e/disk": 0.2}
	if len(r.Pairs) != len(joint) {
		t.Fatalf("pairs = %+v", r.Pairs)
	}
	for _, p := range r.Pairs {
		want, ok := joint[p.A+"-"+p.B]
		if !ok || math.Abs(p.Joint-want) > 1e-12 || p.Dependent != (want <= 0.05) || p.Intervals != 10 {
			t.Fatalf("pair %+v, want joint %v", p, want)
		}
	}
	// c is dependent on a and b; a and b are not dependent on each other:
	// the maximal oscillatory sets are {a, c} and {b, c}. e is full and
	// independent: simultaneous.
	var osc []string
	for _, b := range r.Bottlenecks {
		if b.Class == ClassOscillatory {
			osc = append(osc, strings.Join(b.Resources, "+"))
		}
	}
	if strings.Join(osc, " ") != "a/cpu+c/cpu b/cpu+c/cpu" && strings.Join(osc, " ") != "b/cpu+c/cpu a/cpu+c/cpu" {
		t.Fatalf("oscillatory sets %v", osc)
	}
	for _, b := range r.Bottlenecks {
		switch strings.Join(b.Resources, "+") {
		case "a/cpu+c/cpu":
			if b.F != 0.8 {
				t.Fatalf("f_B(a, c) = %v, want 0.8", b.F)
			}
		case "b/cpu+c/cpu":
			if b.F != 0.6 {
				t.Fatalf("f_B(b, c) = %v, want 0.6", b.F)
			}
		case "e/disk":
			if b.Class != ClassSimultaneous || b.F != 1 || !b.Primary {
				t.Fatalf("e: %+v", b)
			}
		}
	}
	if stat(t, r, "e/disk").Class != ClassSimultaneous || stat(t, r, "d/cpu").Class != "" ||
		stat(t, r, "a/cpu").Class != ClassOscillatory || stat(t, r, "b/cpu").Class != ClassOscillatory || stat(t, r, "c/cpu").Class != ClassOscillatory {
		t.Fatalf("classes: %+v", r.Resources)
	}
	// States over the four bottleneck resources a, b, c, e.
	want := map[string]int{"e/disk": 0, "a/cpu,e/disk": 3, "a/cpu,b/cpu,e/disk": 3, "c/cpu,e/disk": 2, "b/cpu,e/disk": 1}
	want["e/disk"] = 10 - 3 - 3 - 2 - 1
	got := map[string]int{}
	for _, st := range r.States {
		got[strings.Join(st.Saturated, ",")] = st.Intervals
		if math.Abs(st.Freq-float64(st.Intervals)/10) > 1e-12 {
			t.Fatalf("state %+v", st)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("states %v, want %v", got, want)
	}
	if !strings.HasSuffix(r.Finding, "Primary bottleneck: e/disk (f_B = 1.00)") {
		t.Fatalf("finding: %s", r.Finding)
	}
}

// TestFullDependent: a fully saturated resource whose partner saturates
// only in the intervals it does not, the combination 003 never observed.
func TestFullDependent(t *testing.T) {
	a := make([]float64, 100)
	b := make([]float64, 100)
	for i := range a {
		a[i], b[i] = 99, 10
		if i%25 == 0 { // 4 intervals: b saturated, a not
			a[i], b[i] = 10, 99
		}
	}
	r := classify(t, explicit(map[string][]float64{"db1/cpu": a, "db1/disk:vda": b}), Config{})
	if st := stat(t, r, "db1/cpu"); st.Class != ClassOther || st.Saturation != SaturationFull || st.F != 0.96 {
		t.Fatalf("db1/cpu %+v", st)
	}
	if st := stat(t, r, "db1/disk:vda"); st.Class != ClassOther || st.Saturation != SaturationPartial || st.F != 0.04 {
		t.Fatalf("db1/disk:vda %+v", st)
	}
	if !strings.HasPrefix(r.Finding, "bottleneck resources cpu and disk:vda of db1 never saturate together with a partner although one side is fully saturated (f_R = 0.04 to 0.96)") {
		t.Fatalf("finding: %s", r.Finding)
	}
	if p := r.Primary(); len(p) != 1 || p[0].Resources[0] != "db1/cpu" {
		t.Fatalf("primary %+v", p)
	}
}

// TestThresholds: the boundaries of alpha, Partial and Full, and noise
// around alpha.
func TestThresholds(t *testing.T) {
	n := 100
	at := func(k int, hi float64) []float64 { // k intervals at hi, the rest at 50
		v := make([]float64, n)
		for i := range v {
			v[i] = 50
			if i < k {
				v[i] = hi
			}
		}
		return v
	}
	r := classify(t, explicit(map[string][]float64{
		"a/cpu": at(100, 95),    // exactly alpha: not saturated (> alpha needed)
		"b/cpu": at(1, 99),      // f = 0.01 = Partial: not a bottleneck (> needed)
		"c/cpu": at(2, 99),      // f = 0.02: partial
		"d/cpu": at(95, 99),     // f = 0.95 = Full: fully saturated (>= Full)
		"e/cpu": at(94, 95.001), // just above alpha, f = 0.94: partial
	}), Config{})
	want := map[string]Saturation{"a/cpu": SaturationNone, "b/cpu": SaturationNone, "c/cpu": SaturationPartial, "d/cpu": SaturationFull, "e/cpu": SaturationPartial}
	for id, s := range want {
		if st := stat(t, r, id); st.Saturation != s {
			t.Fatalf("%s: %+v, want %s", id, st, s)
		}
	}

	// 94.7 and 95.3 for half a second each average to 95 (up to rounding):
	// never saturated, whatever the rounding.
	var pts []Point
	for c := range 60 {
		pts = append(pts,
			Point{Start: t0.Add(time.Duration(c) * time.Second), Period: 500 * time.Millisecond, Util: 94.7},
			Point{Start: t0.Add(time.Duration(c)*time.Second + 500*time.Millisecond), Period: 500 * time.Millisecond, Util: 95.3})
	}
	r = classify(t, []Series{{Resource: "a/cpu", Points: pts}}, Config{})
	if st := stat(t, r, "a/cpu"); st.Saturated != 0 || math.Abs(st.Mean-95) > 1e-9 {
		t.Fatalf("averaged to alpha: %+v", st)
	}

	// Noise of ±0.5 around alpha: each resource is above alpha about half
	// the time, independently, so both are partial and concurrent; the
	// verdict is the same for every seed.
	for seed := uint64(10); seed < 20; seed++ {
		r := classify(t, synth(seed, 600, genNearAlpha), Config{})
		for _, id := range []string{"db1/cpu", "db2/cpu"} {
			st := stat(t, r, id)
			if st.Class != ClassConcurrent || math.Abs(st.F-0.5) > 0.08 {
				t.Fatalf("seed %d %s: %+v, want concurrent with f_R about 0.5", seed, id, st)
			}
		}
	}
}

func TestConfigErrors(t *testing.T) {
	s := synth(1, 10, genSingle)
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Alpha: 120}, "alpha 120 is outside (0, 100]"},
		{Config{Full: 1.5}, "full 1.5 is outside (0, 1]"},
		{Config{Partial: 0.99}, "partial 0.99 must lie in [0, full=0.95)"},
		{Config{Epsilon: 2}, "epsilon 2 is outside (0, 1)"},
		{Config{Lambda: -time.Second}, "lambda -1s is negative"},
	} {
		if _, err := Classify(s, Window{}, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%+v: error %v, want %q", c.cfg, err, c.want)
		}
	}
	if _, err := Classify(append(s, s[0]), Window{}, Config{}); err == nil || !strings.Contains(err.Error(), "resource app1/cpu is given twice") {
		t.Fatalf("duplicate: %v", err)
	}
	if _, err := Classify(s, Window{From: t0, To: t0.Add(500 * time.Millisecond)}, Config{}); err == nil || !strings.Contains(err.Error(), "shorter than lambda") {
		t.Fatalf("short window: %v", err)
	}
}

func TestLambdaAggregation(t *testing.T) {
	// 100 ms samples; the resource is saturated for the first 900 ms of
	// every second and idle for the last 100 ms: 0.9*99 + 0.1*0 = 89.1 per
	// second, never saturated at lambda = 1 s; at lambda = 100 ms it is
	// saturated 90% of the time.
	var pts []Point
	for i := range 600 {
		u := 99.0
		if i%10 == 9 {
			u = 0
		}
		pts = append(pts, Point{Start: t0.Add(time.Duration(i) * 100 * time.Millisecond), Period: 100 * time.Millisecond, Util: u})
	}
	s := []Series{{Resource: "db1/cpu", Points: pts}}
	r := classify(t, s, Config{})
	if st := stat(t, r, "db1/cpu"); r.Intervals != 60 || st.Intervals != 60 || st.F != 0 || math.Abs(st.Mean-89.1) > 1e-9 {
		t.Fatalf("lambda 1s: %d intervals, %+v", r.Intervals, st)
	}
	r = classify(t, s, Config{Lambda: 100 * time.Millisecond})
	if st := stat(t, r, "db1/cpu"); r.Intervals != 600 || math.Abs(st.F-0.9) > 1e-12 {
		t.Fatalf("lambda 100ms: %d intervals, %+v", r.Intervals, st)
	}
}

// TestDocExamples pins the findings quoted in docs/bottleneck.md.
func TestDocExamples(t *testing.T) {
	for _, c := range []struct {
		s    []Series
		want string
	}{
		{synth(1, 600, genSingle), "single bottleneck: db1/cpu, critically saturated in 98% of 1s intervals (f_R = 0.98, mean utilisation 97%)"},
		{synth(3, 600, genOscillatory), "oscillatory bottleneck: disk:vda of db1..db3 saturate in turn (f_B = 0.86), none alone more than 29% of the time"},
		{synth(2, 600, genConcurrent), "concurrent bottlenecks: app1/cpu and db1/net:eth0 saturate independently, each part of the time (f_R = 0.44 to 0.54). Primary bottleneck: db1/net:eth0 (f_B = 0.54)"},
	} {
		if r := classify(t, c.s, Config{}); r.Finding != c.want {
			t.Fatalf("finding\n%s\nwant\n%s", r.Finding, c.want)
		}
	}
	in, err := AnalyzeIntervention(genSweep(1, 3), InterventionConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "intervention point w* = 160 (lower bound of SLO satisfaction 84.4% < 90%); most likely bottleneck: APP_CPU (R = 196.34 from app1/cpu util_pct, rule A: its growth flattens)"; in.Finding != want {
		t.Fatalf("finding\n%s\nwant\n%s", in.Finding, want)
	}
}

// An oscillatory set whose members were never all observed in one interval
// (monitoring gaps) has an undefined f_B. It must not be primary, must sort
// after the defined bottlenecks, and must not break the finding (it used
// to leave no primary bottleneck at all, and the finding indexed one).
func TestOscillatoryWithoutCommonInterval(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	// 30 intervals of 1 s; util 99 in the listed seconds, 10 otherwise,
	// observed only in [from, to).
	mk := func(id string, spans [][2]int, sat ...int) Series {
		s := Series{Resource: id}
		hot := map[int]bool{}
		for _, c := range sat {
			hot[c] = true
		}
		for _, sp := range spans {
			for c := sp[0]; c < sp[1]; c++ {
				u := 10.0
				if hot[c] {
					u = 99
				}
				s.Points = append(s.Points, Point{Start: t0.Add(time.Duration(c) * time.Second), Period: time.Second, Util: u})
			}
		}
		return s
	}
	all := [][2]int{{0, 30}}
	series := []Series{
		mk("h/a", [][2]int{{0, 10}, {20, 30}}, 0, 1, 20, 21),
		mk("h/b", [][2]int{{0, 20}}, 5, 6, 15, 16),
		mk("h/c", [][2]int{{10, 30}}, 12, 13, 25, 26),
		// d saturates whenever a, b or c does: independent of each.
		mk("h/d", all, 0, 1, 5, 6, 12, 13, 15, 16, 20, 21, 25, 26),
	}
	r, err := Classify(series, Window{From: t0, To: t0.Add(30 * time.Second)}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Bottlenecks) != 2 {
		t.Fatalf("bottlenecks %+v, want the oscillatory a, b, c and the concurrent d", r.Bottlenecks)
	}
	first, second := r.Bottlenecks[0], r.Bottlenecks[1]
	if first.Class != ClassConcurrent || first.Resources[0] != "h/d" || math.Abs(first.F-0.4) > 1e-12 || !first.Primary {
		t.Errorf("first bottleneck %+v, want the concurrent h/d with f_B 0.4, primary", first)
	}
	if second.Class != ClassOscillatory || len(second.Resources) != 3 || !math.IsNaN(second.F) || second.Primary {
		t.Errorf("second bottleneck %+v, want the oscillatory a, b, c with undefined f_B, not primary", second)
	}
	if !strings.Contains(r.Finding, "Primary bottleneck: h/d (f_B = 0.40)") || !strings.Contains(r.Finding, "f_B undefined") {
		t.Errorf("finding %q", r.Finding)
	}
}
