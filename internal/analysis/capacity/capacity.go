// Package capacity is the load-response analysis of a campaign, one curve
// per treatment: throughput and mean latency per load level with t
// confidence intervals, the knee (saturation point) of the curve, the first
// level that fails the SLO, the levels where the client was the limit, the
// one capacity figure (the highest throughput that meets the SLO without
// client limits), and the busiest host's CPU per level (seed-digest §1-2). It builds on
// internal/analysis/levels, which computes the per-level means; this
// package only groups by treatment and adds what levels does not judge.
// Analyze is the pure core; FromResults is its driver over a results model,
// one curve per treatment with the treatment's own load model and SLO.
package capacity

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/analysis/stats"
)

// Config tunes the analysis. The zero value means the defaults.
type Config struct {
	// Confidence is the level of the t confidence intervals (default 0.95).
	Confidence float64
	// Shortfall is the open-loop saturation tolerance: a level is saturated
	// when its mean throughput is more than this fraction below the offered
	// rate (default 0.05 = 5%).
	Shortfall float64
	// KneedleMin is the closed-loop knee threshold: the normalized curve
	// must bend away from its chord by at least this much (default 0.1).
	KneedleMin float64
	// Op is the operation whose latency the curve shows; "" means all
	// operations together.
	Op string
}

// Defaults.
const (
	DefaultConfidence = 0.95
	DefaultShortfall  = 0.05
	DefaultKneedleMin = 0.1
)

func (c Config) withDefaults() (Config, error) {
	if c.Confidence == 0 {
		c.Confidence = DefaultConfidence
	}
	if c.Shortfall == 0 {
		c.Shortfall = DefaultShortfall
	}
	if c.KneedleMin == 0 {
		c.KneedleMin = DefaultKneedleMin
	}
	switch {
	case !(c.Confidence > 0 && c.Confidence < 1):
		return c, fmt.Errorf("capacity: Confidence %v is not a probability; use a value between 0 and 1 such as 0.95", c.Confidence)
	case !(c.Shortfall > 0 && c.Shortfall < 1):
		return c, fmt.Errorf("capacity: Shortfall %v is not a fraction; use a value between 0 and 1 such as 0.05", c.Shortfall)
	case !(c.KneedleMin > 0 && c.KneedleMin < 1):
		return c, fmt.Errorf("capacity: KneedleMin %v is outside (0, 1); use a value such as 0.1", c.KneedleMin)
	}
	return c, nil
}

// Point is one load level of a curve: everything levels computes (embedded;
// p.Level.Level is the offered rate or client count), plus the judgements
// this package adds.
type Point struct {
	levels.Level
	// ThroughputCI is the half-width of the throughput's t interval
	// (req/s); NaN with fewer than two repetitions.
	ThroughputCI float64
	// Latency is the mean latency (µs) of Config.Op (or of all operations)
	// across repetitions, the per-run mean tau of seed-digest §2, and
	// LatencyCI its interval's half-width.
	Latency   stats.Estimate
	LatencyCI float64
	// Shortfall is 1 - throughput/offered (open loop); NaN closed loop.
	Shortfall float64
	// Saturated: open loop, the mean throughput fell short of the offered
	// rate by more than Config.Shortfall.
	Saturated bool
	// BusiestHost is the monitored host with the highest mean CPU
	// utilisation at this level ("" when no CPU was sampled), BusiestCPU
	// that utilisation in percent (NaN when none).
	BusiestHost string
	BusiestCPU  float64
}

// Knee is the saturation point of a curve.
type Knee struct {
	Index  int     // index into Curve.Points of the last level before saturation
	Level  float64 // its offered rate (open) or client count (closed)
	Method string  // "shortfall" (open loop) or "kneedle" (closed loop)
	Reason string  // one sentence
}

// Curve is one treatment's load-response curve.
type Curve struct {
	Treatment string // "" when the campaign has a single treatment
	Model     string // "open" or "closed"
	Points    []Point
	Knee      *Knee // nil when no knee was found (see Notes)
	// MaxThroughput is the curve's one capacity figure: the highest mean
	// throughput of any level that meets the SLO (every level up to
	// LastPass; any level when there is no SLO) and that the client did
	// not limit. NaN when there is none, and NoCapacity says why;
	// MaxIndex is its level's index (-1 when none). Every $/req/s of a
	// report divides by it.
	MaxThroughput float64
	MaxIndex      int
	NoCapacity    string
	FirstFail     int   // index of the first level failing the SLO (levels.Summary.FirstFail); -1 = none
	LastPass      int   // index of the highest passing level below it; -1 = none
	ClientLimited []int // indices of levels where the client was the limit in at least one run
	Notes         []string
}

// Analyze builds one curve per treatment from a levels input (such as
// levels.FromResults returns), sorted by treatment label. The load model of a treatment is its
// runs' model, or in.Model when the runs do not record one.
func Analyze(in levels.Input, cfg Config) ([]Curve, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(in.Runs) == 0 {
		return nil, fmt.Errorf("capacity: the results hold no completed runs; run the campaign (or resume it) before analysing")
	}
	groups := map[string][]levels.RunData{}
	for _, rd := range in.Runs {
		groups[rd.Run.Treatment] = append(groups[rd.Run.Treatment], rd)
	}
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Curve, 0, len(names))
	for _, name := range names {
		model, err := modelOf(groups[name], in.Model)
		if err != nil {
			return nil, err
		}
		sum := levels.Summarize(levels.Input{Model: model, Runs: groups[name], SLO: in.SLO})
		c, err := curve(name, sum, cfg, in)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// modelOf is the load model the runs of one treatment share.
func modelOf(runs []levels.RunData, fallback string) (string, error) {
	model := ""
	for _, rd := range runs {
		m := rd.Run.Model
		if m == "" {
			continue
		}
		if model != "" && m != model {
			return "", fmt.Errorf("capacity: treatment %q mixes open and closed runs; give each load model its own treatment", rd.Run.Treatment)
		}
		model = m
	}
	if model == "" {
		model = fallback
	}
	if model != "open" && model != "closed" {
		return "", fmt.Errorf("capacity: load model %q is neither open nor closed; set levels.Input.Model to the spec's load.model", model)
	}
	return model, nil
}

func curve(name string, sum levels.Summary, cfg Config, in levels.Input) (Curve, error) {
	c := Curve{Treatment: name, Model: sum.Model, FirstFail: sum.FirstFail, LastPass: sum.LastPass, MaxIndex: -1, MaxThroughput: math.NaN()}
	found := false
	for i, l := range sum.Levels {
		p := Point{Level: l, ThroughputCI: l.Throughput.HalfWidth(cfg.Confidence), Shortfall: math.NaN(), BusiestCPU: math.NaN()}
		if row, ok := opRow(l, cfg.Op); ok {
			found = true
			p.Latency = row.Latency.Mean
			p.LatencyCI = row.Latency.Mean.HalfWidth(cfg.Confidence)
		} else {
			p.Latency = stats.Summarize(nil)
			p.LatencyCI = math.NaN()
		}
		if sum.Model == "open" && l.Level > 0 && l.Throughput.N > 0 {
			p.Shortfall = 1 - l.Throughput.Mean/l.Level
			// seed-digest §1: the open model reports the achieved rate beside
			// the offered one; saturation is the mean achieved rate falling
			// short of it by more than the tolerance. (Not the upper end of
			// the t interval: with 2-3 repetitions it is so wide that the
			// knee would lag a level behind.)
			p.Saturated = p.Shortfall > cfg.Shortfall
		}
		for _, h := range l.Hosts {
			if !math.IsNaN(h.CPUMean) && (p.BusiestHost == "" || h.CPUMean > p.BusiestCPU) {
				p.BusiestHost, p.BusiestCPU = h.Host, h.CPUMean
			}
		}
		if l.ClientLimited > 0 {
			c.ClientLimited = append(c.ClientLimited, i)
			c.Notes = append(c.Notes, fmt.Sprintf("the client was the limit in %d of %d runs at %s; that level is left out of the knee search and the capacity estimate",
				l.ClientLimited, l.Reps, levelText(sum.Model, l.Level)))
		}
		c.Points = append(c.Points, p)
	}
	if cfg.Op != "" && !found {
		return c, fmt.Errorf("capacity: operation %q has no latency in treatment %q; set Op to an operation the workload ran, or to \"\" for all", cfg.Op, name)
	}
	if in.Schedule != "" || in.Disturbed != "" {
		notALevel(&c, in)
		return c, nil
	}
	capacityOf(&c, sum.SLO != nil)
	if sum.Model == "open" {
		c.Knee = openKnee(&c)
	} else {
		c.Knee = closedKnee(&c, cfg.KneedleMin)
	}
	return c, nil
}

// notALevel withdraws the capacity and the knee of a treatment whose runs
// do not each measure one steady system at one offered rate: the rate
// followed a schedule of steps or a trace (as the controller examples
// do), or designed faults broke the system mid-run. A run's figures are then means over conditions it did not
// hold, so neither a knee (seed-digest §1: saturation is the achieved rate
// falling short of the one offered) nor a capacity can be read from them;
// the elasticity, controller and failure analyses judge such runs.
func notALevel(c *Curve, in levels.Input) {
	var why, judged string
	switch {
	case in.Schedule != "":
		what := "a schedule of steps"
		if in.Schedule == "trace" {
			what = "a trace"
		}
		why, judged = "the offered rate followed "+what+" within each run", "the elasticity and controller sections judge such runs"
	default:
		why, judged = "the runs hold designed faults ("+in.Disturbed+")", "the failures section judges such runs"
	}
	c.Knee, c.MaxIndex, c.MaxThroughput = nil, -1, math.NaN()
	c.NoCapacity = why + ", so a run is not one steady load level and there is no capacity estimate; " + judged
	c.Notes = append(c.Notes, "a knee needs runs that each hold one offered rate on one steady system, and "+why+" (a run's throughput is its mean over conditions it did not hold)")
}

// capacityOf sets the curve's one capacity figure (Curve.MaxThroughput):
// the highest mean throughput among the levels that meet the SLO (those up
// to LastPass, where the SLO has not yet failed; every level without an
// SLO) and that the client did not limit.
func capacityOf(c *Curve, withSLO bool) {
	last := len(c.Points) - 1
	if withSLO && c.FirstFail >= 0 {
		last = c.LastPass
	}
	passing := 0
	for i := 0; i <= last; i++ {
		p := c.Points[i]
		if p.Throughput.N == 0 {
			continue
		}
		passing++
		if p.ClientLimited == 0 && (c.MaxIndex < 0 || p.Throughput.Mean > c.MaxThroughput) {
			c.MaxIndex, c.MaxThroughput = i, p.Throughput.Mean
		}
	}
	switch {
	case c.MaxIndex >= 0:
	case withSLO && passing == 0:
		c.NoCapacity = "no level meets the SLO, so there is no capacity estimate"
	case withSLO:
		c.NoCapacity = "every level that meets the SLO was limited by the client, so there is no capacity estimate"
	default:
		c.NoCapacity = "no level is free of client limits, so there is no capacity estimate"
	}
}

// opRow is the latency row of op, or of all operations when op is "": the
// "all" row levels adds when there are several, else the only one.
func opRow(l levels.Level, op string) (levels.OpRow, bool) {
	for _, r := range l.Ops {
		if r.Op == op || (op == "" && (r.Op == "all" || len(l.Ops) == 1)) {
			return r, true
		}
	}
	return levels.OpRow{}, false
}

// usable are the indices of levels the knee search may use: measured, and
// not limited by the client (whose shortfall says nothing about the target).
func usable(c *Curve) []int {
	var idx []int
	for i, p := range c.Points {
		if p.ClientLimited == 0 && p.Throughput.N > 0 {
			idx = append(idx, i)
		}
	}
	return idx
}

// openKnee: the knee is the last level before persistent saturation. Once
// the offered rate exceeds capacity, no higher rate can be served in full
// (utilisation law, X = min(λ, capacity)), so saturation persists; the
// search takes the first saturated level s from which every higher level is
// also saturated, and the knee is the usable level just below s. Earlier
// isolated shortfalls are noted as noise. Latency is not the criterion: in
// an open system above capacity it depends on run length and the drop
// timeout, and the SLO verdict (FirstFail) already judges it.
func openKnee(c *Curve) *Knee {
	idx := usable(c)
	if len(idx) == 0 {
		c.Notes = append(c.Notes, "no level is free of client limits; no knee can be found")
		return nil
	}
	s := -1 // position in idx of the first level of the saturated tail
	for k := len(idx) - 1; k >= 0 && c.Points[idx[k]].Saturated; k-- {
		s = k
	}
	tailStart := len(idx)
	if s >= 0 {
		tailStart = s
	}
	for _, i := range idx[:tailStart] {
		if p := c.Points[i]; p.Saturated {
			c.Notes = append(c.Notes, fmt.Sprintf("throughput fell %s short of the offered rate at %s but kept up at higher rates; treated as noise",
				pct(p.Shortfall), levelText("open", p.Level.Level)))
		}
	}
	last := c.Points[idx[len(idx)-1]]
	switch {
	case s < 0:
		c.Notes = append(c.Notes, fmt.Sprintf("throughput kept up with the offered rate at every level up to %s: the capacity is above the measured range; add higher levels to find it",
			levelText("open", last.Level.Level)))
		return nil
	case s == 0:
		first := c.Points[idx[0]]
		c.Notes = append(c.Notes, fmt.Sprintf("throughput fell %s short of the offered rate already at the lowest level, %s: the capacity is below the measured range; add lower levels to find it",
			pct(first.Shortfall), levelText("open", first.Level.Level)))
		return nil
	}
	k, sat := idx[s-1], c.Points[idx[s]]
	return &Knee{Index: k, Level: c.Points[k].Level.Level, Method: "shortfall",
		Reason: fmt.Sprintf("throughput kept up with the offered rate up to %s and fell short of it from %s on (by %s there)",
			levelText("open", c.Points[k].Level.Level), levelText("open", sat.Level.Level), pct(sat.Shortfall))}
}

// closedKnee: Kneedle (Satopää et al., 2011) on throughput over clients.
// Below saturation a closed system's throughput grows about linearly with
// the client count (X = N/(R+Z)); above it, it flattens at capacity.
// Normalize both axes to [0, 1], x̂ = (N-Nmin)/(Nmax-Nmin) and
// ŷ = (X-Xmin)/(Xmax-Xmin); the knee is the point with the largest
// d = ŷ - x̂, the point farthest above the diagonal. A curve whose largest
// d is below minDist is still straight: no knee.
func closedKnee(c *Curve, minDist float64) *Knee {
	idx := usable(c)
	if len(idx) < 3 {
		c.Notes = append(c.Notes, fmt.Sprintf("a knee needs at least 3 client counts the client did not limit, this treatment has %d", len(idx)))
		return nil
	}
	xs := make([]float64, len(idx))
	ys := make([]float64, len(idx))
	for k, i := range idx {
		xs[k], ys[k] = c.Points[i].Level.Level, c.Points[i].Throughput.Mean
	}
	k, d := kneedle(xs, ys)
	if k < 0 {
		// Equal throughput at every client count: saturated from the
		// lowest one (not "linear"; and d is NaN, which a note must not print).
		c.Notes = append(c.Notes, fmt.Sprintf("throughput was the same at every client count from %s on: the capacity is at or below the lowest count; add lower client counts to find the knee",
			levelText("closed", xs[0])))
		return nil
	}
	if d < minDist {
		c.Notes = append(c.Notes, fmt.Sprintf("throughput grew about linearly with clients up to %s (largest Kneedle distance %.2f < %.2f): the capacity is above the measured range; add more clients to find it",
			levelText("closed", xs[len(xs)-1]), d, minDist))
		return nil
	}
	i := idx[k]
	return &Knee{Index: i, Level: xs[k], Method: "kneedle",
		Reason: fmt.Sprintf("throughput grew about linearly with clients up to %s and flattened after it (Kneedle distance %.2f)", levelText("closed", xs[k]), d)}
}

// kneedle returns the position of the largest normalized distance
// ŷ - x̂ and that distance; -1 when either axis has no range.
func kneedle(xs, ys []float64) (int, float64) {
	xmin, xmax := xs[0], xs[len(xs)-1]
	ymin, ymax := ys[0], ys[0]
	for _, y := range ys {
		ymin, ymax = min(ymin, y), max(ymax, y)
	}
	if !(xmax > xmin) || !(ymax > ymin) {
		return -1, math.NaN()
	}
	best, dist := -1, math.Inf(-1)
	for k := range xs {
		d := (ys[k]-ymin)/(ymax-ymin) - (xs[k]-xmin)/(xmax-xmin)
		if d > dist {
			best, dist = k, d
		}
	}
	return best, dist
}

func levelText(model string, v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if len(s) > 9 {
		// A schedule's mean rate (1244.8979591836735) reads to 0.1.
		s = strconv.FormatFloat(v, 'f', 1, 64)
	}
	if model == "closed" {
		return s + " clients"
	}
	return s + " req/s"
}

func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }
