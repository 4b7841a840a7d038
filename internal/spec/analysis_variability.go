package spec

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// VariabilityAnalysis is analysis.variability: the settings of seed 001's
// rigor verdicts (seed-digest §2; docs/analysis-capacity.md). Every field
// is optional:
//
//	analysis:
//	  variability:
//	    thresholds: relative  # relative (default) or absolute (seed 001's, below)
//	    repeat_pct: 5         # relative (a): repeatable when tau_se < 5% of tau
//	    cross_pct: 20         # relative (b): equal when |Δtau| < 20% of tau, shown by Welch's t
//	    alpha: 0.05           # relative (b): the level of Welch's test
//	    repeat_se: 5ms        # absolute (a): repeatable when tau_se < this (default 5ms)
//	    cross_diff: 30ms      # absolute (b): equal instances differ by less (default 30ms)
//	    trim: 30s             # CPU samples cut from each end of a run (default 30s; 0s = none)
//	    host: db1             # whose CPU is theta (default: the treatment's managed.host)
//	    hosts: {inst-a: db1}  # ... per treatment
//	    equal: [[inst-a, inst-b]]   # treatments created equal, for verdict (b)
//	    policies: {inst-a: restore} # reset policy per treatment (default: each treatment's reset)
type VariabilityAnalysis struct {
	// Thresholds chooses how verdicts (a) and (b) are judged: "relative"
	// (tau_se and |Δtau| as shares of tau, with Welch's t-test across
	// repetitions) or "absolute" (seed 001's fixed durations). Empty means
	// absolute when repeat_se or cross_diff is written, else relative
	// (ThresholdsMode).
	Thresholds string `yaml:"thresholds"`
	// RepeatPct is relative verdict (a)'s threshold on tau_se / tau, in
	// percent; 0 = the default 5.
	RepeatPct float64 `yaml:"repeat_pct"`
	// CrossPct is relative verdict (b)'s margin on |Δtau| / tau (the smaller
	// tau of the pair), in percent; 0 = the default 20.
	CrossPct float64 `yaml:"cross_pct"`
	// Alpha is the level of Welch's test in relative verdict (b); 0 = the
	// default 0.05.
	Alpha float64 `yaml:"alpha"`
	// RepeatSE is absolute verdict (a)'s threshold on tau_se; 0 = the
	// default 5 ms.
	RepeatSE Duration `yaml:"repeat_se"`
	// CrossDiff is absolute verdict (b)'s threshold on the largest |tau_i - tau_j|
	// of instances created equal; 0 = the default 30 ms.
	CrossDiff Duration `yaml:"cross_diff"`
	// Trim is cut from the start and from the end of each run's measured
	// phase before its CPU samples are averaged (seed 001 samples from
	// t+30 s to t+d-30 s); nil = the default 30 s, 0 = no trim.
	Trim *Duration `yaml:"trim"`
	// Host is the lab host (or monitored host) whose CPU utilisation is
	// theta; Hosts names it per treatment. Without either, a treatment
	// whose target runs a managed server on a lab host uses that host.
	Host  string            `yaml:"host"`
	Hosts map[string]string `yaml:"hosts"`
	// Equal lists groups of treatment names that were created equal (two
	// lab hosts of one type, say); verdict (b) compares them.
	Equal [][]string `yaml:"equal"`
	// Policies labels treatments with the reset policy their runs used, to
	// compare policies. Without it, when the treatments' reset settings
	// differ, each treatment's own reset is its label.
	Policies map[string]string `yaml:"policies"`
}

// resetPolicies are the labels policies: accepts: the reset settings.
var resetPolicies = []string{"none", "restart", "repopulate", "restore"}

// variabilityAnalysis checks analysis.variability. Whether the treatment
// names exist is checked by CheckVariabilityNames once the treatments are
// parsed.
func (c *checker) variabilityAnalysis(_ *Spec, v *VariabilityAnalysis) {
	const p = "analysis.variability"
	for _, f := range []struct {
		name string
		d    Duration
	}{{"repeat_se", v.RepeatSE}, {"cross_diff", v.CrossDiff}} {
		if f.d.Duration < 0 {
			c.fail(p+"."+f.name, "must not be negative, got %v; use a duration such as 5ms", f.d.Duration)
		}
	}
	if v.Thresholds != "" {
		c.oneOf(p+".thresholds", v.Thresholds, ThresholdsRelative, ThresholdsAbsolute)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"repeat_pct", v.RepeatPct}, {"cross_pct", v.CrossPct}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			c.fail(p+"."+f.name, "must be a percentage of tau, 0 or more, got %v; use e.g. 5", f.v)
		}
	}
	if !(v.Alpha >= 0 && v.Alpha < 0.5) {
		c.fail(p+".alpha", "must be a significance level between 0 and 0.5, got %v; use e.g. 0.05", v.Alpha)
	}
	switch v.Thresholds {
	case ThresholdsRelative:
		if v.RepeatSE.Duration != 0 || v.CrossDiff.Duration != 0 {
			c.fail(p+".thresholds", "is relative, but repeat_se or cross_diff (absolute thresholds) is set; use repeat_pct and cross_pct, or thresholds: absolute")
		}
	case ThresholdsAbsolute:
		if v.RepeatPct != 0 || v.CrossPct != 0 || v.Alpha != 0 {
			c.fail(p+".thresholds", "is absolute, but repeat_pct, cross_pct or alpha (relative thresholds) is set; use repeat_se and cross_diff, or thresholds: relative")
		}
	case "":
		if (v.RepeatSE.Duration != 0 || v.CrossDiff.Duration != 0) && (v.RepeatPct != 0 || v.CrossPct != 0 || v.Alpha != 0) {
			c.fail(p, "mixes absolute thresholds (repeat_se, cross_diff) with relative ones (repeat_pct, cross_pct, alpha); set thresholds: and keep the fields of one kind")
		}
	}
	if v.Trim != nil && v.Trim.Duration < 0 {
		c.fail(p+".trim", "must not be negative, got %v; use 30s (the default), or 0s for no trim", v.Trim.Duration)
	}
	for name, h := range v.Hosts {
		if h == "" {
			c.fail(p+".hosts."+name, "names no host; give the host whose CPU is theta for treatment %s", name)
		}
	}
	seen := map[string]int{}
	for i, g := range v.Equal {
		gp := fmt.Sprintf("%s.equal[%d]", p, i)
		if len(g) < 2 {
			c.fail(gp, "a group of equal instances needs at least two treatment names, like [inst-a, inst-b]")
		}
		for _, name := range g {
			if prev, dup := seen[name]; dup {
				c.fail(gp, "treatment %s is already in group %d; put each treatment in one group", name, prev)
				continue
			}
			seen[name] = i
		}
	}
	for name, pol := range v.Policies {
		c.oneOf(p+".policies."+name, pol, resetPolicies...)
	}
}

// Defaults of analysis.variability (seed-digest §2, seed 001 §II-G, §III).
const (
	DefaultRepeatSE  = 5 * time.Millisecond
	DefaultCrossDiff = 30 * time.Millisecond
	DefaultTrim      = 30 * time.Second
)

// How verdicts (a) and (b) are judged (analysis.variability.thresholds).
const (
	ThresholdsRelative = "relative"
	ThresholdsAbsolute = "absolute"
)

// ThresholdsMode is the judgement in force: the written thresholds:, else
// absolute when repeat_se or cross_diff is written (a spec that names
// seed 001's durations means them), else relative.
func (v VariabilityAnalysis) ThresholdsMode() string {
	switch {
	case v.Thresholds != "":
		return v.Thresholds
	case v.RepeatSE.Duration != 0 || v.CrossDiff.Duration != 0:
		return ThresholdsAbsolute
	}
	return ThresholdsRelative
}

// TrimOrDefault is the trim in force: the written value or 30 s.
func (v VariabilityAnalysis) TrimOrDefault() time.Duration {
	if v.Trim == nil {
		return DefaultTrim
	}
	return v.Trim.Duration
}

// PoliciesFor is the reset-policy label of every treatment: the policies:
// map when given, else each treatment's reset setting when the treatments
// do not all reset the same way, else nil (nothing to compare).
func (v VariabilityAnalysis) PoliciesFor(ts []Treatment) map[string]string {
	if len(v.Policies) > 0 {
		return v.Policies
	}
	out := map[string]string{}
	differ := false
	for _, t := range ts {
		out[t.Name] = t.Spec.Reset
		differ = differ || t.Spec.Reset != ts[0].Spec.Reset
	}
	if !differ {
		return nil
	}
	return out
}

// CheckVariabilityNames checks that every treatment name that
// analysis.variability mentions is one of the spec's treatments. It needs
// the parsed treatments, so Parse calls it after them.
func CheckVariabilityNames(file string, s *Spec) Errors {
	v := s.Analysis.Variability
	known := map[string]bool{}
	names := make([]string, 0, len(s.Treatments))
	for _, t := range s.Treatments {
		known[t.Name] = true
		names = append(names, t.Name)
	}
	var errs Errors
	bad := func(path, name string) {
		fix := "the spec has no treatments; add treatments: with these names, or remove the setting"
		if len(names) > 0 {
			fix = "use one of " + strings.Join(names, ", ")
		}
		errs = append(errs, &Error{File: file, Path: path, Msg: fmt.Sprintf("%q is not a treatment; %s", name, fix)})
	}
	for i, g := range v.Equal {
		for _, n := range g {
			if !known[n] {
				bad(fmt.Sprintf("analysis.variability.equal[%d]", i), n)
			}
		}
	}
	for _, m := range []struct {
		field string
		set   map[string]string
	}{{"hosts", v.Hosts}, {"policies", v.Policies}} {
		keys := make([]string, 0, len(m.set))
		for k := range m.set {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !known[k] {
				bad("analysis.variability."+m.field, k)
			}
		}
	}
	return errs
}
