package capacity

import (
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// campaign writes synthetic runs into a real results store.
type campaign struct {
	t    *testing.T
	st   *store.Store
	rng  *rand.Rand
	slot int
	at   time.Time
}

func newCampaign(t *testing.T, seed int64) *campaign {
	st := resultstest.Create(t, "", store.Campaign{Name: "synthetic", Seed: seed, CreatedAt: t0})
	return &campaign{t: t, st: st, rng: rand.New(rand.NewSource(seed)), at: t0}
}

// run is one repetition at one level: throughput X (req/s), latencies drawn
// from an exponential distribution with the given mean (s), dropped
// requests, CPU utilisation of host "db".
type run struct {
	treatment, model string
	levelIndex       int
	level            float64
	rep              int
	throughput       float64
	meanLatency      float64
	dropped          int64
	cpu              float64
	clientLimited    bool
}

const secs = 30 // measured seconds per run, written as 6 intervals of 5 s

func (c *campaign) add(r run) {
	t := c.t
	c.slot++
	id, err := c.st.StartRun(store.Run{Seq: c.slot, Slot: c.slot, Treatment: r.treatment, Model: r.model,
		LevelIndex: r.levelIndex, Level: r.level, Repetition: r.rep, Start: c.at})
	if err != nil {
		t.Fatal(err)
	}
	from := c.at.Add(10 * time.Second)
	to := from.Add(secs * time.Second)
	perIv := int(math.Round(r.throughput * 5))
	var ivs []store.Interval
	for k := 0; k < secs/5; k++ {
		h := store.NewHistogram()
		for j := 0; j < perIv; j++ {
			us := int64(c.rng.ExpFloat64()*r.meanLatency*1e6) + 1
			_ = h.RecordValue(min(us, store.HistHighestMicros))
		}
		ivs = append(ivs, store.Interval{RunID: id, Phase: "measure", Op: "read", Start: from.Add(time.Duration(k*5) * time.Second),
			Duration: 5 * time.Second, Count: int64(perIv), Dropped: r.dropped / (secs / 5), Hist: h})
	}
	if err := c.st.AddIntervals(ivs); err != nil {
		t.Fatal(err)
	}
	var samples []monitor.Sample
	for s := 0; s < secs; s++ {
		samples = append(samples, monitor.Sample{Host: "db", Resource: monitor.ResourceCPU, Metric: monitor.CPUUtilPct,
			Start: from.Add(time.Duration(s) * time.Second), Period: time.Second, Value: r.cpu, Source: "synthetic"})
	}
	if err := c.st.AddSamples(id, samples); err != nil {
		t.Fatal(err)
	}
	completed := int64(perIv * secs / 5)
	sum := store.RunSummary{Sent: completed + r.dropped, Completed: completed, Dropped: r.dropped,
		MeasureStart: from, MeasureEnd: to, MeasureSecs: secs, Throughput: float64(completed) / secs, ClientLimited: r.clientLimited}
	if r.clientLimited {
		sum.ClientNote = "the client used 100% of its CPU"
	}
	if err := c.st.FinishRun(id, store.StatusCompleted, "", to, sum); err != nil {
		t.Fatal(err)
	}
	c.at = to.Add(5 * time.Second)
}

// mm1 writes an open-loop sweep against an M/M/1-like server of capacity
// mu req/s: throughput min(λ, mu) with 1% noise, response time exponential
// with mean 1/(mu-λ) below capacity and 2 s (bounded by the drop timeout)
// above it, CPU 100·min(λ/mu, 1)%.
func (c *campaign) mm1(treatment string, mu float64, rates []float64, reps int) {
	for i, lambda := range rates {
		for rep := 1; rep <= reps; rep++ {
			x := math.Min(lambda, mu) * (1 + 0.01*c.rng.NormFloat64())
			mean := 2.0
			if lambda < mu {
				mean = 1 / (mu - lambda)
			}
			c.add(run{treatment: treatment, model: "open", levelIndex: i, level: lambda, rep: rep, throughput: x,
				meanLatency: mean, dropped: int64(math.Max(0, lambda-mu) * secs), cpu: 100 * math.Min(lambda/mu, 1)})
		}
	}
}

// input is every treatment's completed runs in one levels input, read
// through the results model, with load model "open" and the given SLO.
func (c *campaign) input(slo *levels.SLO) levels.Input {
	c.t.Helper()
	r, err := results.New(c.st)
	if err != nil {
		c.t.Fatal(err)
	}
	in := levels.Input{Model: "open", SLO: slo}
	for _, tr := range r.Treatments() {
		lin, _, err := levels.FromResults(r, tr.Name)
		if err != nil {
			c.t.Fatal(err)
		}
		in.Runs = append(in.Runs, lin.Runs...)
	}
	return in
}

func (c *campaign) analyze(cfg Config, slo *levels.SLO) []Curve {
	c.t.Helper()
	in := c.input(slo)
	curves, err := Analyze(in, cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	return curves
}

func steps(from, step float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = from + step*float64(i)
	}
	return out
}

// An M/M/1 server of capacity 130 req/s swept at 20, 40, ..., 200 req/s:
// throughput keeps up to 120 and falls short from 140 on, so the knee is
// 120 req/s, one step below the designed capacity. With SLO p99 <= 120 ms,
// P(R > 120 ms) = exp(-(mu-λ)·0.12) is 0.25% at 80 req/s (pass) and 2.7% at
// 100 req/s (fail): the first failing level is 100 req/s.
func TestOpenKneeAtDesignedCapacity(t *testing.T) {
	c := newCampaign(t, 1)
	rates := steps(20, 20, 10)
	c.mm1("", 130, rates, 3)
	curves := c.analyze(Config{}, &levels.SLO{Percentile: 99, Threshold: 120 * time.Millisecond})
	if len(curves) != 1 {
		t.Fatalf("%d curves, want 1", len(curves))
	}
	cv := curves[0]
	if cv.Treatment != "" || cv.Model != "open" || len(cv.Points) != 10 {
		t.Fatalf("curve %q %s with %d points", cv.Treatment, cv.Model, len(cv.Points))
	}
	if cv.Knee == nil {
		t.Fatalf("no knee; notes %v", cv.Notes)
	}
	if cv.Knee.Level != 120 || cv.Knee.Index != 5 || cv.Knee.Method != "shortfall" || math.Abs(cv.Knee.Level-130) > 20 {
		t.Fatalf("knee %+v, want 120 req/s (index 5)", cv.Knee)
	}
	if !strings.Contains(cv.Knee.Reason, "up to 120 req/s") || !strings.Contains(cv.Knee.Reason, "from 140 req/s") {
		t.Errorf("reason %q", cv.Knee.Reason)
	}
	if cv.FirstFail != 4 || cv.Points[cv.FirstFail].Level.Level != 100 || cv.LastPass != 3 {
		t.Fatalf("first fail %d, last pass %d; want the 100 req/s level (4) and 80 (3)", cv.FirstFail, cv.LastPass)
	}
	// The capacity estimate is the highest throughput that meets the SLO:
	// the 80 req/s level's, all of it served.
	if cv.MaxIndex != 3 || math.Abs(cv.MaxThroughput-80) > 3 {
		t.Errorf("capacity %v at level %d, want about 80 at the 80 req/s level (3)", cv.MaxThroughput, cv.MaxIndex)
	}
	for i, p := range cv.Points {
		wantSat := p.Level.Level > 130
		if p.Saturated != wantSat {
			t.Errorf("level %v saturated = %v", p.Level.Level, p.Saturated)
		}
		if !(p.ThroughputCI > 0) || !(p.LatencyCI > 0) || p.Latency.N != 3 {
			t.Errorf("level %d: CI %v / %v from %d reps", i, p.ThroughputCI, p.LatencyCI, p.Latency.N)
		}
		if p.BusiestHost != "db" || math.Abs(p.BusiestCPU-100*math.Min(p.Level.Level/130, 1)) > 1e-9 {
			t.Errorf("level %d: busiest %s %v", i, p.BusiestHost, p.BusiestCPU)
		}
	}
	// Mean latency at 20 req/s is 1/110 s = 9.09 ms; the true mean lies
	// inside the 95% interval (3 reps of 600 exponential draws each).
	p := cv.Points[0]
	if math.Abs(p.Latency.Mean-1e6/110) > math.Max(p.LatencyCI, 300) {
		t.Errorf("latency at 20 req/s %v ± %v µs, want about 9091", p.Latency.Mean, p.LatencyCI)
	}
	// The shortfall at 200 req/s is 1 - 130/200 = 35%.
	if s := cv.Points[9].Shortfall; math.Abs(s-0.35) > 0.02 {
		t.Errorf("shortfall at 200 req/s = %v, want 0.35", s)
	}
}

// Two treatments in one store get one curve each, sorted by label; a level
// where the client was the limit is left out, and an isolated dip below
// the capacity is noted but does not move the knee.
func TestTreatmentsClientLimitAndNoise(t *testing.T) {
	c := newCampaign(t, 2)
	rates := steps(50, 50, 8) // 50..400
	c.mm1("small", 175, rates[:6], 3)
	c.mm1("large", 320, rates, 3)
	// "large" at 400 req/s: the client, not the server, fell short.
	for rep := 1; rep <= 2; rep++ {
		c.add(run{treatment: "large", model: "open", levelIndex: 8, level: 450, rep: rep, throughput: 200,
			meanLatency: 0.01, cpu: 100, clientLimited: true})
	}
	// "small" at 100 req/s also ran a dipped repetition set at 75 req/s.
	for rep := 1; rep <= 2; rep++ {
		c.add(run{treatment: "small", model: "open", levelIndex: 9, level: 75, rep: rep, throughput: 60, meanLatency: 0.01, cpu: 40})
	}
	curves := c.analyze(Config{}, nil)
	if len(curves) != 2 || curves[0].Treatment != "large" || curves[1].Treatment != "small" {
		t.Fatalf("curves %d", len(curves))
	}
	large, small := curves[0], curves[1]
	if large.Knee == nil || large.Knee.Level != 300 {
		t.Fatalf("large knee %+v, notes %v; want 300 req/s (capacity 320)", large.Knee, large.Notes)
	}
	if len(large.ClientLimited) != 1 || large.Points[large.ClientLimited[0]].Level.Level != 450 {
		t.Fatalf("client-limited levels %v", large.ClientLimited)
	}
	if math.Abs(large.MaxThroughput-320) > 8 {
		t.Errorf("large capacity %v: the client-limited 450 req/s level must not count", large.MaxThroughput)
	}
	if small.Knee == nil || small.Knee.Level != 150 {
		t.Fatalf("small knee %+v, notes %v; want 150 req/s (capacity 175)", small.Knee, small.Notes)
	}
	if !hasNote(small.Notes, "at 75 req/s but kept up") {
		t.Errorf("no noise note for the 75 req/s dip: %v", small.Notes)
	}
	if !hasNote(large.Notes, "client was the limit in 2 of 2 runs at 450 req/s") {
		t.Errorf("no client-limit note: %v", large.Notes)
	}
}

// No knee inside the range, or saturation from the lowest level: the knee
// is nil and a note says which way to extend the sweep.
func TestOpenKneeOutsideRange(t *testing.T) {
	c := newCampaign(t, 3)
	c.mm1("fast", 1000, steps(10, 10, 5), 2)
	c.mm1("slow", 5, steps(10, 10, 5), 2)
	curves := c.analyze(Config{}, nil)
	fast, slow := curves[0], curves[1]
	if fast.Knee != nil || !hasNote(fast.Notes, "capacity is above the measured range") {
		t.Errorf("fast: knee %+v notes %v", fast.Knee, fast.Notes)
	}
	if slow.Knee != nil || !hasNote(slow.Notes, "already at the lowest level, 10 req/s") {
		t.Errorf("slow: knee %+v notes %v", slow.Knee, slow.Notes)
	}
}

// A closed system with service demand 0.1 s and no think time: X(N) =
// min(N/0.1, 100) req/s, saturating at N* = 10 clients. Kneedle over
// N = 2, 4, ..., 20 lands on 10.
func TestClosedKneedle(t *testing.T) {
	c := newCampaign(t, 4)
	for i, n := range steps(2, 2, 10) {
		for rep := 1; rep <= 2; rep++ {
			x := math.Min(n/0.1, 100) * (1 + 0.01*c.rng.NormFloat64())
			c.add(run{model: "closed", levelIndex: i, level: n, rep: rep, throughput: x, meanLatency: n / x})
		}
	}
	curves := c.analyze(Config{}, nil)
	cv := curves[0]
	if cv.Model != "closed" || cv.Knee == nil || cv.Knee.Level != 10 || cv.Knee.Method != "kneedle" {
		t.Fatalf("knee %+v, notes %v; want 10 clients", cv.Knee, cv.Notes)
	}
	if !math.IsNaN(cv.Points[0].Shortfall) || cv.Points[9].Saturated {
		t.Error("closed-loop points have no shortfall")
	}
}

// A closed curve with the same throughput at every client count is
// saturated from the start: no knee, and a note that says so (not that the
// curve is linear, and no NaN distance).
func TestClosedFlatCurve(t *testing.T) {
	c := newCampaign(t, 6)
	for i, n := range steps(2, 2, 4) {
		for rep := 1; rep <= 2; rep++ {
			c.add(run{model: "closed", levelIndex: i, level: n, rep: rep, throughput: 100, meanLatency: n / 100})
		}
	}
	cv := c.analyze(Config{}, nil)[0]
	if cv.Knee != nil || !hasNote(cv.Notes, "same at every client count from 2 clients on") || hasNote(cv.Notes, "NaN") || hasNote(cv.Notes, "linearly") {
		t.Errorf("knee %+v notes %v", cv.Knee, cv.Notes)
	}
}

// Hand-computed Kneedle: N = 1..5, X = 10, 20, 30, 40, 42. x̂ = 0, .25, .5,
// .75, 1; ŷ = 0, 10/32, 20/32, 30/32, 1; d = 0, .0625, .125, .1875, 0: the
// knee is the 4th point at distance 0.1875.
func TestKneedleHand(t *testing.T) {
	k, d := kneedle([]float64{1, 2, 3, 4, 5}, []float64{10, 20, 30, 40, 42})
	if k != 3 || math.Abs(d-0.1875) > 1e-12 {
		t.Fatalf("kneedle = %d, %v; want 3, 0.1875", k, d)
	}
	// A straight line bends nowhere: largest distance 0.
	if k, d := kneedle([]float64{1, 2, 3}, []float64{5, 10, 15}); d != 0 {
		t.Fatalf("straight line: %d, %v", k, d)
	}
	if k, _ := kneedle([]float64{1, 2, 3}, []float64{5, 5, 5}); k != -1 {
		t.Fatal("a flat curve has no knee")
	}
}

func TestConfigErrors(t *testing.T) {
	c := newCampaign(t, 5)
	c.mm1("", 100, []float64{50}, 1)
	in := c.input(nil)
	for _, cfg := range []Config{{Confidence: 1.5}, {Shortfall: -0.1}, {KneedleMin: 2}, {Op: "scan"}} {
		if _, err := Analyze(in, cfg); err == nil {
			t.Errorf("config %+v: want an error", cfg)
		}
	}
	if _, err := Analyze(levels.Input{Model: "open"}, Config{}); err == nil || !strings.Contains(err.Error(), "no completed runs") {
		t.Errorf("empty input: %v", err)
	}
	in.Runs[0].Run.Model = ""
	in.Model = "batch"
	if _, err := Analyze(in, Config{}); err == nil || !strings.Contains(err.Error(), "neither open nor closed") {
		t.Errorf("bad model: %v", err)
	}
	// One repetition: no interval, but the point is still there.
	in.Model = "open"
	curves, err := Analyze(in, Config{Op: "read"})
	if err != nil || !math.IsNaN(curves[0].Points[0].ThroughputCI) || curves[0].Points[0].Latency.N != 1 {
		t.Fatalf("single repetition: %v %+v", err, curves)
	}
}

func hasNote(notes []string, s string) bool {
	for _, n := range notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// A treatment whose offered rate followed a schedule of steps within each
// run (a controller's load step) has no knee and no capacity: a run is a
// mean over rates it did not hold. The same runs read as levels would
// report a knee and a capacity below the range (the terminal once said
// "add lower levels to find it" of such a run), so none of that advice
// may remain.
func TestScheduledRunsHaveNoKneeOrCapacity(t *testing.T) {
	c := newCampaign(t, 4)
	c.mm1("", 5, steps(10, 10, 3), 2)
	in := c.input(&levels.SLO{Percentile: 90, Threshold: time.Second})
	plain, err := Analyze(in, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasNote(plain[0].Notes, "add lower levels") {
		t.Fatalf("as levels, the runs should read as below the range: %v", plain[0].Notes)
	}
	in.Schedule = "steps"
	curves, err := Analyze(in, Config{})
	if err != nil {
		t.Fatal(err)
	}
	cv := curves[0]
	if cv.Knee != nil || !math.IsNaN(cv.MaxThroughput) || cv.MaxIndex != -1 {
		t.Errorf("knee %+v, capacity %v at %d; want neither", cv.Knee, cv.MaxThroughput, cv.MaxIndex)
	}
	if !strings.Contains(cv.NoCapacity, "the offered rate followed a schedule of steps within each run, so a run is not one steady load level") {
		t.Errorf("no capacity because %q", cv.NoCapacity)
	}
	if len(cv.Notes) != 1 || !hasNote(cv.Notes, "a knee needs runs that each hold one offered rate on one steady system, and the offered rate followed a schedule of steps") || hasNote(cv.Notes, "add lower levels") {
		t.Errorf("notes %v: want only that no knee can be found", cv.Notes)
	}
	if len(cv.Points) != 3 || cv.Points[0].Level.Throughput.N != 2 {
		t.Errorf("the levels' figures are still reported: %d points", len(cv.Points))
	}
	// Runs that held one rate but a designed outage: a throughput with a
	// 6-second outage in it is not a capacity either.
	in.Schedule, in.Disturbed = "", "kill of db1 at 10s"
	curves, err = Analyze(in, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if cv := curves[0]; cv.Knee != nil || cv.MaxIndex != -1 || !strings.Contains(cv.NoCapacity, "designed faults (kill of db1 at 10s)") {
		t.Errorf("with a kill in every run: knee %+v, capacity at %d, %q", cv.Knee, cv.MaxIndex, cv.NoCapacity)
	}
}
