package compare

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/results"
)

// Figure is one number a run gives that compare judges.
type Figure struct {
	Name           string
	Unit           string // "ok/s" or "µs"
	HigherIsBetter bool
	Quantile       float64 // the latency percentile; 0 for throughput and the mean
	// OnlyAll: the figure exists for all operations together only.
	OnlyAll bool
}

// Figures are those compare judges, in the order it prints them.
var Figures = []Figure{
	{Name: "throughput", Unit: "ok/s", HigherIsBetter: true, OnlyAll: true},
	{Name: "mean", Unit: "µs"},
	{Name: "p50", Unit: "µs", Quantile: 50},
	{Name: "p90", Unit: "µs", Quantile: 90},
	{Name: "p95", Unit: "µs", Quantile: 95},
	{Name: "p99", Unit: "µs", Quantile: 99},
	{Name: "p99.9", Unit: "µs", Quantile: 99.9},
}

// FigureNamed finds a figure by name.
func FigureNamed(name string) (Figure, bool) {
	for _, f := range Figures {
		if f.Name == name {
			return f, true
		}
	}
	return Figure{}, false
}

// FigureNames lists the figures' names.
func FigureNames() []string {
	out := make([]string, len(Figures))
	for i, f := range Figures {
		out[i] = f.Name
	}
	return out
}

// Cell is one figure of one operation at one level of one pair of
// treatments, with each side's per-run values and the judgement.
type Cell struct {
	Treatment  string // A's treatment ("" for a campaign without treatments)
	TreatmentB string // B's, when it differs from A's
	LevelIndex int
	LevelA     float64 // offered rate (open) or clients (closed)
	LevelB     float64
	Op         string // "all" or one operation type
	Figure     Figure
	A, B       []float64
	Result     Result
}

// Comparison is everything compare found.
type Comparison struct {
	NameA, NameB string  // the campaigns' names
	Model        string  // "open" or "closed": what a level counts
	Confidence   float64 // the level of the intervals and tests
	// Accepted are differences between what A and B measured that the
	// user accepted (Options.Accept); a comparison with others is refused.
	Accepted []string
	Cells    []Cell
	// OneSided names the treatments and levels only one side measured.
	OneSided []string
}

// Options choose what is compared.
type Options struct {
	Confidence float64 // default 0.95
	// TreatmentA and TreatmentB compare one treatment of A with one of B
	// (the two may be one store); empty: every treatment both have, by
	// name.
	TreatmentA, TreatmentB string
	Pair                   bool
	// Accept lists the kinds of difference compare may accept: target,
	// workload, model, levels.
	Accept []string
}

// AcceptKinds are the values of Options.Accept.
var AcceptKinds = []string{"target", "workload", "model", "levels"}

// FromResults compares campaign b against the baseline a. It refuses, in
// one sentence, campaigns that differ in what they measured (the target's
// type, the workload, the load model, the levels of a treatment) unless
// the difference is accepted.
func FromResults(a, b *results.Results, opt Options) (Comparison, error) {
	if opt.Confidence == 0 {
		opt.Confidence = 0.95
	}
	if !(opt.Confidence > 0 && opt.Confidence < 1) {
		return Comparison{}, fmt.Errorf("--confidence %g: give a level between 0 and 1, e.g. 0.95", opt.Confidence)
	}
	for _, k := range opt.Accept {
		if !slices.Contains(AcceptKinds, k) {
			return Comparison{}, fmt.Errorf("--accept %q: the differences compare can accept are %s", k, strings.Join(AcceptKinds, ", "))
		}
	}
	c := Comparison{NameA: a.Campaign().Name, NameB: b.Campaign().Name, Confidence: opt.Confidence, Model: "open"}
	pairs, oneSided, err := treatmentPairs(a, b, opt)
	if err != nil {
		return c, err
	}
	c.OneSided = oneSided
	var refused []string
	for _, p := range pairs {
		for _, d := range differences(p.a, p.b) {
			text := d.text
			if len(pairs) > 1 || p.a.Name != "" {
				text = fmt.Sprintf("%s (treatment %s)", d.text, label(p.a.Name))
			}
			if slices.Contains(opt.Accept, d.kind) {
				c.Accepted = append(c.Accepted, text)
			} else {
				refused = append(refused, text)
				refused = slices.Compact(refused)
			}
		}
	}
	if len(refused) > 0 {
		return c, fmt.Errorf("the campaigns differ in what they measured (A's vs B's): %s; compare them anyway with --accept %s", strings.Join(refused, "; "), strings.Join(kindsOf(pairs, opt.Accept), ","))
	}
	for _, p := range pairs {
		if p.a.Load.Model != "" {
			c.Model = p.a.Load.Model
		}
		cells, one, err := pairCells(a, b, p, opt.Confidence)
		if err != nil {
			return c, err
		}
		c.Cells = append(c.Cells, cells...)
		c.OneSided = append(c.OneSided, one...)
	}
	return c, nil
}

type pair struct{ a, b results.Treatment }

func label(name string) string {
	if name == "" {
		return "(the campaign's one)"
	}
	return name
}

func treatmentPairs(a, b *results.Results, opt Options) ([]pair, []string, error) {
	if opt.Pair {
		ta, ok := a.Treatment(opt.TreatmentA)
		if !ok {
			return nil, nil, fmt.Errorf("campaign A has no treatment %q; its treatments are %s", opt.TreatmentA, names(a))
		}
		tb, ok := b.Treatment(opt.TreatmentB)
		if !ok {
			return nil, nil, fmt.Errorf("campaign B has no treatment %q; its treatments are %s", opt.TreatmentB, names(b))
		}
		return []pair{{ta, tb}}, nil, nil
	}
	var out []pair
	var oneSided []string
	for _, ta := range a.Treatments() {
		if tb, ok := b.Treatment(ta.Name); ok {
			out = append(out, pair{ta, tb})
		} else {
			oneSided = append(oneSided, fmt.Sprintf("treatment %s is in A only", label(ta.Name)))
		}
	}
	for _, tb := range b.Treatments() {
		if _, ok := a.Treatment(tb.Name); !ok {
			oneSided = append(oneSided, fmt.Sprintf("treatment %s is in B only", label(tb.Name)))
		}
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("campaigns A (treatments %s) and B (treatments %s) have no treatment in common; name one of each with --treatments A_NAME,B_NAME", names(a), names(b))
	}
	return out, oneSided, nil
}

func names(r *results.Results) string {
	var out []string
	for _, t := range r.Treatments() {
		out = append(out, label(t.Name))
	}
	return strings.Join(out, ", ")
}

type difference struct{ kind, text string }

// differences lists what the two treatments measured differently: the
// target's type, the workload, the load model and the levels (those of a
// relative campaign are fractions of a rate each side probed, so their
// rates may differ).
func differences(a, b results.Treatment) []difference {
	var out []difference
	if a.Target.Type != b.Target.Type {
		out = append(out, difference{"target", fmt.Sprintf("target %s vs %s", a.Target.Type, b.Target.Type)})
	}
	if wa, wb := workloadText(a.Workload), workloadText(b.Workload); wa != wb {
		out = append(out, difference{"workload", fmt.Sprintf("workload %s vs %s", wa, wb)})
	}
	if a.Load.Model != b.Load.Model {
		out = append(out, difference{"model", fmt.Sprintf("load model %s vs %s", a.Load.Model, b.Load.Model)})
	}
	if a.Load.Relative == nil || b.Load.Relative == nil {
		if !slices.Equal(a.Load.Levels, b.Load.Levels) {
			out = append(out, difference{"levels", fmt.Sprintf("levels %s vs %s", levelsText(a.Load.Levels), levelsText(b.Load.Levels))})
		}
	} else if !slices.Equal(a.Load.Relative.Fractions, b.Load.Relative.Fractions) {
		out = append(out, difference{"levels", fmt.Sprintf("level fractions %s vs %s", levelsText(a.Load.Relative.Fractions), levelsText(b.Load.Relative.Fractions))})
	}
	return out
}

func kindsOf(pairs []pair, accepted []string) []string {
	var out []string
	for _, p := range pairs {
		for _, d := range differences(p.a, p.b) {
			if !slices.Contains(out, d.kind) {
				out = append(out, d.kind)
			}
		}
	}
	for _, k := range accepted {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func workloadText(w results.Workload) string {
	var b strings.Builder
	switch {
	case w.YCSB != "":
		fmt.Fprintf(&b, "YCSB %s", w.YCSB)
	case len(w.Statements) > 0:
		fmt.Fprintf(&b, "statements %s", strings.Join(w.Statements, ","))
	default:
		b.WriteString(w.Kind)
	}
	ops := make([]string, 0, len(w.Mix))
	for op := range w.Mix {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		fmt.Fprintf(&b, " %s=%g", op, w.Mix[op])
	}
	fmt.Fprintf(&b, " (%d records of %d x %d B, %s)", w.RecordCount, w.FieldCount, w.FieldLength, w.Distribution)
	return b.String()
}

func levelsText(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%g", x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// pairCells judges every figure of every operation both sides measured at
// every level index both have.
func pairCells(a, b *results.Results, p pair, confidence float64) ([]Cell, []string, error) {
	ina, _, err := levels.FromResults(a, p.a.Name)
	if err != nil {
		return nil, nil, err
	}
	inb, _, err := levels.FromResults(b, p.b.Name)
	if err != nil {
		return nil, nil, err
	}
	byA, byB := byLevel(ina.Runs), byLevel(inb.Runs)
	var idx []int
	var oneSided []string
	for i := range byA {
		if _, ok := byB[i]; ok {
			idx = append(idx, i)
		} else {
			oneSided = append(oneSided, fmt.Sprintf("level %d of treatment %s has completed runs in A only", i+1, label(p.a.Name)))
		}
	}
	for i := range byB {
		if _, ok := byA[i]; !ok {
			oneSided = append(oneSided, fmt.Sprintf("level %d of treatment %s has completed runs in B only", i+1, label(p.b.Name)))
		}
	}
	sort.Ints(idx)
	sort.Strings(oneSided)
	var out []Cell
	for _, i := range idx {
		ra, rb := byA[i], byB[i]
		for _, op := range commonOps(ra, rb) {
			for _, f := range Figures {
				if f.OnlyAll && op != "all" {
					continue
				}
				c := Cell{Treatment: p.a.Name, LevelIndex: i, LevelA: ra[0].Run.Level, LevelB: rb[0].Run.Level, Op: op, Figure: f,
					A: values(ra, op, f), B: values(rb, op, f)}
				if p.b.Name != p.a.Name {
					c.TreatmentB = p.b.Name
				}
				c.Result = Judge(c.A, c.B, f.HigherIsBetter, confidence)
				out = append(out, c)
			}
		}
	}
	return out, oneSided, nil
}

func byLevel(runs []levels.RunData) map[int][]levels.RunData {
	out := map[int][]levels.RunData{}
	for _, rd := range runs {
		out[rd.Run.LevelIndex] = append(out[rd.Run.LevelIndex], rd)
	}
	return out
}

// commonOps are the operation types both sides' runs measured: "all"
// first, then the others by name.
func commonOps(a, b []levels.RunData) []string {
	in := func(runs []levels.RunData) map[string]bool {
		m := map[string]bool{}
		for _, rd := range runs {
			for op := range rd.Latencies {
				m[op] = true
			}
		}
		return m
	}
	ma, mb := in(a), in(b)
	var ops []string
	for op := range ma {
		if mb[op] && op != "all" {
			ops = append(ops, op)
		}
	}
	sort.Strings(ops)
	return append([]string{"all"}, ops...)
}

// values is each run's figure: its throughput over the measured phase
// (ok/s), or its latency statistic over the measured phase (µs); NaN for a
// run without a successful request of op.
func values(runs []levels.RunData, op string, f Figure) []float64 {
	out := make([]float64, len(runs))
	for i, rd := range runs {
		if f.Name == "throughput" {
			out[i] = rd.Run.Summary.Throughput
			continue
		}
		l := rd.Latencies[op]
		switch {
		case l == nil || l.TotalCount() == 0:
			out[i] = math.NaN()
		case f.Quantile == 0:
			out[i] = l.Mean()
		default:
			out[i] = float64(l.ValueAtQuantile(f.Quantile))
		}
	}
	return out
}
