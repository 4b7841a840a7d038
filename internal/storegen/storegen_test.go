package storegen

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// A generated store reads back through the results model as designed:
// the runs and rows Write reports, each run's throughput near its level,
// the stall where Config.Stall puts it (p99 50 times the usual, a tenth of
// the requests), and the agents' intervals adding up to the merged ones.
func TestWriteReadsBackAsDesigned(t *testing.T) {
	c := Config{Levels: []float64{200, 800}, Repetitions: 2, Measure: 2 * time.Minute, Interval: 500 * time.Millisecond,
		Ops: []string{"read", "update"}, Hosts: 2, Agents: 3, StallFor: 5 * time.Second}
	path := filepath.Join(t.TempDir(), "results.db")
	var progress []int
	c.Progress = func(run, runs int) {
		if runs != 4 {
			t.Errorf("progress says %d runs, want 4", runs)
		}
		progress = append(progress, run)
	}
	sum, err := Write(path, c)
	if err != nil {
		t.Fatal(err)
	}
	n := c.Intervals() // 240
	if sum.Runs != 4 || sum.IntervalRows != 4*n*2 || sum.AgentIntervalRows != 3*4*n*2 || sum.Samples != 4*n*2*5 || len(progress) != 4 {
		t.Fatalf("summary %+v, progress %v; want 4 runs of %d intervals, 2 ops, 3 agents, 2 hosts of 5 metrics", sum, progress, n)
	}
	st, err := store.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	runs := r.CompletedRuns("")
	if len(runs) != 4 {
		t.Fatalf("%d completed runs, want 4", len(runs))
	}
	c, _ = c.withDefaults()
	from, to := c.Stall()
	if from != 180 || to != 190 {
		t.Fatalf("stall at intervals [%d, %d), want [180, 190) (3/4 of 240, 5 s of 0.5 s)", from, to)
	}
	for _, run := range runs {
		// Outside the stall the rate is the level; in it, a tenth: the
		// run's mean is level × (1 - 0.9 × stalled share).
		want := run.Level * (1 - 0.9*float64(to-from)/float64(n))
		if got := run.Summary.Throughput; math.Abs(got-want) > 0.05*want {
			t.Errorf("run at %v req/s: throughput %.1f, want about %.1f", run.Level, got, want)
		}
		ivs, err := r.Intervals(run.ID, "measure")
		if err != nil {
			t.Fatal(err)
		}
		if len(ivs) != 2*n {
			t.Fatalf("run %d: %d intervals, want %d", run.ID, len(ivs), 2*n)
		}
		for i, iv := range ivs {
			k := int(iv.Start.Sub(run.Summary.MeasureStart) / c.Interval)
			p99 := iv.Hist.ValueAtQuantile(99)
			stalled := k >= from && k < to
			// In the stall every latency is 50 times a usual one, so the
			// p99 is at least 50 × the usual median less the noise; outside
			// it the p99 is among the slowest usual buckets.
			if stalled && p99 < 50*400*9/10 || !stalled && (p99 < 1000 || p99 > 3100*11/10+100) {
				t.Fatalf("run %d interval %d (%s, index %d): p99 %d µs, stalled %v, count %d, max %d", run.ID, i, iv.Op, k, p99, stalled, iv.Count, iv.Hist.Max())
			}
			if iv.Hist.TotalCount() != iv.Count {
				t.Fatalf("interval %d: histogram holds %d, count %d", i, iv.Hist.TotalCount(), iv.Count)
			}
		}
		var agentCount int64
		for a := 1; a <= 3; a++ {
			aivs, err := r.AgentIntervals(run.ID, "agent"+string(rune('0'+a)))
			if err != nil {
				t.Fatal(err)
			}
			for _, ai := range aivs {
				agentCount += ai.Count
			}
		}
		var merged int64
		for _, iv := range ivs {
			merged += iv.Count
		}
		if agentCount != merged || merged != run.Summary.Completed {
			t.Errorf("run %d: the agents completed %d, the merged intervals %d, the summary %d", run.ID, agentCount, merged, run.Summary.Completed)
		}
	}
	// The stall is an event of each run.
	for _, run := range runs {
		evs, err := r.Events(run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Kind != "fault" || !evs[0].Time.Equal(run.Summary.MeasureStart.Add(time.Duration(from)*c.Interval)) {
			t.Errorf("run %d events %+v, want the stall's fault at interval %d", run.ID, evs, from)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{Levels: []float64{-1}},
		{Levels: []float64{math.Inf(1)}},
		{Interval: time.Second, Measure: time.Millisecond * 500},
		{StallEvery: 1.5},
		{Agents: -1},
	} {
		if _, err := Write(filepath.Join(t.TempDir(), "x.db"), c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
