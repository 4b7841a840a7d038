package bottleneck

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Class is the kind of a bottleneck (seed-digest §6; 003 §6.2, Figure 27).
type Class string

// Bottleneck classes.
const (
	// ClassSingle: exactly one bottleneck resource in the run.
	ClassSingle Class = "single"
	// ClassConcurrent: a partially saturated, independent bottleneck
	// resource, with more than one bottleneck resource in the run.
	ClassConcurrent Class = "concurrent"
	// ClassSimultaneous: a fully saturated, independent bottleneck resource,
	// with more than one bottleneck resource in the run.
	ClassSimultaneous Class = "simultaneous"
	// ClassOscillatory: a maximal set of more than one partially saturated,
	// mutually dependent bottleneck resources; they saturate in turn.
	ClassOscillatory Class = "oscillatory"
	// ClassOther: the combination 003 never observed (Figure 27's fourth
	// quadrant): a fully saturated resource that is dependent on another
	// bottleneck resource, or a partially saturated one whose only dependent
	// partners are fully saturated. It arises when the partner saturates in
	// at most epsilon of the intervals.
	ClassOther Class = "other"
)

// Saturation is a resource's saturation level by its frequency f_R.
type Saturation string

// Saturation levels (seed-digest §6).
const (
	SaturationFull    Saturation = "full"    // f_R >= Full
	SaturationPartial Saturation = "partial" // Partial < f_R < Full
	SaturationNone    Saturation = "none"    // f_R <= Partial: not a bottleneck resource
)

// ResourceStat is one resource over the run.
type ResourceStat struct {
	Resource   string
	Intervals  int     // observed intervals of length lambda
	Saturated  int     // of which critically saturated (utilisation > Alpha)
	F          float64 // saturation frequency f_R = Saturated / Intervals
	Mean, Max  float64 // utilisation over the observed intervals, percent
	Saturation Saturation
	Class      Class // "" when not a bottleneck resource
}

// Pair is the co-saturation of two bottleneck resources.
type Pair struct {
	A, B      string
	Intervals int     // intervals in which both were observed
	Both      int     // of which both were critically saturated
	Joint     float64 // P(B_A = 1 and B_B = 1) = Both / Intervals; NaN when Intervals = 0
	// Independent is f_R(A) * f_R(B), the joint frequency two independent
	// resources would show. A Joint far below it is evidence of
	// dependence; when both frequencies are small, Joint <= Epsilon holds
	// whatever the relation, and Dependent is weak evidence.
	Independent float64
	Dependent   bool // Joint <= Epsilon
}

// Bottleneck is one bottleneck: a single resource, or an oscillatory set.
type Bottleneck struct {
	Class     Class
	Resources []string
	// F is the bottleneck saturation frequency f_B: the share of intervals
	// (in which every member was observed) with at least one member
	// critically saturated; NaN when no interval observed every member
	// (such a bottleneck sorts last and is never primary).
	F         float64
	Intervals int
	Primary   bool // highest f_B of the run (ties are all primary)
}

// State is one combination of saturated bottleneck resources and how often
// it occurred (003 Figures 30, 32, 35b).
type State struct {
	Saturated []string // the bottleneck resources saturated together; empty: none
	Intervals int
	Freq      float64 // Intervals / intervals in which every bottleneck resource was observed
}

// Result is the multi-bottleneck classification of one run.
type Result struct {
	Config      Config // with defaults filled in
	Window      Window
	Intervals   int            // intervals of length lambda in the window
	Resources   []ResourceStat // every observed resource, by name
	Pairs       []Pair         // every pair of bottleneck resources
	Bottlenecks []Bottleneck   // by f_B, highest first
	States      []State        // by number of saturated resources, then names
	Notes       []string       // resources left out and why
	Finding     string         // plain-language verdict, primary bottleneck first
}

// Primary returns the primary bottlenecks (highest f_B).
func (r Result) Primary() []Bottleneck {
	var out []Bottleneck
	for _, b := range r.Bottlenecks {
		if b.Primary {
			out = append(out, b)
		}
	}
	return out
}

// Classify is the multi-bottleneck classification of one run at one
// workload (seed-digest §6; 003 §6.2). The series are aggregated to
// intervals of cfg.Lambda over the window (a zero window: the span of the
// data). In each interval a resource is critically saturated when its
// utilisation exceeds cfg.Alpha; its saturation frequency is
// f_R = saturated / observed intervals. Resources with f_R >= Full are fully,
// those with Partial < f_R < Full partially saturated: the bottleneck
// resources. Two bottleneck resources are dependent when they are
// saturated together in at most Epsilon of the intervals both were observed.
// The classes follow (see Class), each bottleneck gets its saturation
// frequency f_B, and the highest f_B is the primary bottleneck.
func Classify(series []Series, w Window, cfg Config) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	seen := map[string]bool{}
	for _, s := range series {
		if s.Resource == "" {
			return Result{}, fmt.Errorf("bottleneck: a series has no resource name; name it host/resource, e.g. db1/cpu")
		}
		if seen[s.Resource] {
			return Result{}, fmt.Errorf("bottleneck: resource %s is given twice; merge its points into one series", s.Resource)
		}
		seen[s.Resource] = true
	}
	if w.From.IsZero() && w.To.IsZero() {
		if w = span(series); w.From.IsZero() {
			// No points at all: nothing to judge, which is a finding, not
			// an error.
			res := Result{Config: cfg}
			res.Finding = finding(res)
			return res, nil
		}
	}
	g, err := resample(series, w, cfg.Lambda)
	if err != nil {
		return Result{}, err
	}
	res := Result{Config: cfg, Window: w, Intervals: g.intervals()}

	// Saturation state per resource and interval: 1 saturated, 0 not,
	// -1 not observed.
	order := make([]int, len(g.resources))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return g.resources[order[a]] < g.resources[order[b]] })
	var states [][]int8
	for _, r := range order {
		st := ResourceStat{Resource: g.resources[r], Max: math.Inf(-1)}
		bits := make([]int8, g.intervals())
		var sum float64
		for c, u := range g.util[r] {
			if math.IsNaN(u) {
				bits[c] = -1
				continue
			}
			st.Intervals++
			sum += u
			st.Max = math.Max(st.Max, u)
			// seed-digest §6: critically saturated iff utilisation > alpha.
			if u > cfg.Alpha+alphaTolerance {
				bits[c] = 1
				st.Saturated++
			}
		}
		if st.Intervals == 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: no interval of %v was covered by its samples, so it is left out", st.Resource, cfg.Lambda))
			continue
		}
		st.Mean = sum / float64(st.Intervals)
		// seed-digest §6: f_R = saturated intervals / all intervals.
		st.F = float64(st.Saturated) / float64(st.Intervals)
		switch {
		case st.F >= cfg.Full:
			st.Saturation = SaturationFull
		case st.F > cfg.Partial:
			st.Saturation = SaturationPartial
		default:
			st.Saturation = SaturationNone
		}
		res.Resources = append(res.Resources, st)
		states = append(states, bits)
	}

	// Bottleneck resources and their pairwise dependence.
	var bn []int // indices into res.Resources
	for i, st := range res.Resources {
		if st.Saturation != SaturationNone {
			bn = append(bn, i)
		}
	}
	dependent := make(map[[2]int]bool)
	for a := 0; a < len(bn); a++ {
		for b := a + 1; b < len(bn); b++ {
			i, j := bn[a], bn[b]
			p := Pair{A: res.Resources[i].Resource, B: res.Resources[j].Resource,
				Independent: res.Resources[i].F * res.Resources[j].F}
			for c := range states[i] {
				if states[i][c] >= 0 && states[j][c] >= 0 {
					p.Intervals++
					if states[i][c] == 1 && states[j][c] == 1 {
						p.Both++
					}
				}
			}
			p.Joint = math.NaN()
			if p.Intervals > 0 {
				p.Joint = float64(p.Both) / float64(p.Intervals)
			}
			// seed-digest §6: dependent iff P(B_j = 1 and B_k = 1) <= epsilon.
			// A pair never observed together has no evidence either way
			// and counts as independent.
			p.Dependent = p.Joint <= cfg.Epsilon
			dependent[[2]int{i, j}], dependent[[2]int{j, i}] = p.Dependent, p.Dependent
			res.Pairs = append(res.Pairs, p)
		}
	}

	// Classes.
	switch len(bn) {
	case 0:
	case 1:
		i := bn[0]
		res.Resources[i].Class = ClassSingle
		res.Bottlenecks = append(res.Bottlenecks, Bottleneck{Class: ClassSingle, Resources: []string{res.Resources[i].Resource}, F: res.Resources[i].F, Intervals: res.Resources[i].Intervals})
	default:
		var partial []int
		for _, i := range bn {
			if res.Resources[i].Saturation == SaturationPartial {
				partial = append(partial, i)
			}
		}
		for _, set := range maximalCliques(partial, func(i, j int) bool { return dependent[[2]int{i, j}] }) {
			if len(set) < 2 {
				continue
			}
			b := Bottleneck{Class: ClassOscillatory}
			for _, i := range set {
				res.Resources[i].Class = ClassOscillatory
				b.Resources = append(b.Resources, res.Resources[i].Resource)
			}
			b.F, b.Intervals = unionFrequency(states, set)
			res.Bottlenecks = append(res.Bottlenecks, b)
		}
		for _, i := range bn {
			st := &res.Resources[i]
			if st.Class != "" {
				continue
			}
			hasDependent := false
			for _, j := range bn {
				if j != i && dependent[[2]int{i, j}] {
					hasDependent = true
				}
			}
			switch {
			case hasDependent:
				st.Class = ClassOther
			case st.Saturation == SaturationFull:
				st.Class = ClassSimultaneous
			default:
				st.Class = ClassConcurrent
			}
			res.Bottlenecks = append(res.Bottlenecks, Bottleneck{Class: st.Class, Resources: []string{st.Resource}, F: st.F, Intervals: st.Intervals})
		}
	}
	// An undefined f_B (an oscillatory set never observed all together)
	// sorts last: NaN would make the order inconsistent.
	sort.SliceStable(res.Bottlenecks, func(a, b int) bool {
		x, y := res.Bottlenecks[a], res.Bottlenecks[b]
		if nx, ny := math.IsNaN(x.F), math.IsNaN(y.F); nx != ny {
			return ny
		}
		if x.F != y.F && !math.IsNaN(x.F) {
			return x.F > y.F
		}
		return strings.Join(x.Resources, ",") < strings.Join(y.Resources, ",")
	})
	// seed-digest §6: the primary bottleneck has the highest f_B; one with
	// an undefined f_B is never primary.
	for i := range res.Bottlenecks {
		res.Bottlenecks[i].Primary = res.Bottlenecks[0].F-res.Bottlenecks[i].F <= 1e-12
	}

	res.States = stateFrequencies(res.Resources, states, bn)
	res.Finding = finding(res)
	return res, nil
}

// unionFrequency is f_B of a set (seed-digest §6): the share of intervals,
// among those in which every member was observed, with at least one member
// saturated. NaN when no interval observed them all.
func unionFrequency(states [][]int8, set []int) (float64, int) {
	n, hit := 0, 0
	for c := range states[set[0]] {
		observed, any := true, false
		for _, i := range set {
			switch states[i][c] {
			case -1:
				observed = false
			case 1:
				any = true
			}
		}
		if observed {
			n++
			if any {
				hit++
			}
		}
	}
	if n == 0 {
		return math.NaN(), 0
	}
	return float64(hit) / float64(n), n
}

// stateFrequencies counts each combination of saturated bottleneck
// resources over the intervals in which all of them were observed.
func stateFrequencies(rs []ResourceStat, states [][]int8, bn []int) []State {
	if len(bn) == 0 {
		return nil
	}
	counts := map[string]int{}
	members := map[string][]string{}
	total := 0
	for c := range states[bn[0]] {
		observed := true
		var key strings.Builder
		var sat []string
		for _, i := range bn {
			switch states[i][c] {
			case -1:
				observed = false
			case 1:
				key.WriteString(rs[i].Resource)
				key.WriteByte(0)
				sat = append(sat, rs[i].Resource)
			}
		}
		if !observed {
			continue
		}
		total++
		k := key.String()
		counts[k]++
		if _, ok := members[k]; !ok {
			members[k] = sat
		}
	}
	out := make([]State, 0, len(counts))
	for k, n := range counts {
		out = append(out, State{Saturated: members[k], Intervals: n, Freq: float64(n) / float64(total)})
	}
	sort.Slice(out, func(a, b int) bool {
		x, y := out[a].Saturated, out[b].Saturated
		if len(x) != len(y) {
			return len(x) < len(y)
		}
		return strings.Join(x, "\x00") < strings.Join(y, "\x00")
	})
	return out
}

// maximalCliques returns the maximal sets of mutually adjacent nodes
// (Bron–Kerbosch with pivoting), each sorted, in a stable order.
func maximalCliques(nodes []int, adjacent func(i, j int) bool) [][]int {
	var out [][]int
	var expand func(r, p, x []int)
	expand = func(r, p, x []int) {
		if len(p) == 0 && len(x) == 0 {
			c := append([]int(nil), r...)
			sort.Ints(c)
			out = append(out, c)
			return
		}
		// Pivot: the node of p ∪ x with most neighbours in p.
		pivot, best := -1, -1
		for _, u := range append(append([]int(nil), p...), x...) {
			n := 0
			for _, v := range p {
				if v != u && adjacent(u, v) {
					n++
				}
			}
			if n > best {
				pivot, best = u, n
			}
		}
		for _, v := range append([]int(nil), p...) {
			if v != pivot && adjacent(v, pivot) {
				continue
			}
			var np, nx []int
			for _, u := range p {
				if u != v && adjacent(u, v) {
					np = append(np, u)
				}
			}
			for _, u := range x {
				if u != v && adjacent(u, v) {
					nx = append(nx, u)
				}
			}
			expand(append(r, v), np, nx)
			p = remove(p, v)
			x = append(x, v)
		}
	}
	expand(nil, append([]int(nil), nodes...), nil)
	sort.Slice(out, func(a, b int) bool {
		x, y := out[a], out[b]
		for i := 0; i < len(x) && i < len(y); i++ {
			if x[i] != y[i] {
				return x[i] < y[i]
			}
		}
		return len(x) < len(y)
	})
	return out
}

func remove(xs []int, v int) []int {
	out := xs[:0:0]
	for _, x := range xs {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}
