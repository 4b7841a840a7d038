// Package rigor makes the report sections of Headroom's capacity and
// measurement-rigor analyses: the load-response curve of each treatment with
// its knee and confidence intervals (internal/analysis/capacity), seed 001's
// variation verdicts (internal/analysis/variability), the scaling comparison
// of treatments that differ in server count or size
// (internal/analysis/scaling), and the black-box capacity probe of seed 004
// with its latency/throughput surface. Every builder reads only the results
// store and returns no section when the store holds nothing for it; every
// table and chart says what its numbers come from. Findings gives the same
// headline findings for the terminal summary of run, report and probe.
package rigor

import (
	"fmt"
	"math"
	"reflect"
	"sort"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
)

// campaign is what the sections need from a results store besides the
// analyses' own inputs.
type campaign struct {
	spec       *spec.Spec // the stored spec; nil when missing or invalid
	specErr    error
	treatments []treatment // in the spec's order; one unnamed treatment without treatments
	runs       []store.Run
	events     []store.Event
}

// treatment is one treatment of the campaign and its own spec.
type treatment struct {
	name string
	spec *spec.Spec // nil when the stored spec is missing or invalid
}

// load reads the campaign. The stored spec parses only when its target
// type is registered (the CLI imports every target).
func load(st *store.Store) (*campaign, error) {
	c, err := st.Campaign()
	if err != nil {
		return nil, err
	}
	out := &campaign{}
	if c.SpecYAML != "" {
		out.spec, out.specErr = spec.Parse(c.SpecFile, []byte(c.SpecYAML))
	}
	if out.runs, err = st.Runs(); err != nil {
		return nil, err
	}
	if out.events, err = st.Events(-1); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	if s := out.spec; s != nil {
		if len(s.Treatments) == 0 {
			out.treatments = []treatment{{name: "", spec: s}}
			seen[""] = true
		}
		for _, t := range s.Treatments {
			out.treatments = append(out.treatments, treatment{name: t.Name, spec: t.Spec})
			seen[t.Name] = true
		}
	}
	// Runs of labels the spec does not name (it did not parse) still count.
	var extra []string
	for _, r := range out.runs {
		if !seen[r.Treatment] {
			seen[r.Treatment] = true
			extra = append(extra, r.Treatment)
		}
	}
	sort.Strings(extra)
	for _, n := range extra {
		out.treatments = append(out.treatments, treatment{name: n})
	}
	return out, nil
}

// find returns the treatment of that name.
func (c *campaign) find(name string) (treatment, bool) {
	for _, t := range c.treatments {
		if t.name == name {
			return t, true
		}
	}
	return treatment{}, false
}

// model is the treatment's load model: its spec's, else its runs'.
func (c *campaign) model(t treatment) string {
	if t.spec != nil {
		return t.spec.Load.Model
	}
	for _, r := range c.runs {
		if r.Treatment == t.name && r.Model != "" {
			return r.Model
		}
	}
	return "open"
}

// slo is the treatment's SLO in the analyses' terms; nil without one.
func slo(t treatment) *levels.SLO {
	if t.spec == nil || t.spec.SLO == nil {
		return nil
	}
	o := t.spec.SLO
	return &levels.SLO{Percentile: o.Percentile, Threshold: o.Threshold.Duration, Op: o.Operation}
}

// managedHost is the lab host a target's managed server runs on ("" when
// none): every managed target's options hold a Managed *deploy.Managed.
func managedHost(s *spec.Spec) string {
	if s == nil || s.Target.Options == nil {
		return ""
	}
	v := reflect.ValueOf(s.Target.Options)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return ""
	}
	f := v.FieldByName("Managed")
	if !f.IsValid() {
		return ""
	}
	if m, ok := f.Interface().(*deploy.Managed); ok && m != nil {
		return m.Host
	}
	return ""
}

// label names a treatment in prose.
func label(name string) string {
	if name == "" {
		return "the campaign"
	}
	return name
}

// runSource says what a treatment's per-level numbers come from: how many
// completed runs at how many levels and repetitions, and the measured phase.
func runSource(in levels.Input, what string) string {
	reps := map[int]int{}
	lo, hi := math.Inf(1), 0.0
	for _, rd := range in.Runs {
		reps[rd.Run.LevelIndex]++
		if s := rd.Run.Summary.MeasureSecs; s > 0 {
			s = math.Round(s*10) / 10
			lo, hi = math.Min(lo, s), math.Max(hi, s)
		}
	}
	minR, maxR := math.MaxInt, 0
	for _, n := range reps {
		minR, maxR = min(minR, n), max(maxR, n)
	}
	rep := plural(maxR, "repetition")
	if minR != maxR {
		rep = fmt.Sprintf("%d to %d repetitions", minR, maxR)
	}
	s := fmt.Sprintf("from %s of %s (%s x %s)", plural(len(in.Runs), "completed run"), what, plural(len(reps), "level"), rep)
	switch {
	case hi == 0:
	case lo == hi:
		s += fmt.Sprintf(", measured phase of %s s", num(hi))
	default:
		s += fmt.Sprintf(", measured phases of %s to %s s", num(lo), num(hi))
	}
	return s
}
