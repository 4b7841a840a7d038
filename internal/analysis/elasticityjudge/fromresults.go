package elasticityjudge

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/analysis/profit"
	"github.com/headroom-dev/headroom/internal/controller/runlog"
	"github.com/headroom-dev/headroom/internal/results"
)

// Run is one controller run of a results store, judged, with the series
// a report draws.
type Run struct {
	ID         int64
	Treatment  string
	Level      float64
	Repetition int
	Setup      runlog.Setup
	Entries    []runlog.Entry // the decisions, in time order
	// Input is what was judged: one Second per measured second.
	Input Input
	// Offered is the load offered each second (answered, failed and
	// dropped requests per second), Answered the requests answered per
	// second; both aligned with Input.Seconds.
	Offered, Answered []float64
	Result            Result
	// Elastic says whether the BUNGEE metrics were computed: they need
	// a tier's node capacity to turn offered load into nodes demanded.
	Elastic bool
	// Tiers are the run's scaled tiers, each judged on its own; Input's
	// supply and demand are the first tier's.
	Tiers []TierRun
	Notes []string
	// Problem is why the run could not be judged (nil: judged).
	Problem error
}

// TierRun is one scaled tier of a run: its nodes serving and the nodes
// the load demanded of it each second (aligned with Input.Seconds), and
// its BUNGEE metrics. BUNGEE judges each resource on its own (Herbst et
// al.); a run of several tiers reports in Result.Bungee the mean over the
// tiers with a node capacity, each already a share of its own demand.
type TierRun struct {
	Tier           string
	NodeCapacity   float64 // req/s a node serves within the SLA; 0 = unknown (no BUNGEE)
	Supply, Demand []float64
	Bungee         Bungee
}

// Judged is every controller run of a results store and the side by side
// summary of the controllers.
type Judged struct {
	Runs []Run
	// Summaries are the judged runs grouped by Result.Controller, in the
	// order the controllers first appear.
	Summaries []Summary
}

// RunsOf returns the judged runs of one controller (a Summary's name).
func (j Judged) RunsOf(controller string) []Run {
	var out []Run
	for _, x := range j.Runs {
		if x.Problem == nil && x.Result.Controller == controller {
			out = append(out, x)
		}
	}
	return out
}

// FromResults judges every completed run of r that has a controller
// setup (runlog.SetupKind). Per run, each measured second becomes a
// Second:
//
//   - Hist: the second's histograms merged over operations; Errors: its
//     failed and dropped requests;
//   - Supply: the tier's nodes serving at the second's start: the setup's
//     nodes, +1 from each tier node added (at its Done: when it served),
//     −1 from each tier node removed (at its Requested: a leaving node no
//     longer counts); a change that never got done does not count;
//   - Demand: ⌈offered req/s / the setup's node capacity⌉ (seed-digest §7,
//     BUNGEE's demand in resource units), with offered = answered +
//     failed + dropped; without a node capacity there is no demand, and
//     no BUNGEE metrics (Run.Elastic false, a note says so);
//   - with several scaled tiers, Supply and Demand are kept per tier
//     (Run.Tiers; Input's are the first tier's), BUNGEE is computed per
//     tier with a node capacity, and Result.Bungee is their mean;
//   - CostPerHour: every lab host's hourly price (with volumes) in force
//     at the second's start — the tier's and the others', e.g. the
//     database's; a released host costs nothing from its release.
//
// Actions are the decisions that asked for another node count and were
// carried out without error; the SLA threshold is the setup's normal one.
// Profit uses sla when given, else the treatment's analysis.plan steps
// when the campaign set analysis.plan, else none.
func FromResults(r *results.Results, sla profit.Steps) (Judged, error) {
	type found struct {
		t results.Treatment
		x Run
	}
	var runs []found
	kinds := map[string]map[string]bool{} // controller kind -> treatments running it
	for _, t := range r.Treatments() {
		for _, run := range r.CompletedRuns(t.Name) {
			setup, entries, ok, err := runlog.Read(r, run.ID)
			if err != nil {
				return Judged{}, err
			}
			if !ok {
				continue
			}
			if kinds[setup.Controller] == nil {
				kinds[setup.Controller] = map[string]bool{}
			}
			kinds[setup.Controller][t.Name] = true
			runs = append(runs, found{t, Run{ID: run.ID, Treatment: t.Name, Level: run.Level, Repetition: run.Repetition, Setup: setup, Entries: entries}})
		}
	}
	var j Judged
	var rs []Result
	for _, f := range runs {
		x := f.x
		steps, note := slaOf(f.t, sla)
		if note != "" {
			x.Notes = append(x.Notes, note)
		}
		var err error
		x.Problem, err = judgeRun(r, &x, label(f.t, x.Level, x.Setup.Controller, len(kinds[x.Setup.Controller]) > 1), steps)
		if err != nil {
			return Judged{}, err
		}
		if x.Problem == nil {
			rs = append(rs, x.Result)
		}
		j.Runs = append(j.Runs, x)
	}
	j.Summaries = Summarise(rs)
	return j, nil
}

// judgeRun builds a run's seconds and judges them. problem is why the
// run cannot be judged; err, that the store could not be read.
func judgeRun(r *results.Results, x *Run, label string, steps profit.Steps) (problem, err error) {
	s := x.Setup
	if s.Normal <= 0 {
		return fmt.Errorf("run %d's controller setup has no normal SLA threshold, so its SLA satisfaction cannot be judged", x.ID), nil
	}
	ivs, err := r.Intervals(x.ID, "measure")
	if err != nil {
		return nil, fmt.Errorf("reading run %d's intervals: %w", x.ID, err)
	}
	secs := mergeSeconds(ivs)
	if len(secs) == 0 {
		return fmt.Errorf("run %d has no measured seconds to judge", x.ID), nil
	}
	changes, err := r.NodeChanges(x.ID)
	if err != nil {
		return nil, err
	}
	tiers := s.AllTiers()
	steps0 := make([][]supplyStep, len(tiers))
	x.Tiers = make([]TierRun, len(tiers))
	for i, t := range tiers {
		steps0[i] = supplySteps(changes, t.Tier, secs[0].start)
		x.Tiers[i] = TierRun{Tier: t.Tier, NodeCapacity: t.NodeCapacity}
		x.Elastic = x.Elastic || t.NodeCapacity > 0
	}
	switch {
	case !x.Elastic && len(tiers) == 1:
		x.Notes = append(x.Notes, "the controller's node capacity is unknown (controller.node_capacity), so the nodes the load demanded, and BUNGEE's accuracy, timeshare and jitter, are not computed")
	case len(tiers) > 1:
		for _, t := range tiers {
			if t.NodeCapacity <= 0 {
				x.Notes = append(x.Notes, fmt.Sprintf("the %s tier's node capacity is unknown (controller.tiers[].node_capacity), so BUNGEE's metrics leave that tier out", t.Tier))
			}
		}
	}
	in := Input{Controller: label, Repetition: x.Repetition, Threshold: s.Normal, SLA: steps}
	priced := false
	for _, sec := range secs {
		offered := float64(sec.count+sec.failed) / sec.dur.Seconds()
		for i, t := range tiers {
			supply := len(t.Nodes)
			for _, c := range steps0[i] {
				if !c.at.After(sec.start) {
					supply += c.delta
				}
			}
			var demand float64
			if t.NodeCapacity > 0 {
				// The small slack keeps an exact multiple of the capacity
				// from rounding up on floating-point noise.
				demand = math.Ceil(offered/t.NodeCapacity - 1e-9)
			}
			x.Tiers[i].Supply = append(x.Tiers[i].Supply, float64(max(supply, 0)))
			x.Tiers[i].Demand = append(x.Tiers[i].Demand, demand)
		}
		cost := hourlyCost(r, sec.start)
		priced = priced || cost > 0
		in.Seconds = append(in.Seconds, Second{Start: sec.start, Hist: sec.hist, Errors: sec.failed,
			Demand: x.Tiers[0].Demand[len(x.Tiers[0].Demand)-1], Supply: x.Tiers[0].Supply[len(x.Tiers[0].Supply)-1], CostPerHour: cost})
		x.Offered = append(x.Offered, offered)
		x.Answered = append(x.Answered, float64(sec.count)/sec.dur.Seconds())
	}
	if !priced {
		x.Notes = append(x.Notes, "the store records no lab host prices, so the run's cost is $0")
	}
	for _, e := range x.Entries {
		if e.Changed() && e.Error == "" {
			in.Actions++
		}
	}
	res, err := Judge(in)
	if err != nil {
		return fmt.Errorf("run %d: %w", x.ID, err), nil
	}
	res.Bungee = Bungee{}
	elastic := 0
	for i := range x.Tiers {
		t := &x.Tiers[i]
		if t.NodeCapacity <= 0 {
			continue
		}
		ts := slices.Clone(in.Seconds)
		for k := range ts {
			ts[k].Supply, ts[k].Demand = t.Supply[k], t.Demand[k]
		}
		t.Bungee = Elasticity(ts)
		res.Bungee = res.Bungee.plus(t.Bungee)
		elastic++
	}
	if elastic > 1 {
		res.Bungee = res.Bungee.times(1 / float64(elastic))
	}
	x.Input, x.Result = in, res
	return nil, nil
}

// second is one measured second of a run, every operation together.
type second struct {
	start         time.Time
	dur           time.Duration
	count, failed int64
	hist          *hdrhistogram.Histogram
}

// mergeSeconds joins a run's per-operation intervals by their start.
func mergeSeconds(ivs []results.Interval) []second {
	by := map[time.Time]*second{}
	var out []*second
	for _, iv := range ivs {
		if iv.Duration <= 0 {
			continue
		}
		s := by[iv.Start]
		if s == nil {
			s = &second{start: iv.Start}
			by[iv.Start] = s
			out = append(out, s)
		}
		s.dur = max(s.dur, iv.Duration)
		s.count += iv.Count
		s.failed += iv.Errors + iv.Dropped
		if iv.Hist != nil && iv.Hist.TotalCount() > 0 {
			if s.hist == nil {
				s.hist = hdrhistogram.New(iv.Hist.LowestTrackableValue(), iv.Hist.HighestTrackableValue(), int(iv.Hist.SignificantFigures()))
			}
			s.hist.Merge(iv.Hist)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	secs := make([]second, len(out))
	for i, s := range out {
		secs[i] = *s
	}
	return secs
}

// supplyStep is a change of the tier's serving nodes from at on.
type supplyStep struct {
	at    time.Time
	delta int
}

// supplySteps are the tier's node changes of a run that happened: an added
// node counts from when it served, a removed one stops counting when its
// removal was asked for. Changes asked for before the measured phase are
// already in the setup's nodes.
func supplySteps(changes []results.NodeChange, tier string, from time.Time) []supplyStep {
	var out []supplyStep
	for _, c := range changes {
		host := c.Host
		if host == "" {
			host = c.Node
		}
		if !runlog.InTier(tier, host) || c.Done.IsZero() || c.Requested.Before(from) {
			continue
		}
		switch c.Delta() {
		case 1:
			out = append(out, supplyStep{at: c.Done, delta: 1})
		case -1:
			out = append(out, supplyStep{at: c.Requested, delta: -1})
		}
	}
	return out
}

// hourlyCost sums the hourly price of every host of the lab up at t, as
// in force at t. A host's entries from before that lab came up belong to
// an earlier lab (each treatment brings its own up), and a released host's
// last entry has no price.
func hourlyCost(r *results.Results, t time.Time) float64 {
	lab, labUp := r.LabAt(t)
	var sum float64
	for _, h := range r.HostNames() {
		hl, ok := r.HostLimits(h, t)
		if !ok || labUp && hl.From.Before(lab.Up) {
			continue
		}
		sum += hl.HourlyCost()
	}
	return sum
}

// slaOf is the revenue model a treatment's controller runs are priced by:
// the caller's, else the treatment's analysis.plan steps when it set
// analysis.plan, else none. The note says what the judge leaves out of a
// richer plan.
func slaOf(t results.Treatment, given profit.Steps) (profit.Steps, string) {
	if given != nil {
		return given, ""
	}
	if reflect.DeepEqual(t.Analysis.Plan, results.Plan{}) {
		return nil, ""
	}
	sla, _, _, err := profit.Model(t.Analysis.Plan, false)
	if err != nil {
		return nil, "no profit: " + err.Error()
	}
	note := ""
	if len(sla.Ops) > 0 || sla.ErrorDollars != nil || sla.StaleDollars != nil {
		note = "profit prices every request by analysis.plan's default steps, a failed or dropped one at the slowest step; its per-operation steps and error and staleness prices are not applied to controller runs"
	}
	return sla.Steps, note
}

// label names a run's controller in the summary: its kind ("empirical",
// "hpa"), with the treatment's name when other treatments run the same
// kind, and the level when the treatment has several.
func label(t results.Treatment, level float64, kind string, shared bool) string {
	out := kind
	if shared && t.Name != "" {
		out += " (" + t.Name + ")"
	}
	if len(t.Load.Levels) > 1 {
		out += fmt.Sprintf(" at %g %s", level, t.Load.LevelUnit())
	}
	return out
}
