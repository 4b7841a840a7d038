package levels

import (
	"math"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/analysis/resources"
	"github.com/headroom-dev/headroom/internal/store"
)

// synth builds a run whose measured intervals hold, per operation, n
// successful requests of the given latency (µs), plus errors and drops.
func synth(id int64, levelIdx int, level float64, rep int, lat map[string]int64, n, errs, dropped int64, throughput float64) RunData {
	run := store.Run{ID: id, Slot: levelIdx*10 + rep, LevelIndex: levelIdx, Level: level, Repetition: rep,
		Status: store.StatusCompleted, Summary: store.RunSummary{Throughput: throughput, Errors: errs, Dropped: dropped}}
	t := time.Unix(0, 0)
	var ivs []store.Interval
	for op, us := range lat {
		h := store.NewHistogram()
		if err := h.RecordValues(us, n); err != nil {
			panic(err)
		}
		ivs = append(ivs, store.Interval{RunID: id, Phase: "measure", Op: op, Start: t, Duration: time.Second,
			Count: n, Errors: errs / int64(len(lat)), Dropped: dropped / int64(len(lat)), Hist: h})
	}
	return Fold(run, ivs, nil)
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Three levels with known latencies: the SLO (p99 <= 10 ms) holds at the
// first two and fails at the third; means and standard errors across
// repetitions are the textbook values.
func TestSummarizeKnownAnswer(t *testing.T) {
	slo := &SLO{Percentile: 99, Threshold: 10 * time.Millisecond}
	in := Input{Model: "open", SLO: slo}
	// Level 0 (100 req/s): reads 1 ms, 2 ms, 3 ms in the three repetitions.
	for rep, us := range []int64{1000, 2000, 3000} {
		in.Runs = append(in.Runs, synth(int64(rep+1), 0, 100, rep+1, map[string]int64{"read": us, "update": 2 * us}, 1000, 0, 0, float64(98+2*rep)))
	}
	// Level 1 (200 req/s): 5 ms everywhere, no errors.
	for rep := 0; rep < 3; rep++ {
		in.Runs = append(in.Runs, synth(int64(10+rep), 1, 200, rep+1, map[string]int64{"read": 5000, "update": 5000}, 1000, 0, 0, 200))
	}
	// Level 2 (400 req/s): fast, but 2% of the offered requests dropped:
	// only 98% succeeded within the threshold, below the 99% the SLO needs.
	for rep := 0; rep < 3; rep++ {
		in.Runs = append(in.Runs, synth(int64(20+rep), 2, 400, rep+1, map[string]int64{"read": 500, "update": 500}, 980, 0, 40, 392))
	}
	s := Summarize(in)
	if len(s.Levels) != 3 || s.FirstFail != 2 || s.LastPass != 1 {
		t.Fatalf("levels %d, first fail %d, last pass %d", len(s.Levels), s.FirstFail, s.LastPass)
	}
	l0 := s.Levels[0]
	if l0.Throughput.N != 3 || !near(l0.Throughput.Mean, 100, 1e-9) || !near(l0.Throughput.SE, 2/math.Sqrt(3), 1e-9) {
		t.Fatalf("throughput estimate %+v; want mean 100, se 2/sqrt(3)", l0.Throughput)
	}
	var read *OpRow
	for i := range l0.Ops {
		if l0.Ops[i].Op == "read" {
			read = &l0.Ops[i]
		}
	}
	if read == nil || len(l0.Ops) != 3 || l0.Ops[2].Op != "all" {
		t.Fatalf("ops %+v", l0.Ops)
	}
	// Mean read latency per repetition ≈ 1000, 2000, 3000 µs (within the
	// histogram's 0.1%): mean 2000, se = 1000/sqrt(3).
	if !near(read.Latency.Mean.Mean, 2000, 3) || !near(read.Latency.Mean.SE, 1000/math.Sqrt(3), 3) {
		t.Fatalf("read mean %+v", read.Latency.Mean)
	}
	if !near(read.Latency.P99.Mean, 2000, 3) || !near(read.Count.Mean, 1000, 0) {
		t.Fatalf("read p99 %+v count %+v", read.Latency.P99, read.Count)
	}
	if !l0.SLO.Pass || !near(l0.SLO.Within.Mean, 1, 0) {
		t.Fatalf("level 0 SLO %+v", l0.SLO)
	}
	l2 := s.Levels[2]
	if l2.SLO.Pass || !near(l2.SLO.Within.Mean, 1960.0/2000, 1e-9) {
		t.Fatalf("level 2 SLO %+v; want 98%% within and a failure", l2.SLO)
	}
}

// Latency above the threshold fails the SLO even with nothing dropped, and
// a bucket that straddles the threshold does not count as within it.
func TestSLOThresholdBoundary(t *testing.T) {
	slo := &SLO{Percentile: 50, Threshold: 10 * time.Millisecond, Op: "update"}
	in := Input{Model: "closed", SLO: slo, Runs: []RunData{
		synth(1, 0, 1, 1, map[string]int64{"read": 100, "update": 9_990}, 100, 0, 0, 10),
		synth(2, 1, 2, 1, map[string]int64{"read": 100, "update": 10_020}, 100, 0, 0, 20),
	}}
	s := Summarize(in)
	if !s.Levels[0].SLO.Pass || s.Levels[1].SLO.Pass || s.FirstFail != 1 {
		t.Fatalf("SLO at 9.99 ms / 10.02 ms: %+v %+v", s.Levels[0].SLO, s.Levels[1].SLO)
	}
	// One repetition: no standard error.
	if s.Levels[0].Throughput.N != 1 || !math.IsNaN(s.Levels[0].Throughput.SE) {
		t.Fatalf("single repetition estimate %+v", s.Levels[0].Throughput)
	}
}

func TestCountAtMost(t *testing.T) {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for _, v := range []int64{5, 2047, 2048, 100_000, 100_100} {
		_ = h.RecordValue(v)
	}
	// Above 2047 µs buckets are 2 µs wide: 2048 is in [2048, 2049].
	if got := countAtMost(h, 2048); got != 2 {
		t.Fatalf("count <= 2048 = %d", got)
	}
	if got := countAtMost(h, 2049); got != 3 {
		t.Fatalf("count <= 2049 = %d", got)
	}
	// 100_000 lies in a bucket 64 µs wide: with the limit inside the
	// bucket, the bucket does not count.
	if got := countAtMost(h, 100_000); got != 3 {
		t.Fatalf("count <= 100000 = %d", got)
	}
	if got := countAtMost(h, 200_000); got != 5 {
		t.Fatalf("count <= 200000 = %d", got)
	}
}

// A repetition without CPU samples does not pull the level's CPU mean
// towards zero, and a host with no network samples shows none.
func TestHostRowsSkipUnsampled(t *testing.T) {
	runs := []perRun{
		{resources: []resources.Host{{Host: "db", CPUMean: 60, CPUMax: 90, CPUSamples: 5}}},
		{resources: []resources.Host{{Host: "db", Disk: "vda", DiskUtil: 20, DiskUtilMax: 30}}},
	}
	rows := hostRows(runs)
	if len(rows) != 1 || rows[0].CPUMean != 60 || rows[0].CPUMax != 90 || rows[0].Disk != "vda" || !math.IsNaN(rows[0].NetBytes) {
		t.Fatalf("rows %+v", rows)
	}
}

// The network and queueing delay mu is the client's mean latency minus the
// server's mean execution time (seed-digest §2): with client latencies of
// 1000 and 1200 µs and server means of 600 and 700 µs, mu is 400 and 500 µs
// in the two repetitions, 450 ± 50 µs across them.
func TestNetworkDelayFromServerTimes(t *testing.T) {
	in := Input{Model: "open"}
	for rep, c := range []struct{ client, exec, calls int64 }{{1000, 6000, 10}, {1200, 14000, 20}} {
		rd := synth(int64(rep+1), 0, 100, rep+1, map[string]int64{"complex_join": c.client}, 50, 0, 0, 50)
		// Two server intervals whose sums give the per-run mean.
		half := time.Duration(c.exec/2) * time.Microsecond
		rd.Server = []store.ServerInterval{
			{RunID: rd.Run.ID, Op: "complex_join", Calls: c.calls / 2, Exec: half},
			{RunID: rd.Run.ID, Op: "complex_join", Calls: c.calls / 2, Exec: half},
		}
		in.Runs = append(in.Runs, rd)
	}
	s := Summarize(in)
	if len(s.Levels) != 1 || len(s.Levels[0].Ops) != 1 {
		t.Fatalf("want one level with one op, got %+v", s.Levels)
	}
	o := s.Levels[0].Ops[0]
	if o.Server.N != 2 || !near(o.Server.Mean, 650, 1e-9) {
		t.Errorf("server mean = %+v, want 650 µs over 2 runs", o.Server)
	}
	if o.Network.N != 2 || !near(o.Network.Mean, 450, 1) || !near(o.Network.SE, 50, 1) {
		t.Errorf("network delay = %+v, want 450 ± 50 µs", o.Network)
	}
	// Without server times the columns stay empty rather than zero.
	in.Runs[0].Server, in.Runs[1].Server = nil, nil
	if o := Summarize(in).Levels[0].Ops[0]; o.Server.N != 0 || o.Network.N != 0 {
		t.Errorf("no server times should give no estimate, got server %+v network %+v", o.Server, o.Network)
	}
}
