package bottleneck

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
)

// Trial is one run of a workload sweep (003 ch.5 calls it a staging trial).
type Trial struct {
	Level      float64 // workload w: clients, or offered requests per second
	Repetition int     // pairs trials of neighbouring levels for the first differences
	// Satisfaction is S_w, the percentage (0..100) of requests that met the
	// response-time threshold.
	Satisfaction float64
	// Metrics are the run's metric values (typically means over the measured
	// window), keyed "host/resource metric", e.g. "app1/cpu util_pct".
	Metrics map[string]float64
}

// InterventionConfig holds the parameters of the intervention analysis
// (seed-digest §6; 003 §5.2). Zero fields take their defaults.
type InterventionConfig struct {
	// Floor is the SLO satisfaction, in percent, below which the lower
	// confidence bound ends the stable part of the sweep. Default 90.
	Floor float64
	// Z is the normal quantile of the confidence bound. Default 1.96.
	Z float64
	// UtilFilter drops a utilisation metric whose value never exceeds it
	// (percent). Default 90.
	UtilFilter float64
	// StrictRules applies rule A only to bounded metrics and rule B only to
	// unbounded ones. Off by default: 003 applied both rules to every metric
	// (its Table 8 lists memory sizes found by rule A).
	StrictRules bool
	// Bounded says whether a metric is a utilisation bounded by 100%.
	// Default BoundedMetric.
	Bounded func(metric string) bool
	// Resource maps a metric to the resource it describes, e.g.
	// "app1/cpu util_pct" -> "APP_CPU". Default MetricResource.
	Resource func(metric string) string
}

// Defaults of InterventionConfig (seed-digest §6).
const (
	DefaultFloor      = 90.0
	DefaultZ          = 1.96
	DefaultUtilFilter = 90.0
)

// Rule is the selection rule a metric matched (seed-digest §6; 003 eq.
// 14-15).
type Rule string

// Rules.
const (
	RuleNone Rule = ""
	// RuleA: the first difference flattens: q'(0.5) < q(0.5) and
	// |q(0.2) - q(0.8)| > |q'(0.1) - q'(0.9)|. Typical of a utilisation
	// reaching 100%; R is large.
	RuleA Rule = "A"
	// RuleB: the first difference jumps up: q(0.9) is below q'(0.1),
	// q'(0.5) and q'(0.9). Typical of a queue or wait time growing without
	// bound; R is small.
	RuleB Rule = "B"
)

// Step is one iteration of the intervention-point search (003 Table 7):
// the SLO satisfaction of every trial at levels up to Level.
type Step struct {
	Level          float64
	N              int     // trials with level <= Level
	Mean, SD       float64 // of their satisfaction, percent; SD is the sample standard deviation, 0 for N = 1
	Lower          float64 // Mean - Z * SD
	BelowThreshold bool    // Lower < Floor: this level is w*
}

// Quantiles are the quantiles of a metric's first differences that the
// rules use.
type Quantiles struct {
	Q10, Q20, Q50, Q80, Q90 float64
}

// MetricEffect is the intervention analysis of one metric.
type MetricEffect struct {
	Metric   string
	Resource string
	Bounded  bool
	Max      float64 // highest value over all trials
	// Dropped: a bounded (utilisation) metric that never exceeded
	// UtilFilter, left out of the ranking.
	Dropped bool
	// NI and NIPrime count the first differences in I (w < w*) and I'
	// (w >= w*); Q and QPrime are their quantiles, MeanI and MeanIPrime
	// their means.
	NI, NIPrime       int
	Q, QPrime         Quantiles
	MeanI, MeanIPrime float64
	// R = |MeanI / MeanIPrime|; +Inf when MeanIPrime is 0 and MeanI is not,
	// NaN when both are 0 or either interval has no difference.
	R    float64
	Rule Rule
}

// ResourceEffect is a resource's strongest candidate metric.
type ResourceEffect struct {
	Resource string
	R        float64
	Rule     Rule
	Metric   string   // the metric that gave R
	Metrics  []string // every candidate metric of the resource
}

// Intervention is the result of the intervention analysis of a sweep.
type Intervention struct {
	Config InterventionConfig // with defaults filled in (functions excepted)
	// Found: the satisfaction bound fell below Floor at some level; WStar is
	// that level (NaN when not found).
	Found  bool
	WStar  float64
	Steps  []Step
	Levels []float64 // every level, ascending
	// Metrics is every metric, by name; Ranked the candidates (a rule
	// matched, not dropped), strongest effect first: by |ln R|, so that a
	// rule-A R of 70 and a rule-B R of 1/70 weigh the same; R near 1 means
	// no effect.
	Metrics   []MetricEffect
	Ranked    []MetricEffect
	Resources []ResourceEffect // candidates by resource, strongest first
	Finding   string
}

// AnalyzeIntervention is the bottleneck detection by intervention analysis
// over a workload sweep (seed-digest §6; 003 §5.2):
//
//  1. Intervention point: from the lowest level upwards, take the SLO
//     satisfaction S of every trial at a level <= w; stop at the first w
//     where mean(S) - Z * sd(S) < Floor (sd the sample standard deviation).
//     That w is w*; I = {w < w*}, I' = {w >= w*}.
//  2. For each metric Y, first differences between neighbouring levels,
//     pairing trials by repetition and normalising by the step width:
//     dY = (Y(w_i) - Y(w_i-1)) / (w_i - w_i-1), in I when w_i < w*.
//  3. Type-7 quantiles of dY in I (q) and I' (q'); rule A or rule B
//     selects the candidates; utilisation metrics that never exceed
//     UtilFilter are dropped.
//  4. R = |mean(dY in I) / mean(dY in I')| ranks them; metrics map to
//     resources, each resource taking its strongest metric.
func AnalyzeIntervention(trials []Trial, cfg InterventionConfig) (Intervention, error) {
	if cfg.Floor == 0 {
		cfg.Floor = DefaultFloor
	}
	if cfg.Z == 0 {
		cfg.Z = DefaultZ
	}
	if cfg.UtilFilter == 0 {
		cfg.UtilFilter = DefaultUtilFilter
	}
	if cfg.Bounded == nil {
		cfg.Bounded = BoundedMetric
	}
	if cfg.Resource == nil {
		cfg.Resource = MetricResource
	}
	switch {
	case !(cfg.Floor > 0 && cfg.Floor <= 100):
		return Intervention{}, fmt.Errorf("bottleneck: SLO satisfaction floor %v is outside (0, 100]; give a percentage such as 90", cfg.Floor)
	case !(cfg.Z > 0) || math.IsInf(cfg.Z, 1):
		return Intervention{}, fmt.Errorf("bottleneck: z %v is not a positive number; give a normal quantile such as 1.96", cfg.Z)
	case math.IsNaN(cfg.UtilFilter):
		return Intervention{}, fmt.Errorf("bottleneck: the utilisation filter is NaN; give a percentage such as 90")
	}
	if len(trials) == 0 {
		return Intervention{}, fmt.Errorf("bottleneck: the intervention analysis needs trials; run a workload sweep first")
	}
	type levelRep struct {
		level float64
		rep   int
	}
	byLR := map[levelRep]Trial{}
	levelSet := map[float64]bool{}
	for _, t := range trials {
		if math.IsNaN(t.Level) || math.IsInf(t.Level, 0) {
			return Intervention{}, fmt.Errorf("bottleneck: a trial has level %v; every trial needs a finite workload level", t.Level)
		}
		if !(t.Satisfaction >= 0 && t.Satisfaction <= 100) {
			return Intervention{}, fmt.Errorf("bottleneck: the trial at level %v repetition %d has SLO satisfaction %v; give the percentage of requests within the threshold (0-100)", t.Level, t.Repetition, t.Satisfaction)
		}
		k := levelRep{t.Level, t.Repetition}
		if _, dup := byLR[k]; dup {
			return Intervention{}, fmt.Errorf("bottleneck: two trials at level %v have repetition %d; number the repetitions of a level differently", t.Level, t.Repetition)
		}
		byLR[k] = t
		levelSet[t.Level] = true
	}
	out := Intervention{Config: cfg, WStar: math.NaN()}
	for l := range levelSet {
		out.Levels = append(out.Levels, l)
	}
	sort.Float64s(out.Levels)
	if len(out.Levels) < 2 {
		return Intervention{}, fmt.Errorf("bottleneck: all trials are at level %v; the intervention analysis needs a sweep over several levels", out.Levels[0])
	}
	repsAt := map[float64][]int{}
	for k := range byLR {
		repsAt[k.level] = append(repsAt[k.level], k.rep)
	}
	for _, reps := range repsAt {
		sort.Ints(reps)
	}

	// 1. Intervention point (seed-digest §6; 003 eq. 10).
	var seen []float64
	for _, l := range out.Levels {
		for _, r := range repsAt[l] {
			seen = append(seen, byLR[levelRep{l, r}].Satisfaction)
		}
		st := Step{Level: l, N: len(seen), Mean: stats.Mean(seen), SD: 0}
		if len(seen) > 1 {
			st.SD = stats.StdDev(seen)
		}
		st.Lower = st.Mean - cfg.Z*st.SD
		st.BelowThreshold = st.Lower < cfg.Floor
		out.Steps = append(out.Steps, st)
		if st.BelowThreshold {
			out.Found, out.WStar = true, l
			break
		}
	}

	// 2-4. Metrics.
	names := map[string]bool{}
	for _, t := range trials {
		for m := range t.Metrics {
			names[m] = true
		}
	}
	metrics := make([]string, 0, len(names))
	for m := range names {
		metrics = append(metrics, m)
	}
	sort.Strings(metrics)
	for _, m := range metrics {
		e := MetricEffect{Metric: m, Resource: cfg.Resource(m), Bounded: cfg.Bounded(m), Max: math.Inf(-1), R: math.NaN()}
		for _, t := range trials {
			if v, ok := t.Metrics[m]; ok && !math.IsNaN(v) {
				e.Max = math.Max(e.Max, v)
			}
		}
		var dI, dIp []float64
		for i := 1; i < len(out.Levels); i++ {
			lo, hi := out.Levels[i-1], out.Levels[i]
			for _, r := range repsAt[hi] {
				a, okA := byLR[levelRep{lo, r}].Metrics[m]
				b, okB := byLR[levelRep{hi, r}].Metrics[m]
				if !okA || !okB || math.IsNaN(a) || math.IsNaN(b) {
					continue
				}
				d := (b - a) / (hi - lo)
				if out.Found && hi >= out.WStar {
					dIp = append(dIp, d)
				} else {
					dI = append(dI, d)
				}
			}
		}
		e.NI, e.NIPrime = len(dI), len(dIp)
		e.Q, e.QPrime = quantiles(dI), quantiles(dIp)
		e.MeanI, e.MeanIPrime = stats.Mean(dI), stats.Mean(dIp)
		// seed-digest §6: drop utilisation metrics that never exceed 90%.
		e.Dropped = e.Bounded && !(e.Max > cfg.UtilFilter)
		if e.NI > 0 && e.NIPrime > 0 {
			e.R = ratio(e.MeanI, e.MeanIPrime)
			e.Rule = rule(e.Q, e.QPrime)
			if cfg.StrictRules && ((e.Rule == RuleA) != e.Bounded) {
				e.Rule = RuleNone
			}
		}
		out.Metrics = append(out.Metrics, e)
		if e.Rule != RuleNone && !e.Dropped {
			out.Ranked = append(out.Ranked, e)
		}
	}
	sort.SliceStable(out.Ranked, func(a, b int) bool {
		return strength(out.Ranked[a].R) > strength(out.Ranked[b].R)
	})
	byRes := map[string]int{}
	for _, e := range out.Ranked {
		if i, ok := byRes[e.Resource]; ok {
			out.Resources[i].Metrics = append(out.Resources[i].Metrics, e.Metric)
			continue
		}
		byRes[e.Resource] = len(out.Resources)
		out.Resources = append(out.Resources, ResourceEffect{Resource: e.Resource, R: e.R, Rule: e.Rule, Metric: e.Metric, Metrics: []string{e.Metric}})
	}
	out.Finding = interventionFinding(out)
	return out, nil
}

// rule applies the selection rules of seed-digest §6 (003 eq. 14-15) to the
// quantiles q of dY in I and q' of dY in I'. The two cannot both hold: A
// needs q'(0.5) < q(0.5) <= q(0.9), B needs q(0.9) < q'(0.5).
func rule(q, qp Quantiles) Rule {
	if qp.Q50 < q.Q50 && math.Abs(q.Q20-q.Q80) > math.Abs(qp.Q10-qp.Q90) {
		return RuleA
	}
	if q.Q90 < qp.Q10 && q.Q90 < qp.Q50 && q.Q90 < qp.Q90 {
		return RuleB
	}
	return RuleNone
}

// ratio is R = |a / b| (seed-digest §6; 003 eq. 16): +Inf when only b is
// 0, NaN when both are.
func ratio(a, b float64) float64 {
	if b == 0 {
		if a == 0 {
			return math.NaN()
		}
		return math.Inf(1)
	}
	return math.Abs(a / b)
}

// strength orders effects: |ln R|, so R and 1/R rank alike; NaN last.
func strength(r float64) float64 {
	if math.IsNaN(r) {
		return math.Inf(-1)
	}
	return math.Abs(math.Log(r))
}

func quantiles(xs []float64) Quantiles {
	return Quantiles{quantile(xs, 0.1), quantile(xs, 0.2), quantile(xs, 0.5), quantile(xs, 0.8), quantile(xs, 0.9)}
}

// splitMetric splits "host/resource metric" at its last space.
func splitMetric(key string) (resource, metric string) {
	i := strings.LastIndexByte(key, ' ')
	if i < 0 {
		return key, ""
	}
	return key[:i], key[i+1:]
}

// BoundedMetric is the default test of a utilisation bounded by 100%: a
// metric named "..._pct", except a process's or cgroup's cpu_pct, which is
// in percent of one core and exceeds 100 on several.
func BoundedMetric(key string) bool {
	_, m := splitMetric(key)
	return strings.HasSuffix(m, "_pct") && m != "cpu_pct"
}

// MetricResource is the default metric-to-resource mapping: the host's
// tier (its name without trailing digits, upper case) and the kind of
// resource, e.g. "app1/cpu util_pct" -> "APP_CPU", "db2/disk:vda
// await_ms" -> "DB_DISK", "db1/memory cached_bytes" -> "DB_MEMORY",
// "db1/cgroup:/lab/db1 throttled_pct" -> "DB_CPU". A key without a host
// maps to itself in upper case.
func MetricResource(key string) string {
	res, metric := splitMetric(key)
	host, res, ok := strings.Cut(res, "/")
	if !ok {
		return upperIdent(key)
	}
	tier := strings.TrimRight(host, "0123456789-_.")
	if tier == "" {
		tier = host
	}
	return upperIdent(tier) + "_" + resourceKind(res, metric)
}

func resourceKind(res, metric string) string {
	switch {
	case strings.HasSuffix(res, SuffixCores):
		return "CPU"
	case strings.HasSuffix(res, SuffixIOPS), strings.HasSuffix(res, SuffixBandwidth):
		return "IO"
	case strings.HasPrefix(res, "cpu"):
		return "CPU"
	case res == "memory":
		return "MEMORY"
	case strings.HasPrefix(res, "disk:"):
		return "DISK"
	case strings.HasPrefix(res, "volume:"):
		return "VOLUME"
	case strings.HasPrefix(res, "net:"):
		return "NET"
	case strings.HasPrefix(res, "cgroup:"), strings.HasPrefix(res, "proc:"):
		switch {
		case strings.HasPrefix(metric, "cpu_") || strings.HasPrefix(metric, "throttled_"):
			return "CPU"
		case strings.HasSuffix(metric, "memory_bytes") || metric == "rss_bytes":
			return "MEMORY"
		case strings.HasSuffix(metric, "_per_s"):
			return "IO"
		}
	}
	kind, _, _ := strings.Cut(res, ":")
	return upperIdent(kind)
}

// upperIdent upper-cases s and turns every other character than a letter
// or digit into '_'.
func upperIdent(s string) string {
	b := []byte(strings.ToUpper(s))
	for i, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

func interventionFinding(in Intervention) string {
	last := in.Steps[len(in.Steps)-1]
	floor := num(in.Config.Floor)
	switch {
	case !in.Found:
		return fmt.Sprintf("no intervention point: the lower bound of SLO satisfaction stayed at or above %s%% up to the highest level w = %s (%.1f%%); extend the sweep to higher load to reach the bottleneck",
			floor, num(last.Level), last.Lower)
	case in.WStar == in.Levels[0]:
		return fmt.Sprintf("SLO satisfaction is below %s%% already at the lowest level w = %s (lower bound %.1f%%), so the sweep has no stable part; start it at lower load",
			floor, num(in.WStar), last.Lower)
	}
	head := fmt.Sprintf("intervention point w* = %s (lower bound of SLO satisfaction %.1f%% < %s%%)", num(in.WStar), last.Lower, floor)
	if len(in.Resources) == 0 {
		return head + "; no metric changes its trend there (no rule matched), so the bottleneck is not among the monitored metrics"
	}
	top := in.Resources[0]
	out := fmt.Sprintf("%s; most likely bottleneck: %s (R = %s from %s, rule %s: %s)", head, top.Resource, rText(top.R), top.Metric, top.Rule, ruleText(top.Rule))
	var next []string
	for _, r := range in.Resources[1:min(len(in.Resources), 3)] {
		next = append(next, fmt.Sprintf("%s (R = %s)", r.Resource, rText(r.R)))
	}
	if len(next) > 0 {
		out += "; next: " + strings.Join(next, ", ")
	}
	return out
}

func ruleText(r Rule) string {
	if r == RuleA {
		return "its growth flattens"
	}
	return "its growth jumps"
}

func rText(r float64) string {
	if math.IsInf(r, 1) {
		return "∞"
	}
	return fmt.Sprintf("%.2f", r)
}
