package spec

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/headroom-dev/headroom/internal/load"
)

// Relative is the open model's rates written as fractions of a rate
// measured first on the machine at hand, so that one spec finds its own
// range on a slow or a fast machine:
//
//	rates: {relative_to: probe, fractions: [0.4, 0.7, 0.9, 1.1, 1.4]}
//
// Before the first level of a treatment, the campaign runs a short
// black-box capacity probe (seed-digest §3) with the spec's SLO as its
// SLA; the levels are then the fractions times the probe's estimate,
// rounded by RoundRate. Until then Levels.Values holds the fractions
// themselves, so that the plan (its size and order) is known at
// validation; WithBaseRate turns them into rates.
type Relative struct {
	// To says what measures the base rate; "probe" is the one source.
	To        string
	Fractions []float64
	// Base is the rate the fractions multiply, 0 until WithBaseRate.
	Base float64
	// Steps says the fractions are load.schedule's steps, in order,
	// rather than levels.
	Steps bool
}

// Field is the spec field the fractions are written in: load.rates, or
// load.schedule for steps.
func (r *Relative) Field() string {
	if r.Steps {
		return "load.schedule"
	}
	return "load.rates"
}

// RelativeToProbe is the one value of relative_to.
const RelativeToProbe = "probe"

// maxFraction bounds a fraction: a level ten times the rate that met the
// SLO is far past any capacity, and a larger factor is most likely a rate
// written where a fraction belongs.
const maxFraction = 10

// relativeFields is the YAML form of Relative.
type relativeFields struct {
	RelativeTo string    `yaml:"relative_to"`
	Fractions  []float64 `yaml:"fractions"`
}

// isRelative reports whether a level mapping is relative (it has relative_to:).
func isRelative(n *yaml.Node) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "relative_to" {
			return true
		}
	}
	return false
}

// relative decodes {relative_to: probe, fractions: [...]}.
func (d *decoder) relative(n *yaml.Node, path string) (*Relative, bool) {
	var f relativeFields
	before := len(d.errs)
	d.structure(n, path, reflect.ValueOf(&f).Elem(), "")
	if len(d.errs) > before {
		return nil, false
	}
	if f.RelativeTo != RelativeToProbe {
		d.fail(d.lines[path+".relative_to"], path+".relative_to", "unknown value %q; the one source of a base rate is relative_to: probe", truncate(f.RelativeTo, 40))
		return nil, false
	}
	if len(f.Fractions) == 0 {
		d.fail(d.lines[path], path+".fractions", "required with relative_to; list the levels as fractions of the probe's rate, e.g. fractions: [0.4, 0.7, 0.9, 1.1, 1.4]")
		return nil, false
	}
	if len(f.Fractions) > maxLevels {
		d.fail(d.lines[path+".fractions"], path+".fractions", "%d levels is more than the %d allowed; split the campaign", len(f.Fractions), maxLevels)
		return nil, false
	}
	for i, x := range f.Fractions {
		p := fmt.Sprintf("%s.fractions[%d]", path, i)
		switch {
		case !(x > 0 && x <= maxFraction):
			d.fail(d.lines[p], p, "must be a fraction of the probe's rate above 0 and at most %d, got %g", maxFraction, x)
			return nil, false
		case slices.Contains(f.Fractions[:i], x):
			d.fail(d.lines[p], p, "%g is listed twice; remove one", x)
			return nil, false
		}
	}
	return &Relative{To: f.RelativeTo, Fractions: f.Fractions}, true
}

// checkRelative applies the rules between relative levels and the rest of
// the spec: they are request rates, and the probe that measures their base
// judges the campaign's SLO.
func (c *checker) checkRelative(s *Spec) {
	if l := s.Load.Clients; l != nil && l.Relative != nil {
		c.fail("load.clients.relative_to", "levels relative to a probe are request rates of the open model; list the client counts, or use model: open with rates: {relative_to: probe, fractions: [...]}")
		return
	}
	r := s.Relative()
	if r == nil {
		return
	}
	if s.SLO == nil {
		fixed := "list the rates"
		if r.Steps {
			fixed = "give the steps rates"
		}
		c.fail(r.Field()+".relative_to", "the probe that finds the base rate judges the campaign's SLO, and this campaign has no slo: section; add one, e.g. slo: {percentile: 99, threshold: 10ms}, or %s", fixed)
	}
}

// Relative returns the relative form of the campaign's rates (or of its
// schedule's steps), or nil when they are a fixed list, a range, a sweep,
// a trace or steps of fixed rates.
func (s *Spec) Relative() *Relative {
	l := s.Load.Rates
	if s.Load.Model != "open" {
		return nil
	}
	if sc := s.Load.Schedule; sc != nil {
		if sc.RelativeTo == "" {
			return nil
		}
		fs := make([]float64, len(sc.Steps))
		for i, st := range sc.Steps {
			fs[i] = st.Fraction
		}
		return &Relative{To: sc.RelativeTo, Fractions: fs, Base: sc.Base, Steps: true}
	}
	if l == nil {
		return nil
	}
	return l.Relative
}

// RoundRate rounds a computed rate to three significant digits (whole
// requests per second from 100 up), within what the load engine paces:
// levels that read cleanly, at most half a percent from the exact
// product. A rate that would send less than one request in the measured
// phase is raised to one that sends one.
func RoundRate(x float64, s *Spec) float64 {
	if !(x > 0) {
		return x
	}
	r := roundSignificant(x)
	if m := s.Phases.Measure.Duration.Seconds(); m > 0 && r*m < 1 {
		r = roundLevel(math.Ceil(1000/m)/1000, 0.001)
	}
	return min(r, float64(load.MaxRate))
}

// roundSignificant rounds x > 0 to three significant digits.
func roundSignificant(x float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(x))-2)
	return roundLevel(math.Round(x/mag)*mag, mag)
}

// WithBaseRate returns a copy of s whose relative rates are its fractions
// times base (rounded, RoundRate), in the same plan slots and order. s
// itself is not changed; a spec without relative rates is returned as is.
func (s *Spec) WithBaseRate(base float64) *Spec {
	r := s.Relative()
	if r == nil {
		return s
	}
	if r.Steps {
		return s.withBaseSteps(base)
	}
	out := *s
	rel := *r
	rel.Base = base
	lv := *s.Load.Rates
	lv.Relative = &rel
	lv.Values = make([]float64, len(r.Fractions))
	for i, f := range r.Fractions {
		lv.Values[i] = RoundRate(f*base, s)
	}
	out.Load.Rates = &lv
	if s.planRuns != nil {
		out.planRuns = slices.Clone(s.planRuns)
		for i := range out.planRuns {
			out.planRuns[i].Level = lv.Values[out.planRuns[i].LevelIndex]
		}
	}
	return &out
}

// withBaseSteps is WithBaseRate for a relative schedule: each step's rate
// is its fraction times base, rounded to three significant digits (a
// pause stays a pause), and the plan's one level is the schedule's new
// mean rate.
func (s *Spec) withBaseSteps(base float64) *Spec {
	out := *s
	sc := *s.Load.Schedule
	sc.Base = base
	sc.Steps = slices.Clone(sc.Steps)
	for i := range sc.Steps {
		if f := sc.Steps[i].Fraction; f > 0 {
			sc.Steps[i].Rate = min(roundSignificant(f*base), float64(load.MaxRate))
		}
	}
	out.Load.Schedule = &sc
	if s.planRuns != nil {
		out.planRuns = slices.Clone(s.planRuns)
		level := out.scheduleLevel()
		for i := range out.planRuns {
			out.planRuns[i].Level = level
		}
	}
	return &out
}

// String describes relative rates in one line, e.g. "0.4, 0.7, 0.9, 1.1,
// 1.4 x the rate a short probe finds first (the highest that meets the
// SLO)", or with the base once it is known.
func (r *Relative) String() string {
	fs := make([]string, len(r.Fractions))
	for i, f := range r.Fractions {
		fs[i] = num(f)
	}
	what := ""
	if r.Steps {
		what = "schedule steps of "
	}
	if r.Base > 0 {
		return fmt.Sprintf("%s%s x %s req/s, the rate a short probe found first", what, strings.Join(fs, ", "), num(r.Base))
	}
	return fmt.Sprintf("%s%s x the rate a short probe finds first (the highest that meets the SLO)", what, strings.Join(fs, ", "))
}
