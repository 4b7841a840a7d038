package spec

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Sweep is seed 001's way of choosing load levels (seed-digest §2): raise
// the level from From in fixed increments of Step until the target
// saturates, instead of running a fixed list. It is written as
//
//	rates: {from: 10, step: 10, until: saturated, max: 400}
//
// (or clients: for the closed model). The campaign runs the levels in
// increasing order, each level's repetitions together, and stops after the
// first level that saturates; Max (the highest level to try) and MaxLevels
// cap it, and at least one of them is required, so that a target that
// never saturates still ends. The levels of the plan are the capped list;
// the campaign leaves out those above the saturating level.
type Sweep struct {
	From, Step float64
	Max        float64 // highest level to try; 0 = no such cap
	MaxLevels  int     // most levels to try; 0 = no such cap
	// A level saturates when any enabled rule holds (defaults in
	// DefaultSweepCPU and DefaultSweepErrors): CPUPct, the target's CPU
	// utilisation (never the load generator's) averaged over the level's
	// measured phases, reaches this percentage (0 = rule off); ErrorPct,
	// the share of the level's requests that failed (refused connections
	// included), exceeds this percentage (0 = rule off); SLO, the
	// campaign's SLO fails at the level.
	CPUPct   float64
	ErrorPct float64
	SLO      bool
	// sloWritten is saturation.slo as written (nil: left to the default).
	sloWritten *bool
}

// Default saturation thresholds of a sweep. Seed 001 stops when the
// guest's CPU "reaches 100%"; a utilisation sampled over intervals reads
// 100 only when every sample is at the ceiling, which scheduler jitter and
// sampling edges rarely allow, so 95% is taken as reaching it. 1% of
// failed requests is far above what a healthy server returns (none) and
// far below the near-total failure of a server refusing connections.
const (
	DefaultSweepCPU    = 95.0
	DefaultSweepErrors = 1.0
)

// sweepFields is the YAML form of a sweep.
type sweepFields struct {
	From       *float64         `yaml:"from"`
	Step       *float64         `yaml:"step"`
	Until      string           `yaml:"until"`
	Max        *float64         `yaml:"max"`
	MaxLevels  *int             `yaml:"max_levels"`
	Saturation *saturationRules `yaml:"saturation"`
}

// saturationRules are a sweep's configurable stop rules.
type saturationRules struct {
	CPUPct   *float64 `yaml:"cpu_pct"`
	ErrorPct *float64 `yaml:"error_pct"`
	SLO      *bool    `yaml:"slo"`
}

// isSweep reports whether a level mapping is a sweep (it has until:).
func isSweep(n *yaml.Node) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "until" {
			return true
		}
	}
	return false
}

// sweep decodes a sweep mapping into its Sweep and the capped list of
// levels it may run. The SLO rule's default (on when the campaign has an
// SLO) is filled in by validation, which sees the whole spec.
func (d *decoder) sweep(n *yaml.Node, path string) (*Sweep, []float64, bool) {
	var f sweepFields
	before := len(d.errs)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Value == "to" {
			d.fail(k.Line, path+".to", "a sweep ends by until: saturated, not at to:; write max: for the highest level to try")
			return nil, nil, false
		}
	}
	d.structure(n, path, reflect.ValueOf(&f).Elem(), "")
	line := d.lines[path]
	for _, r := range []struct {
		name string
		v    *float64
	}{{"from", f.From}, {"step", f.Step}} {
		if r.v == nil && !d.hasErrorAt(before, path+"."+r.name) {
			d.fail(line, path+"."+r.name, "required in a sweep; write {from: 10, step: 10, until: saturated, max: 400}")
		}
	}
	if len(d.errs) > before {
		return nil, nil, false
	}
	if f.Until != "saturated" {
		d.fail(d.lines[path+".until"], path+".until", "unknown value %q; a sweep runs until: saturated", truncate(f.Until, 40))
		return nil, nil, false
	}
	sw := &Sweep{From: *f.From, Step: *f.Step, CPUPct: DefaultSweepCPU, ErrorPct: DefaultSweepErrors}
	if sw.Step <= 0 {
		d.fail(d.lines[path+".step"], path+".step", "must be greater than 0, got %g", sw.Step)
		return nil, nil, false
	}
	if f.Max == nil && f.MaxLevels == nil {
		d.fail(line, path, "a sweep needs a cap so that it ends when the target never saturates; add max: (the highest level to try) or max_levels:")
		return nil, nil, false
	}
	if f.Max != nil {
		sw.Max = *f.Max
		if sw.Max < sw.From {
			d.fail(d.lines[path+".max"], path+".max", "%g is below from (%g), so the sweep could not run a level; raise max or lower from", sw.Max, sw.From)
			return nil, nil, false
		}
	}
	if f.MaxLevels != nil {
		sw.MaxLevels = *f.MaxLevels
		if sw.MaxLevels < 1 {
			d.fail(d.lines[path+".max_levels"], path+".max_levels", "must be at least 1, got %d", sw.MaxLevels)
			return nil, nil, false
		}
	}
	if r := f.Saturation; r != nil {
		if r.CPUPct != nil {
			sw.CPUPct = *r.CPUPct
			if sw.CPUPct < 0 || sw.CPUPct > 100 {
				d.fail(d.lines[path+".saturation.cpu_pct"], path+".saturation.cpu_pct", "must be a percentage from 0 (rule off) to 100, got %g", sw.CPUPct)
				return nil, nil, false
			}
		}
		sw.sloWritten = r.SLO
		if r.ErrorPct != nil {
			sw.ErrorPct = *r.ErrorPct
			if sw.ErrorPct < 0 || sw.ErrorPct >= 100 {
				d.fail(d.lines[path+".saturation.error_pct"], path+".saturation.error_pct", "must be a percentage from 0 (rule off) to below 100, got %g", sw.ErrorPct)
				return nil, nil, false
			}
		}
	}
	vals, ok := sw.levels()
	if !ok {
		d.fail(line, path, "this sweep may run more than %d levels; use a larger step, a lower max or max_levels", maxLevels)
		return nil, nil, false
	}
	return sw, vals, true
}

// levels lists the levels the sweep may run, from From up to its cap.
func (sw *Sweep) levels() ([]float64, bool) {
	n := math.Inf(1)
	if sw.Max > 0 || sw.MaxLevels == 0 {
		// As in a range: the tolerance keeps a max that falls on a step.
		n = math.Floor((sw.Max-sw.From)/sw.Step+1e-9) + 1
	}
	if sw.MaxLevels > 0 {
		n = min(n, float64(sw.MaxLevels))
	}
	if !(n <= maxLevels) {
		return nil, false
	}
	vals := make([]float64, int(n))
	for i := range vals {
		vals[i] = roundLevel(sw.From+float64(i)*sw.Step, sw.Step)
	}
	return vals, true
}

// Sweep returns the sweep of the campaign's levels, or nil when they are a
// fixed list (or the open loop follows a schedule).
func (s *Spec) Sweep() *Sweep {
	l := s.Load.Rates
	switch {
	case s.Load.Model == "open" && s.Load.Schedule != nil:
		return nil
	case s.Load.Model == "closed":
		l = s.Load.Clients
	}
	if l == nil {
		return nil
	}
	return l.Sweep
}

// checkSweep applies the rules between a sweep and the rest of the spec,
// and fills in the SLO rule's default: on when the campaign has an SLO.
func (c *checker) checkSweep(s *Spec) {
	sw := s.Sweep()
	if sw == nil {
		return
	}
	path := "load.rates"
	if s.Load.Model == "closed" {
		path = "load.clients"
	}
	switch {
	case sw.sloWritten == nil:
		sw.SLO = s.SLO != nil
	case *sw.sloWritten && s.SLO == nil:
		c.fail(path+".saturation.slo", "judges the campaign's SLO, and this campaign has no slo: section; add one or remove slo: true")
	default:
		sw.SLO = *sw.sloWritten
	}
	if s.Order == "randomized" {
		c.fail("order", "a sweep raises the level in order and stops after the first level that saturates, which randomized order cannot do (it would run levels above the saturating one); remove order: randomized")
	}
	if sw.CPUPct == 0 && sw.ErrorPct == 0 && !sw.SLO {
		c.fail(path+".saturation", "every saturation rule is off, so the sweep could only run to its cap; turn a rule on or list the levels instead")
	}
}

// String describes the sweep in one line, e.g. "from 10 by 10 req/s until
// saturated (CPU >= 95%, errors > 1%, SLO fails), at most 400 req/s".
func (sw *Sweep) String(unit string) string {
	var rules []string
	if sw.CPUPct > 0 {
		rules = append(rules, "the target's CPU >= "+num(sw.CPUPct)+"%")
	}
	if sw.ErrorPct > 0 {
		rules = append(rules, "errors > "+num(sw.ErrorPct)+"% of requests")
	}
	if sw.SLO {
		rules = append(rules, "the SLO fails")
	}
	var caps []string
	if sw.Max > 0 {
		caps = append(caps, "at most "+num(sw.Max)+" "+unit)
	}
	if sw.MaxLevels > 0 {
		caps = append(caps, "at most "+strconv.Itoa(sw.MaxLevels)+" levels")
	}
	return fmt.Sprintf("from %s by %s %s until saturated (%s), %s; each level's repetitions run together, and the sweep stops after the first level that saturates",
		num(sw.From), num(sw.Step), unit, strings.Join(rules, " or "), strings.Join(caps, ", "))
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// checkSweepBlocks refuses blocks: repetition when a treatment sweeps:
// those blocks run one repetition of every level before the next
// repetition, and a sweep judges a level on all its repetitions before it
// raises the level.
func checkSweepBlocks(file string, root *yaml.Node, s *Spec) Errors {
	if s.Blocking != "repetition" {
		return nil
	}
	for _, t := range s.Treatments {
		if t.Spec.Sweep() != nil {
			return Errors{&Error{File: file, Line: keyLine(root, "blocks"), Path: "blocks",
				Msg: fmt.Sprintf("treatment %s sweeps its levels, which needs each level's repetitions before the next level, and blocks: repetition runs one repetition of every level at a time; remove blocks: repetition", t.Name)}}
		}
	}
	return nil
}
