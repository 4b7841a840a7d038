// Package regions breaks a run driven by load agents down by the agents'
// regions (docs/fleet.md, "Regions"): per region, the agents, their
// successful completions per second, errors and dropped requests, and the
// latency percentiles of the region's requests over the measured phase.
// It also groups a run's monitored hosts by their regions (hosts.go): per
// region, the hosts' CPU utilisation and network throughput.
//
// The percentiles are exact at the histograms' precision, as the
// coordinator's merge of the agents is (internal/agent/merge.go): every
// agent records into HdrHistograms of one range and precision
// (store.NewHistogram), so adding a region's agents' histograms bucket by
// bucket gives the histogram one process would have recorded from the
// region's requests. A histogram of another geometry, or a value the
// merge would drop, is an error rather than an approximation.
package regions

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// NoRegion names the group of agents whose host carries no region label.
const NoRegion = "(no region)"

// measurePhase is the phase the figures cover.
const measurePhase = "measure"

// Agent is one load agent of a run and its region ("" = none).
type Agent struct {
	Name   string
	Region string
}

// Input is one run's agents and their own intervals (every phase; only
// the measured ones count).
type Input struct {
	Run       store.Run
	Agents    []Agent // in share order
	Intervals []store.AgentInterval
}

// Region is one region's part of a run's measured phase.
type Region struct {
	Name   string   // the region label, or NoRegion
	Agents []string // in share order
	// Completed, Errors and Dropped are sums over the region's agents and
	// every operation type.
	Completed, Errors, Dropped int64
	// Throughput is Completed over the run's measured seconds (the same
	// for every region, so the regions' throughputs add up to the run's).
	Throughput float64
	// Latency of successful requests in µs, from Hist.
	P50, P95, P99, Max int64
	Hist               *hdrhistogram.Histogram
}

// Result is one run's breakdown. Regions is empty when the run had no
// agents or all of them were in one region; Note then says which.
type Result struct {
	Run        store.Run
	Agents     int
	MeasureSec float64
	Regions    []Region // by name, NoRegion last
	Note       string
}

// Split reports whether the run's agents span two or more regions.
func (r Result) Split() bool { return len(r.Regions) >= 2 }

// Analyze groups the run's agents by region and sums and merges each
// region's measured intervals.
func Analyze(in Input) (Result, error) {
	f, done := newFold(in.Run, in.Agents)
	if done {
		return f.res, nil
	}
	for i := range in.Intervals {
		if err := f.add(&in.Intervals[i]); err != nil {
			return Result{}, err
		}
	}
	return f.result(), nil
}

// fold sums and merges one run's agent intervals, given one at a time, by
// region: the memory of the answer (a histogram per region), whatever the
// run's length.
type fold struct {
	res    Result
	of     map[string]string // agent -> region
	byName map[string]*Region
	want   histRange
	starts map[int64]float64 // measured interval starts of the whole run -> seconds
}

// newFold starts the breakdown of run; done means the result needs no
// interval (no agents, or one region), and is f.res.
func newFold(run store.Run, agents []Agent) (f *fold, done bool) {
	f = &fold{res: Result{Run: run, Agents: len(agents)}, of: map[string]string{}, byName: map[string]*Region{},
		want: rangeOf(store.NewHistogram()), starts: map[int64]float64{}}
	if len(agents) == 0 {
		f.res.Note = fmt.Sprintf("run %d was driven by one process, without load agents", run.ID)
		return f, true
	}
	for _, a := range agents {
		name := a.Region
		if name == "" {
			name = NoRegion
		}
		f.of[a.Name] = name
		g := f.byName[name]
		if g == nil {
			g = &Region{Name: name, Hist: store.NewHistogram()}
			f.byName[name] = g
		}
		g.Agents = append(g.Agents, a.Name)
	}
	if len(f.byName) < 2 {
		for name := range f.byName {
			if name == NoRegion {
				f.res.Note = fmt.Sprintf("no agent of run %d has a region label", run.ID)
			} else {
				f.res.Note = fmt.Sprintf("every agent of run %d is in region %s", run.ID, name)
			}
		}
		return f, true
	}
	return f, false
}

// add folds one agent interval row; only measured ones count.
func (f *fold) add(iv *store.AgentInterval) error {
	if iv.Phase != measurePhase {
		return nil
	}
	run := f.res.Run.ID
	name, ok := f.of[iv.Agent]
	if !ok {
		return fmt.Errorf("run %d: agent %s has intervals but no part in the run", run, iv.Agent)
	}
	f.starts[iv.Start.UnixNano()] = iv.Duration.Seconds()
	g := f.byName[name]
	g.Completed += iv.Count
	g.Errors += iv.Errors
	g.Dropped += iv.Dropped
	if iv.Hist == nil {
		return nil
	}
	if got := rangeOf(iv.Hist); got != f.want {
		return fmt.Errorf("run %d agent %s %s at %s: its latency histogram covers %v, not %v; it cannot be merged exactly", run, iv.Agent, iv.Op, iv.Start.Format("15:04:05.000"), got, f.want)
	}
	if lost := iv.MergeInto(g.Hist); lost != 0 {
		return fmt.Errorf("run %d agent %s: merging dropped %d latency values outside the histogram's range", run, iv.Agent, lost)
	}
	return nil
}

func (f *fold) result() Result {
	res := f.res
	res.MeasureSec = res.Run.Summary.MeasureSecs
	if res.MeasureSec <= 0 {
		// A run without a summary (interrupted hard): the intervals' span.
		for _, d := range f.starts {
			res.MeasureSec += d
		}
	}
	for _, g := range f.byName {
		if res.MeasureSec > 0 {
			g.Throughput = float64(g.Completed) / res.MeasureSec
		}
		if g.Hist.TotalCount() > 0 {
			g.P50, g.P95, g.P99, g.Max = g.Hist.ValueAtQuantile(50), g.Hist.ValueAtQuantile(95), g.Hist.ValueAtQuantile(99), g.Hist.Max()
		}
		res.Regions = append(res.Regions, *g)
	}
	sortRegions(res.Regions, func(g Region) string { return g.Name })
	return res
}

type histRange struct{ lowest, highest, sigFigs int64 }

func rangeOf(h *hdrhistogram.Histogram) histRange {
	return histRange{h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures()}
}

// FromResults breaks down every run that load agents drove, in run
// order; runs one process drove are left out. The agents' intervals are
// streamed, one at a time, and only for runs whose agents span regions.
// It is computed once per Results (results.Memo): the terminal and the
// report both ask; the value is shared and must not be changed.
func FromResults(r *results.Results) ([]Result, error) {
	v, err := r.Memo("regions.FromResults", func() (any, error) { return fromResults(r) })
	if err != nil {
		return nil, err
	}
	return v.([]Result), nil
}

func fromResults(r *results.Results) ([]Result, error) {
	var out []Result
	for _, run := range r.Runs() {
		as, err := r.AgentRuns(run.ID)
		if err != nil {
			return nil, err
		}
		if len(as) == 0 {
			continue
		}
		regs, err := r.AgentRegions(run.ID)
		if err != nil {
			return nil, err
		}
		var agents []Agent
		for _, a := range as {
			agents = append(agents, Agent{Name: a.Agent, Region: regs[a.Agent]})
		}
		f, done := newFold(run, agents)
		if done {
			out = append(out, f.res)
			continue
		}
		if err := r.EachAgentInterval(run.ID, measurePhase, f.add); err != nil {
			return nil, err
		}
		out = append(out, f.result())
	}
	return out, nil
}
