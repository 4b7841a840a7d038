// Package storegen writes realistic synthetic results stores of any
// length: the campaign, its runs, every interval's latency histogram per
// operation (and per load agent when asked), each monitored host's samples
// and the run events, as a campaign run would write them. Benchmarks and
// memory tests of every reader of a store (findings, report, explorer,
// export, push) run on them, so that their figures can be rerun by anyone
// instead of depending on a one-off long run (docs/performance.md).
//
// Every store it writes carries designed features a reader must keep
// visible: each run has one stall (StallEvery), a stretch of intervals
// whose throughput falls to a tenth and whose latencies are 50 times the
// usual, so that downsampled charts can be checked to still show it.
package storegen

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/store"
)

// Config says what to write. The zero value of a field takes the default
// in parentheses.
type Config struct {
	Name        string        // campaign name ("synthetic")
	Levels      []float64     // offered rates, req/s ([500])
	Repetitions int           // runs per level (1)
	Measure     time.Duration // measured phase of each run (1 min)
	Interval    time.Duration // interval length (1 s)
	// Ops are the operation names, each with an equal share of the
	// requests (read, update, insert, scan, read_modify_write).
	Ops []string
	// Hosts is the number of monitored hosts (1), each with CPU, one
	// disk's reads and writes and one interface's received and sent bytes
	// in every interval.
	Hosts int
	// Agents is the number of load agents; with one or more, each agent's
	// own intervals are written beside the merged ones, as a coordinator
	// writes them, the agents alternately in regions "eu" and "us" (0:
	// the run was driven by this process).
	Agents int
	// StallEvery places a stall of StallFor in each run at this fraction
	// of its measured phase (0.75); StallFor (10 s) is rounded up to
	// whole intervals. A negative StallEvery writes no stall.
	StallEvery float64
	StallFor   time.Duration
	Seed       uint64 // the latencies' and counts' random seed (1)
	// Start is the first run's start (2026-01-01 00:00 UTC).
	Start time.Time
	// Progress, when set, is called after each run is written.
	Progress func(run, runs int)
}

// DefaultOps are the YCSB operation names.
var DefaultOps = []string{"read", "update", "insert", "scan", "read_modify_write"}

func (c Config) withDefaults() (Config, error) {
	if c.Name == "" {
		c.Name = "synthetic"
	}
	if len(c.Levels) == 0 {
		c.Levels = []float64{500}
	}
	if c.Repetitions == 0 {
		c.Repetitions = 1
	}
	if c.Measure == 0 {
		c.Measure = time.Minute
	}
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if len(c.Ops) == 0 {
		c.Ops = DefaultOps
	}
	if c.Hosts == 0 {
		c.Hosts = 1
	}
	if c.StallEvery == 0 {
		c.StallEvery = 0.75
	}
	if c.StallFor == 0 {
		c.StallFor = 10 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Start.IsZero() {
		c.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	switch {
	case c.Repetitions < 0 || c.Hosts < 0 || c.Agents < 0:
		return c, errors.New("storegen: repetitions, hosts and agents must not be negative")
	case c.Interval < time.Millisecond || c.Measure < c.Interval:
		return c, fmt.Errorf("storegen: the interval (%v) must be at least 1ms and the measured phase (%v) at least one interval", c.Interval, c.Measure)
	case c.StallEvery >= 1:
		return c, fmt.Errorf("storegen: stall_every %.2f must be below 1 (a fraction of the measured phase)", c.StallEvery)
	}
	for _, l := range c.Levels {
		if !(l > 0) || math.IsInf(l, 0) {
			return c, fmt.Errorf("storegen: level %v is not a positive rate", l)
		}
	}
	return c, nil
}

// Intervals is the number of intervals in each run's measured phase.
func (c Config) Intervals() int {
	return int((c.Measure + c.Interval - 1) / c.Interval)
}

// Stall is where the designed stall of every run lies, as interval
// indexes [From, To) of its measured phase; From == To when there is none.
func (c Config) Stall() (from, to int) {
	n := c.Intervals()
	if c.StallEvery < 0 {
		return 0, 0
	}
	from = int(c.StallEvery * float64(n))
	to = min(n, from+int((c.StallFor+c.Interval-1)/c.Interval))
	return from, to
}

// Spec is the campaign spec the store records: the null target at the
// configured levels, so that every reader that parses it finds the plan
// the runs follow.
func (c Config) Spec() string {
	var rates, ops []string
	for _, l := range c.Levels {
		rates = append(rates, fmt.Sprint(l))
	}
	for _, op := range c.Ops {
		ops = append(ops, fmt.Sprintf("%s: %g", op, 1/float64(len(c.Ops))))
	}
	return fmt.Sprintf(`name: %s
seed: %d
target: {type: null}
workload: {record_count: 1000, operations: {%s}}
load: {model: open, arrival: poisson, rates: [%s]}
phases: {warmup: 0s, measure: %s}
interval: %s
repetitions: %d
slo: {percentile: 99, threshold: 10ms}
`, c.Name, c.Seed, strings.Join(ops, ", "), strings.Join(rates, ", "), c.Measure, c.Interval, c.Repetitions)
}

// Summary is what Write wrote.
type Summary struct {
	Runs, IntervalRows, AgentIntervalRows, Samples int
}

// usual is the latency shape of a normal interval, in µs: quantiles of a
// long-tailed service time (median 400 µs, p99 about 3 ms), each holding
// an equal share of the interval's requests.
var usual = []int64{150, 200, 240, 280, 310, 340, 370, 400, 430, 460, 500, 540, 600, 680, 780, 900, 1100, 1400, 2000, 3100}

// Write creates the store at path (which must not exist) and writes the
// campaign into it, run by run.
func Write(path string, c Config) (Summary, error) {
	c, err := c.withDefaults()
	if err != nil {
		return Summary{}, err
	}
	st, err := store.Create(path, store.Campaign{Name: c.Name, SpecFile: c.Name + ".yaml", SpecYAML: c.Spec(), Seed: int64(c.Seed),
		HostJSON: `{"hostname":"synthetic","cpus":2,"kernel":"6.1.0","memory_kib":24000000}`, ToolVersion: "storegen", CreatedAt: c.Start})
	if err != nil {
		return Summary{}, err
	}
	w := &writer{c: c, st: st, rng: rand.New(rand.NewPCG(c.Seed, 0x5eed))}
	err = w.campaign()
	return w.sum, errors.Join(err, st.Close())
}

type writer struct {
	c   Config
	st  *store.Store
	rng *rand.Rand
	sum Summary
}

func (w *writer) campaign() error {
	c := w.c
	if err := w.st.AddEvent(store.Event{Time: c.Start, Kind: "populated", Detail: `{"records":1000,"seconds":1}`}); err != nil {
		return err
	}
	start := c.Start.Add(time.Second)
	runs := len(c.Levels) * c.Repetitions
	seq := 0
	// Repetitions interleave across levels, as a campaign runs them.
	for rep := 1; rep <= c.Repetitions; rep++ {
		for li, level := range c.Levels {
			end, err := w.run(seq, li, level, rep, start)
			if err != nil {
				return err
			}
			seq++
			if c.Progress != nil {
				c.Progress(seq, runs)
			}
			start = end.Add(time.Second)
		}
	}
	return nil
}

// batchIntervals is how many intervals of a run go to the store in one
// transaction: memory stays bounded whatever the run's length (each
// interval's histograms take about 140 KB per operation until written).
const batchIntervals = 60

func (w *writer) run(seq, li int, level float64, rep int, start time.Time) (time.Time, error) {
	c := w.c
	id, err := w.st.StartRun(store.Run{Seq: seq, Slot: seq, Model: "open", LevelIndex: li, Level: level, Repetition: rep, Start: start})
	if err != nil {
		return time.Time{}, err
	}
	agents := make([]string, c.Agents)
	for i := range agents {
		agents[i] = fmt.Sprintf("agent%d", i+1)
		// Two regions, alternately, so that the regions breakdown reads
		// every agent's intervals.
		region := []string{"eu", "us"}[i%2]
		if err := w.st.PutAgentRun(store.AgentRun{RunID: id, Agent: agents[i], Host: fmt.Sprintf("load%d", i+1), Index: i, Status: store.AgentCompleted,
			Detail: json.RawMessage(`{"region":"` + region + `"}`)}); err != nil {
			return time.Time{}, err
		}
	}
	n := c.Intervals()
	stallFrom, stallTo := c.Stall()
	secs := c.Interval.Seconds()
	var (
		ivs     []store.Interval
		perAg   = make([][]store.Interval, len(agents))
		samples []monitor.Sample
		total   int64
	)
	flush := func() error {
		if err := w.st.AddIntervals(ivs); err != nil {
			return err
		}
		for i, a := range agents {
			if err := w.st.AddAgentIntervals(a, perAg[i]); err != nil {
				return err
			}
			w.sum.AgentIntervalRows += len(perAg[i])
			perAg[i] = perAg[i][:0]
		}
		if err := w.st.AddSamples(id, samples); err != nil {
			return err
		}
		w.sum.IntervalRows += len(ivs)
		w.sum.Samples += len(samples)
		ivs, samples = ivs[:0], samples[:0]
		return nil
	}
	for k := range n {
		at := start.Add(time.Duration(k) * c.Interval)
		stalled := k >= stallFrom && k < stallTo
		scale, share := int64(1), 1.0
		if stalled {
			scale, share = 50, 0.1
		}
		for _, op := range c.Ops {
			count := w.poisson(level * secs * share / float64(len(c.Ops)))
			total += count
			if len(agents) == 0 {
				iv, err := w.interval(id, op, at, count, scale)
				if err != nil {
					return time.Time{}, err
				}
				ivs = append(ivs, iv)
				continue
			}
			// Each agent's share, and the merged interval as the
			// coordinator writes it: the sum of the agents' histograms.
			merged := store.NewHistogram()
			var mergedCount int64
			for i := range agents {
				part := count / int64(len(agents))
				if i == 0 {
					part += count % int64(len(agents))
				}
				iv, err := w.interval(id, op, at, part, scale)
				if err != nil {
					return time.Time{}, err
				}
				merged.Merge(iv.Hist)
				mergedCount += part
				perAg[i] = append(perAg[i], iv)
			}
			ivs = append(ivs, store.Interval{RunID: id, Phase: "measure", Op: op, Start: at, Duration: c.Interval, Count: mergedCount, Hist: merged})
		}
		cpu := min(95, 10+level/20) * share
		for h := range c.Hosts {
			host := fmt.Sprintf("host%d", h+1)
			for _, s := range []struct {
				res, metric string
				v           float64
			}{{"cpu", monitor.CPUUtilPct, cpu}, {"disk:vda", monitor.DiskReadOps, 10 * share}, {"disk:vda", monitor.DiskWriteOps, 30 * share},
				{"net:eth0", monitor.NetRxBytes, level * 200 * share}, {"net:eth0", monitor.NetTxBytes, level * 1000 * share}} {
				samples = append(samples, monitor.Sample{Host: host, Resource: s.res, Metric: s.metric, Start: at, Period: c.Interval, Value: s.v, Source: monitor.SourceSampled})
			}
		}
		if (k+1)%batchIntervals == 0 {
			if err := flush(); err != nil {
				return time.Time{}, err
			}
		}
	}
	if err := flush(); err != nil {
		return time.Time{}, err
	}
	end := start.Add(time.Duration(n) * c.Interval)
	if stallFrom < stallTo {
		if err := w.st.AddEvent(store.Event{RunID: id, Time: start.Add(time.Duration(stallFrom) * c.Interval), Kind: "fault",
			Detail: `{"action":"stall","designed":true}`}); err != nil {
			return time.Time{}, err
		}
	}
	measured := end.Sub(start).Seconds()
	sum := store.RunSummary{Sent: total, Completed: total, MeasureStart: start, MeasureEnd: end, MeasureSecs: measured,
		Throughput: float64(total) / measured, ClientCPU: 5}
	if err := w.st.FinishRun(id, store.StatusCompleted, "", end, sum); err != nil {
		return time.Time{}, err
	}
	w.sum.Runs++
	return end, nil
}

// interval is one operation's interval of count requests, latencies
// scaled by scale, with a little noise so no two intervals are alike.
func (w *writer) interval(id int64, op string, at time.Time, count, scale int64) (store.Interval, error) {
	h := store.NewHistogram()
	// Bucket i gets its share of the count, rounded so that the shares
	// add up and a small count still reaches the slowest buckets.
	b := float64(len(usual))
	for i, v := range usual {
		k := int64(math.Round(float64(count)*float64(i+1)/b)) - int64(math.Round(float64(count)*float64(i)/b))
		if k == 0 {
			continue
		}
		noisy := int64(float64(v*scale) * (0.9 + 0.2*w.rng.Float64()))
		if err := h.RecordValues(max(noisy, 1), k); err != nil {
			return store.Interval{}, fmt.Errorf("storegen: recording %d µs: %w", noisy, err)
		}
	}
	return store.Interval{RunID: id, Phase: "measure", Op: op, Start: at, Duration: w.c.Interval, Count: count, Hist: h}, nil
}

// poisson draws a request count with mean m (a normal approximation above
// 50, which is all the realism a count needs here).
func (w *writer) poisson(m float64) int64 {
	if m <= 0 {
		return 0
	}
	if m > 50 {
		return max(0, int64(math.Round(m+math.Sqrt(m)*w.rng.NormFloat64())))
	}
	l, k, p := math.Exp(-m), int64(0), 1.0
	for {
		p *= w.rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}
