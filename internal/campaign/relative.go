package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/probe"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
)

// eventProbedRates records the base rate of a treatment's relative levels
// (spec.Relative) once its probe ran, so that a resumed campaign runs the
// same levels instead of probing again.
const eventProbedRates = "probed_rates"

// probedRates is the detail of an eventProbedRates event.
type probedRates struct {
	Treatment string `json:"treatment"`
	results.RelativeLevels
	Rates []float64 `json:"rates"`
	// Keys is where the probe's inserts ended: the runs continue after it.
	Keys keySpace `json:"keys"`
}

// Settings of the short probe in front of relative levels. Seed 004 holds
// each rate for 8-10 s (seed-digest §3); a few seconds judge a p99 on
// thousands of requests at the rates a database takes, and the levels'
// fractions around the estimate absorb what a short window misjudges. The
// baseline needs at least five requests (probe.minBaselineRequests), which
// a two-second window at 5 req/s gives almost always. The window budget
// covers a doubling from the start rate to the probe's rate cap and a
// fine-tuning climb of a few steps.
const (
	levelProbeWindow     = 3 * time.Second
	levelProbeBaseRate   = 5
	levelProbeBaseWindow = 2 * time.Second
	levelProbeMaxWindows = 20
)

// LevelProbeConfig is the probe that finds the base rate of s's relative
// levels: seed 004's black-box probe (seed-digest §3) with the spec's SLO
// as its SLA, in short windows. It judges all operations together, also
// when the SLO names one.
func LevelProbeConfig(s *spec.Spec) probe.Config {
	cfg := probe.DefaultConfig()
	if s.SLO != nil {
		cfg.Percentile, cfg.Threshold = s.SLO.Percentile, s.SLO.Threshold.Duration
	}
	cfg.Window = levelProbeWindow
	cfg.BaselineRate, cfg.BaselineWindow = levelProbeBaseRate, levelProbeBaseWindow
	cfg.MaxWindows = levelProbeMaxWindows
	return cfg
}

// probeLevels gives the treatment's relative levels their rates, once its
// target is filled and before its first run: from the probe stored by an
// earlier session of the campaign, or by running the probe now (stored
// as Setup.Probe stores every probe, plus an eventProbedRates event). The
// executor's spec, plan and levels become the rates, and the treatment's
// facts say where they came from.
func (ex *executor) probeLevels(ctx context.Context, kube *KubernetesAgents) error {
	rel := ex.s.Relative()
	if rel == nil || rel.Base > 0 {
		return nil
	}
	pr, found, err := ex.storedProbedRates(rel)
	if err != nil {
		return &storeError{err}
	}
	who := ""
	if ex.tr.name != "" {
		who = ex.tr.name + ": "
	}
	if found {
		ex.prog.Note(fmt.Sprintf("%slevels: %s req/s, from the probe of an earlier session (%s)", who, rateList(pr.Rates), pr.Text()))
	} else {
		if pr, err = ex.runLevelProbe(ctx, kube, who); err != nil {
			return err
		}
		detail, _ := json.Marshal(pr)
		if err := ex.st.AddEvent(store.Event{Time: time.Now(), Kind: eventProbedRates, Detail: string(detail)}); err != nil {
			return &storeError{err}
		}
		// The probe wrote to the data: the first run is no longer on
		// freshly loaded records.
		ex.rs.pristine = false
	}
	ex.next = laterKeys(ex.next, pr.Keys)
	ex.s = ex.s.WithBaseRate(pr.Base)
	ex.plan, ex.levels = ex.s.Plan(), ex.s.Levels()
	t := TreatmentFacts(ex.s, ex.tr.name, ex.tr.index, ex.tr.set)
	t.Load.Relative = &pr.RelativeLevels
	if err := putTreatment(ex.st, t, ex.setup); err != nil {
		return &storeError{err}
	}
	return nil
}

// storedProbedRates finds the treatment's latest eventProbedRates with the
// spec's fractions.
func (ex *executor) storedProbedRates(rel *spec.Relative) (probedRates, bool, error) {
	evs, err := ex.st.Events(-1)
	if err != nil {
		return probedRates{}, false, err
	}
	var out probedRates
	found := false
	for _, e := range evs {
		if e.Kind != eventProbedRates {
			continue
		}
		var pr probedRates
		if json.Unmarshal([]byte(e.Detail), &pr) != nil || pr.Treatment != ex.tr.name || !slices.Equal(pr.Fractions, rel.Fractions) || !(pr.Base > 0) {
			continue
		}
		out, found = pr, true
	}
	return out, found, nil
}

// runLevelProbe runs the short probe against the filled target, printing a
// line per window, and turns its result into the levels' base rate.
func (ex *executor) runLevelProbe(ctx context.Context, kube *KubernetesAgents, who string) (probedRates, error) {
	s := ex.s
	rel := s.Relative()
	cfg := LevelProbeConfig(s)
	var meter probe.RTTMeter
	addr, _ := RTTAddress(ex.tgt, s.Target.Type) // without an address the probe runs without its RTT guard
	if addr != "" {
		p, err := probe.NewTCPPinger(ctx, addr, 3, 2*time.Second)
		if err != nil {
			ex.prog.Note(fmt.Sprintf("%sprobe: RTT guard off: %v", who, err))
			addr = ""
		} else {
			meter = p
		}
	}
	ex.prog.Note(fmt.Sprintf("%sprobe: finding the highest rate that meets p%s <= %v, in %v windows from %s req/s (seed 004's probe, docs/probe.md); the levels are %s x that rate",
		who, num(cfg.Percentile), cfg.Threshold, cfg.Window, num(cfg.StartRate), rateList(rel.Fractions)))
	keys := ex.next
	start := time.Now()
	res, err := ex.setup.Probe(ctx, cfg, ProbeOptions{
		Treatment: ex.tr.name, RTTAddr: addr, Meter: meter, Kubernetes: kube, Note: ex.prog.Note, keys: &keys,
		Baseline: func(b probe.Baseline) {
			ex.prog.Note(fmt.Sprintf("%sprobe: unloaded latency %s (median of %d requests at %s req/s)", who, msText(b.Latency), b.Completed, num(b.Rate)))
		},
		Window: func(w probe.Window) { ex.prog.Note(who + probeWindowLine(cfg, w)) },
	})
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return probedRates{}, ErrInterrupted
		}
		return probedRates{}, fmt.Errorf("the probe that finds the base rate of %s failed: %w", rel.Field(), err)
	}
	pr := probedRates{Treatment: ex.tr.name, Keys: keys}
	pr.To, pr.Fractions = rel.To, rel.Fractions
	pr.Base, pr.Basis, pr.Note = baseRate(cfg, *res)
	if ps, err := ex.st.Probes(); err == nil && len(ps) > 0 {
		pr.ProbeID = ps[len(ps)-1].ID // Setup.Probe stored it last
	}
	based := s.WithBaseRate(pr.Base)
	pr.Rates = based.Levels()
	took := time.Since(start).Round(time.Second)
	levels := "levels: " + rateList(pr.Rates) + " req/s"
	if rel.Steps {
		levels = "load: " + based.Load.ArrivalString()
	}
	switch pr.Basis {
	case results.BasisEstimate:
		ex.prog.Note(fmt.Sprintf("%sprobe: estimate %s req/s at p%s <= %v (%d windows, %v); %s",
			who, num(pr.Base), num(cfg.Percentile), cfg.Threshold, len(res.Windows), took, levels))
	default:
		ex.prog.Note(fmt.Sprintf("%sprobe: %s (%d windows, %v); %s", who, pr.Text(), len(res.Windows), took, levels))
	}
	return pr, nil
}

// baseRate is the rate relative levels multiply: the highest rate the
// probe saw meet the SLO. That is its estimate (seed-digest §3 step 4),
// unless the estimate is a rate it never ran (T - inc after the first
// fine-tuning window missed the SLA) above the highest rate whose window
// met the SLO, or there is no estimate (the probe stopped at its rate cap,
// its window budget or the client's limit): then that highest rate. When
// no window met the SLO, it is the lowest rate the probe tried, so that
// the fractions below 1 still run below where the target failed.
func baseRate(cfg probe.Config, res probe.Result) (base float64, basis, note string) {
	switch {
	case res.Estimate > 0 && !(res.LowerBound < res.Estimate):
		return res.Estimate, results.BasisEstimate, ""
	case res.Estimate > 0:
		return res.LowerBound, results.BasisLowerBound, fmt.Sprintf("the probe's estimate, %s req/s, was a rate it did not run", num(res.Estimate))
	}
	why := fmt.Sprintf("the probe found no estimate (it stopped: %s)", res.Stop)
	if res.LowerBound > 0 {
		return res.LowerBound, results.BasisLowerBound, why
	}
	lowest := math.Inf(1)
	for _, w := range res.Windows {
		if !w.Discarded && w.Rate > 0 {
			lowest = min(lowest, w.Rate)
		}
	}
	if math.IsInf(lowest, 1) {
		lowest = math.Min(cfg.BaselineRate, cfg.StartRate) // no window ran beyond the unloaded one
		if b := res.Baseline; b != nil {
			lowest = b.Rate
		}
	}
	return lowest, results.BasisLowest, why + " and no window met the SLO"
}

// probeWindowLine is one window of the probe as a progress line.
func probeWindowLine(cfg probe.Config, w probe.Window) string {
	line := fmt.Sprintf("probe %d (%s): %s req/s, %.0f ok/s, p%s %s: %s",
		w.Seq+1, w.Phase, num(w.Rate), w.Achieved, num(cfg.Percentile), msText(w.SLALatency), w.Verdict)
	if w.Discarded && w.Note != "" {
		line += " (" + w.Note + ")"
	}
	return line
}

// laterKeys is the later of two key spaces, key by key.
func laterKeys(a, b keySpace) keySpace {
	out := keySpace{NextInsert: max(a.NextInsert, b.NextInsert)}
	for i := range max(len(a.Sequences), len(b.Sequences)) {
		var v int64 = math.MinInt64
		if i < len(a.Sequences) {
			v = a.Sequences[i]
		}
		if i < len(b.Sequences) {
			v = max(v, b.Sequences[i])
		}
		out.Sequences = append(out.Sequences, v)
	}
	return out
}

// msText is a latency in milliseconds, "-" when undefined.
func msText(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + " ms"
}

// rateList joins levels, e.g. "2070, 3630, 5700".
func rateList(xs []float64) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = num(x)
	}
	return strings.Join(out, ", ")
}
