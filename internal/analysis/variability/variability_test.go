package variability

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// profile writes a seed-001-style profiling campaign into a real store:
// every request of a run takes exactly that run's tau, and the target's CPU
// reads 5% in the first and last 30 s of the measured window (start-up and
// wind-down) and theta in between.
type profile struct {
	t    *testing.T
	st   *store.Store
	slot int
	at   time.Time
}

func newProfile(t *testing.T) *profile {
	return newProfileOn(t, "")
}

// newProfileOn is newProfile with the load generator's host facts
// (hostinfo.Facts as JSON) recorded in the campaign.
func newProfileOn(t *testing.T, hostJSON string) *profile {
	st := resultstest.Create(t, "", store.Campaign{Name: "profile", CreatedAt: t0, HostJSON: hostJSON})
	return &profile{t: t, st: st, at: t0}
}

type runSpec struct {
	treatment  string
	levelIndex int
	lambda     float64
	rep        int
	tau        time.Duration
	theta      float64
	host       string
	measured   time.Duration // default 120 s
	serverGap  time.Duration // > 0: also store server times, tau - gap per call
	flatCPU    bool          // CPU = theta for the whole window
	clientCPU  float64       // the load generator process's CPU, % of one core
	alsoHost   string        // a second host sampled in the same run, flat at alsoCPU
	alsoCPU    float64
}

func (p *profile) add(r runSpec) {
	t := p.t
	if r.measured == 0 {
		r.measured = 120 * time.Second
	}
	if r.host == "" {
		r.host = "db-" + r.treatment
	}
	p.slot++
	id, err := p.st.StartRun(store.Run{Seq: p.slot, Slot: p.slot, Treatment: r.treatment, Model: "open",
		LevelIndex: r.levelIndex, Level: r.lambda, Repetition: r.rep, Start: p.at})
	if err != nil {
		t.Fatal(err)
	}
	from := p.at.Add(5 * time.Second)
	to := from.Add(r.measured)
	n := int64(r.lambda * r.measured.Seconds())
	h := store.NewHistogram()
	if err := h.RecordValues(r.tau.Microseconds(), n); err != nil {
		t.Fatal(err)
	}
	if err := p.st.AddIntervals([]store.Interval{{RunID: id, Phase: "measure", Op: "read", Start: from, Duration: r.measured, Count: n, Hist: h}}); err != nil {
		t.Fatal(err)
	}
	if r.serverGap > 0 {
		if err := p.st.AddServerTimes([]store.ServerInterval{{RunID: id, Op: "read", Start: from, Duration: r.measured,
			Calls: n, Exec: time.Duration(n) * (r.tau - r.serverGap)}}); err != nil {
			t.Fatal(err)
		}
	}
	var samples []monitor.Sample
	secs := int(r.measured.Seconds())
	for s := 0; s < secs; s++ {
		v := r.theta
		if !r.flatCPU && (s < 30 || s >= secs-30) {
			v = 5
		}
		samples = append(samples, monitor.Sample{Host: r.host, Resource: monitor.ResourceCPU, Metric: monitor.CPUUtilPct,
			Start: from.Add(time.Duration(s) * time.Second), Period: time.Second, Value: v, Source: "synthetic"})
	}
	for s := 0; r.alsoHost != "" && s < secs; s++ {
		samples = append(samples, monitor.Sample{Host: r.alsoHost, Resource: monitor.ResourceCPU, Metric: monitor.CPUUtilPct,
			Start: from.Add(time.Duration(s) * time.Second), Period: time.Second, Value: r.alsoCPU, Source: "synthetic"})
	}
	if err := p.st.AddSamples(id, samples); err != nil {
		t.Fatal(err)
	}
	if err := p.st.FinishRun(id, store.StatusCompleted, "", to, store.RunSummary{Sent: n, Completed: n,
		MeasureStart: from, MeasureEnd: to, MeasureSecs: r.measured.Seconds(), Throughput: r.lambda, ClientCPU: r.clientCPU}); err != nil {
		t.Fatal(err)
	}
	p.at = to.Add(10 * time.Second)
}

// sweep profiles one instance at λ = 10, 20, ..., 80 req/s with reps
// repetitions. The runs' tau are base(λ) + offset(λ) + spread(λ)·z with z
// spaced evenly and centred (for 5 reps: -2..2), so tau_se is known:
// spread·sqrt(Σz²/(n-1))/sqrt(n). theta is λ percent.
func (p *profile) sweep(treatment string, reps int, spread, offset func(lambda float64) time.Duration, gap time.Duration) {
	for i := 0; i < 8; i++ {
		lambda := float64(10 * (i + 1))
		base := 20*time.Millisecond + time.Duration(lambda/2*float64(time.Millisecond))
		for rep := 1; rep <= reps; rep++ {
			z := float64(rep) - float64(reps+1)/2
			tau := base + offset(lambda) + time.Duration(z*float64(spread(lambda)))
			p.add(runSpec{treatment: treatment, levelIndex: i, lambda: lambda, rep: rep, tau: tau, theta: lambda, serverGap: gap})
		}
	}
}

func step(below float64, lo, hi time.Duration) func(float64) time.Duration {
	return func(l float64) time.Duration {
		if l < below {
			return lo
		}
		return hi
	}
}

// input reads the runs through the results model, as FromResults does.
func (p *profile) input() (Input, error) {
	r, err := results.New(p.st)
	if err != nil {
		return Input{}, err
	}
	return ReadInput(r)
}

func (p *profile) analyze(cfg Config) Result {
	p.t.Helper()
	in, err := p.input()
	if err != nil {
		p.t.Fatal(err)
	}
	res, err := Analyze(in, cfg)
	if err != nil {
		p.t.Fatal(err)
	}
	return res
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// 5 repetitions whose spread jumps from 1 ms to 20 ms at 60 req/s:
// tau_se = spread·sqrt(0.5), 0.71 ms then 14.1 ms, so (a) passes up to 50
// req/s and the valid range ends exactly there, at theta = 50%.
func TestRepeatabilityRangeEndsAtDesignedLevel(t *testing.T) {
	p := newProfile(t)
	p.sweep("a", 5, step(60, time.Millisecond, 20*time.Millisecond), step(0, 0, 0), 0)
	res := p.analyze(Config{Thresholds: Absolute})
	if len(res.Instances) != 1 || len(res.Groups) != 1 || res.Policies != nil {
		t.Fatalf("instances %d groups %d policies %v", len(res.Instances), len(res.Groups), res.Policies)
	}
	a := res.Instances[0]
	if a.Name != "a" || a.Host != "db-a" || len(a.Levels) != 8 {
		t.Fatalf("instance %+v", a)
	}
	for _, row := range a.Levels {
		wantSE := 1000 * math.Sqrt(0.5)
		want := Pass
		if row.Level >= 60 {
			wantSE, want = 20000*math.Sqrt(0.5), Fail
		}
		if !near(row.Tau.SE, wantSE, 0.02*wantSE) || row.Repeatable != want || row.Tau.N != 5 {
			t.Errorf("λ=%v: tau_se %v (want %v), verdict %v (want %v)", row.Level, row.Tau.SE, wantSE, row.Repeatable, want)
		}
		// tau's mean is base(λ) = 20 ms + λ/2 ms.
		if wantTau := 20000 + row.Level*500; !near(row.Tau.Mean, wantTau, 0.002*wantTau) {
			t.Errorf("λ=%v: tau %v, want %v", row.Level, row.Tau.Mean, wantTau)
		}
		// Trimming removes the 5% edges: theta is exactly λ percent.
		if row.Theta.N != 5 || !near(row.Theta.Mean, row.Level, 1e-9) || row.Theta.SE != 0 {
			t.Errorf("λ=%v: theta %+v", row.Level, row.Theta)
		}
		if row.Mu.N != 0 || len(row.Notes) != 0 {
			t.Errorf("λ=%v: mu %+v notes %v", row.Level, row.Mu, row.Notes)
		}
	}
	r := res.Groups[0].Range
	if !r.Valid || r.Level != 50 || r.End != 60 || !near(r.Theta, 50, 1e-9) {
		t.Fatalf("range %+v; want valid up to 50 req/s at theta 50%%, ending at 60", r)
	}
	if r.Statement != "measurements are repeatable up to θ = 50% / λ = 50 req/s" {
		t.Errorf("statement %q", r.Statement)
	}
	if !strings.Contains(r.Reason, "at λ = 60 req/s: tau_se 14.1 ms >= 5.00 ms on a") {
		t.Errorf("reason %q", r.Reason)
	}

	// Without trimming, theta averages in the edges: (60·λ + 60·5)/120.
	res = p.analyze(Config{NoTrim: true, Thresholds: Absolute})
	if row := res.Instances[0].Levels[4]; !near(row.Theta.Mean, (60*50+60*5)/120.0, 1e-9) {
		t.Errorf("untrimmed theta at 50 req/s = %v, want 27.5", row.Theta.Mean)
	}
	// A looser threshold (15 ms) accepts the whole sweep.
	res = p.analyze(Config{RepeatSE: 15 * time.Millisecond})
	if r := res.Groups[0].Range; r.Level != 80 || !math.IsNaN(r.End) || !strings.HasSuffix(r.Statement, "(the highest level measured)") {
		t.Errorf("range with 15 ms threshold %+v", r)
	}
}

// Two instances created equal, c slower than b by 10 ms up to 30 req/s and
// by 40 ms from 40 req/s on: (b) fails at 40 and the group's range ends at
// 30. Server times 2 ms below tau give mu = 2 ms.
func TestCrossInstanceOffset(t *testing.T) {
	p := newProfile(t)
	small := step(0, 0, 500*time.Microsecond)
	p.sweep("b", 3, small, step(0, 0, 0), 2*time.Millisecond)
	p.sweep("c", 3, small, step(40, 10*time.Millisecond, 40*time.Millisecond), 2*time.Millisecond)
	res := p.analyze(Config{Groups: [][]string{{"b", "c"}}, Thresholds: Absolute})
	if len(res.Groups) != 1 {
		t.Fatalf("groups %d", len(res.Groups))
	}
	g := res.Groups[0]
	if len(g.Cross) != 8 {
		t.Fatalf("cross rows %d", len(g.Cross))
	}
	for _, c := range g.Cross {
		want, verdict := 10000.0, Pass
		if c.Level >= 40 {
			want, verdict = 40000, Fail
		}
		if !near(c.MaxDiff, want, 50) || c.Verdict != verdict || c.Pair != [2]string{"c", "b"} || c.Instances != 2 {
			t.Errorf("λ=%v: %+v, want diff %v %v", c.Level, c, want, verdict)
		}
	}
	if r := g.Range; r.Level != 30 || r.End != 40 || !strings.Contains(r.Reason, "|tau(c) - tau(b)| = 40.0 ms >= 30.0 ms") {
		t.Errorf("range %+v", r)
	}
	if r := g.Range; !near(r.Theta, 30, 1e-9) || r.Statement != "measurements are repeatable up to θ = 30% / λ = 30 req/s" {
		t.Errorf("statement %q theta %v", r.Statement, r.Theta)
	}
	for _, inst := range res.Instances {
		for _, row := range inst.Levels {
			if row.Mu.N != 3 || !near(row.Mu.Mean, 2000, 30) {
				t.Errorf("%s λ=%v: mu %+v, want 2000 µs", inst.Name, row.Level, row.Mu)
			}
		}
	}
	// The default groups are one per instance: each alone is repeatable
	// over the whole sweep.
	res = p.analyze(Config{})
	if len(res.Groups) != 2 || res.Groups[0].Range.Level != 80 || res.Groups[1].Range.Level != 80 || len(res.Groups[0].Cross) != 0 {
		t.Errorf("default groups %+v", res.Groups)
	}
	// A higher threshold (45 ms) accepts the offset.
	res = p.analyze(Config{Groups: [][]string{{"b", "c"}}, CrossDiff: 45 * time.Millisecond})
	if res.Groups[0].Range.Level != 80 {
		t.Errorf("range with 45 ms threshold %+v", res.Groups[0].Range)
	}
}

// Reset policies: two instances repopulated by script whose spread grows
// at 50 req/s, two restored from a snapshot whose spread never grows. The
// comparison reports tau_se per policy per level and each policy's range.
func TestResetPolicies(t *testing.T) {
	p := newProfile(t)
	none := step(0, 0, 0)
	p.sweep("script-1", 4, step(50, time.Millisecond, 30*time.Millisecond), none, 0)
	p.sweep("script-2", 4, step(50, 2*time.Millisecond, 30*time.Millisecond), none, 0)
	p.sweep("snap-1", 4, step(0, 0, time.Millisecond), none, 0)
	p.sweep("snap-2", 4, step(0, 0, 3*time.Millisecond), none, 0)
	res := p.analyze(Config{Thresholds: Absolute, Policies: map[string]string{"script-1": "repopulate", "script-2": "repopulate", "snap-1": "restore", "snap-2": "restore"}})
	if len(res.Policies) != 2 || res.Policies[0].Policy != "repopulate" || res.Policies[1].Policy != "restore" {
		t.Fatalf("policies %+v", res.Policies)
	}
	// 4 reps, z = -1.5, -0.5, 0.5, 1.5: Σz² = 5, tau_se = spread·sqrt(5/3)/2.
	k := math.Sqrt(5.0/3) / 2
	script, snap := res.Policies[0], res.Policies[1]
	for i, row := range script.Levels {
		want, wantMax := k*1500, k*2000
		if row.Level >= 50 {
			want, wantMax = k*30000, k*30000
		}
		if row.Instances != 2 || !near(row.TauSE, want, 0.01*want) || !near(row.TauSEMax, wantMax, 0.01*wantMax) {
			t.Errorf("repopulate level %d: %+v, want mean %v max %v", i, row, want, wantMax)
		}
	}
	for i, row := range snap.Levels {
		if want := k * 2000; !near(row.TauSE, want, 0.01*want) || !near(row.TauSEMax, k*3000, 0.01*k*3000) {
			t.Errorf("restore level %d: %+v, want %v", i, row, want)
		}
	}
	if script.Range.Level != 40 || script.Range.End != 50 || !strings.Contains(script.Range.Statement, "θ = 40% / λ = 40 req/s") {
		t.Errorf("repopulate range %+v", script.Range)
	}
	if snap.Range.Level != 80 || !strings.HasSuffix(snap.Range.Statement, "(the highest level measured)") {
		t.Errorf("restore range %+v", snap.Range)
	}
}

// A measured window no longer than the trims falls back to the whole
// window, with a note; one repetition leaves (a) undecided, and the range
// is then not valid even at the lowest level.
func TestShortRunsAndSingleRepetition(t *testing.T) {
	p := newProfile(t)
	p.add(runSpec{treatment: "x", levelIndex: 0, lambda: 10, rep: 1, tau: 30 * time.Millisecond, theta: 42, measured: 50 * time.Second, flatCPU: true})
	res := p.analyze(Config{})
	row := res.Instances[0].Levels[0]
	if row.Theta.N != 1 || row.Theta.Mean != 42 || row.Repeatable != Unknown {
		t.Fatalf("row %+v", row)
	}
	if len(row.Notes) != 2 || !strings.Contains(row.Notes[0], "whole measured window: it is not longer than the trims (30s + 30s)") ||
		!strings.Contains(row.Notes[1], "tau_se is undefined") {
		t.Errorf("notes %q", row.Notes)
	}
	r := res.Groups[0].Range
	if r.Valid || !math.IsNaN(r.Level) || r.End != 10 ||
		r.Statement != "measurements are not repeatable even at the lowest level, at λ = 10 req/s: tau_se undefined on x (1 repetition(s) with a response time)" {
		t.Errorf("range %+v", r)
	}
}

func TestErrors(t *testing.T) {
	p := newProfile(t)
	p.add(runSpec{treatment: "x", levelIndex: 0, lambda: 10, rep: 1, tau: 30 * time.Millisecond, theta: 42, host: "db"})
	p.add(runSpec{treatment: "x", levelIndex: 0, lambda: 10, rep: 2, tau: 30 * time.Millisecond, theta: 42, host: "client"})
	in, err := p.input()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Analyze(in, Config{}); err == nil || !strings.Contains(err.Error(), "hosts client, db, and theta is the CPU of one server's host; name it in the spec with analysis.variability.host") {
		t.Errorf("two hosts: %v", err)
	}
	res, err := Analyze(in, Config{Host: "db"})
	if err != nil || res.Instances[0].Levels[0].Theta.N != 1 || !strings.Contains(res.Instances[0].Levels[0].Notes[0], "1 run(s) have no CPU sample of db") {
		t.Errorf("host db: %v %+v", err, res.Instances)
	}
	for _, cfg := range []Config{
		{Host: "db", Groups: [][]string{{"x", "y"}}},
		{Host: "db", Groups: [][]string{{}}},
		{Host: "db", Policies: map[string]string{"x": ""}},
		{Host: "db", Policies: map[string]string{"z": "restore"}},
		{Host: "db", RepeatSE: -time.Millisecond},
		{Host: "db", TrimStart: -time.Second},
		{Host: "db", Op: "scan"},
	} {
		if _, err := Analyze(in, cfg); err == nil {
			t.Errorf("config %+v: want an error", cfg)
		}
	}
	if _, err := Analyze(Input{}, Config{}); err == nil {
		t.Error("no runs: want an error")
	}
}
