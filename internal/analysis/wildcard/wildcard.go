// Package wildcard evaluates CloudXplor-style queries over measured points
// (seed 003 §7.4, seed-digest §7): every point is one configuration (the
// field paths its treatment set, as factors: or treatments: wrote them) at
// one workload level, with its metrics. A query fixes some parameters to
// values and leaves the others wildcard. The parameters it groups by (the
// plotted axes) keep every measured value; every other free parameter is
// reduced by taking, per group, the point that is best for the objective.
// Any metric can then go on any axis: each group's chosen point carries all
// its metrics. The package is pure and its results encode as JSON.
package wildcard

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Metric names one figure of a point.
type Metric string

// The metrics of a point. Money is in dollars; rates per hour of
// operation at the point's measured throughput.
const (
	Throughput      Metric = "throughput"           // successful requests/s in the measured phase
	P50             Metric = "p50_ms"               // median response time, ms
	P99             Metric = "p99_ms"               // 99th percentile response time, ms
	CostPerHour     Metric = "cost_per_hour"        // infrastructure $/h of the configuration
	CostPerReqMonth Metric = "cost_month_per_req_s" // $/month per req/s of throughput
	RevenuePerHour  Metric = "revenue_per_hour"     // SLA revenue $/h at the measured throughput
	ProfitPerHour   Metric = "profit_per_hour"      // revenue − cost, $/h
)

// Metrics lists every metric in display order.
var Metrics = []Metric{Throughput, P50, P99, CostPerHour, CostPerReqMonth, RevenuePerHour, ProfitPerHour}

// HigherIsBetter reports whether the objective prefers larger values of m
// (throughput, revenue, profit) or smaller ones (latency, cost).
func HigherIsBetter(m Metric) bool {
	switch m {
	case Throughput, RevenuePerHour, ProfitPerHour:
		return true
	}
	return false
}

// Known reports whether m is one of Metrics.
func Known(m Metric) bool {
	for _, x := range Metrics {
		if x == m {
			return true
		}
	}
	return false
}

// Level is the dimension name of the workload level (req/s or clients).
const Level = "level"

// Value is a metric's mean over the point's repetitions with the
// half-width of its 95% confidence interval (NaN when fewer than two
// repetitions) and the number of repetitions N. NaN encodes as JSON null.
type Value struct {
	Mean float64 `json:"mean"`
	Half float64 `json:"half"`
	N    int     `json:"n"`
}

// Known reports whether the mean is a number.
func (v Value) Known() bool { return !math.IsNaN(v.Mean) && !math.IsInf(v.Mean, 0) }

// MarshalJSON writes NaN and infinities as null.
func (v Value) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Mean *float64 `json:"mean"`
		Half *float64 `json:"half"`
		N    int      `json:"n"`
	}{finite(v.Mean), finite(v.Half), v.N})
}

// UnmarshalJSON reads null as NaN.
func (v *Value) UnmarshalJSON(b []byte) error {
	var w struct {
		Mean *float64 `json:"mean"`
		Half *float64 `json:"half"`
		N    int      `json:"n"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	v.Mean, v.Half, v.N = orNaN(w.Mean), orNaN(w.Half), w.N
	return nil
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Point is one configuration at one workload level.
type Point struct {
	Source    string            `json:"source,omitempty"` // the results store it came from
	Treatment string            `json:"treatment"`
	Params    map[string]string `json:"params"` // field path -> value as written
	Level     float64           `json:"level"`
	// Nodes is the hosts the configuration runs on (0 = unknown); the
	// tie-break prefers fewer, as the plan does.
	Nodes   int              `json:"nodes,omitempty"`
	Metrics map[Metric]Value `json:"metrics"`
	Runs    []int64          `json:"runs,omitempty"` // the completed runs it is computed from
}

// Dim returns the point's value of a dimension (Level or a parameter
// path) as text, and whether the point has it.
func (p Point) Dim(name string) (string, bool) {
	if name == Level {
		return strconv.FormatFloat(p.Level, 'g', -1, 64), true
	}
	v, ok := p.Params[name]
	return v, ok
}

// Metric returns the point's value of m (NaN when it has none).
func (p Point) Metric(m Metric) Value {
	v, ok := p.Metrics[m]
	if !ok {
		return Value{Mean: math.NaN(), Half: math.NaN()}
	}
	return v
}

// Dimension is a parameter (or the level) with every value measured.
type Dimension struct {
	Name   string   `json:"name"`
	Values []string `json:"values"` // numeric values in numeric order, then the rest in text order
}

// Dimensions lists the level and every parameter the points have, with
// their measured values; parameters in path order after the level.
func Dimensions(points []Point) []Dimension {
	vals := map[string]map[string]bool{}
	add := func(name, v string) {
		if vals[name] == nil {
			vals[name] = map[string]bool{}
		}
		vals[name][v] = true
	}
	for _, p := range points {
		l, _ := p.Dim(Level)
		add(Level, l)
		for k, v := range p.Params {
			add(k, v)
		}
	}
	var names []string
	for n := range vals {
		if n != Level {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(points) > 0 {
		names = append([]string{Level}, names...)
	}
	out := make([]Dimension, 0, len(names))
	for _, n := range names {
		var vs []string
		for v := range vals[n] {
			vs = append(vs, v)
		}
		SortValues(vs)
		out = append(out, Dimension{Name: n, Values: vs})
	}
	return out
}

// SortValues orders dimension values: numbers by value first, then the
// rest as text.
func SortValues(vs []string) {
	sort.SliceStable(vs, func(i, j int) bool { return lessValue(vs[i], vs[j]) })
}

func lessValue(a, b string) bool {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	switch {
	case errA == nil && errB == nil:
		if x != y {
			return x < y
		}
		return a < b
	case errA == nil:
		return true
	case errB == nil:
		return false
	}
	return a < b
}

// Query selects and reduces points.
type Query struct {
	// Fixed maps a dimension (Level or a parameter path) to the one value
	// it keeps; a dimension absent here is a wildcard.
	Fixed map[string]string `json:"fixed,omitempty"`
	// GroupBy are the wildcard dimensions kept whole (the plotted axes):
	// every measured combination of their values is one cell. Usually
	// [level] or [level, a parameter].
	GroupBy []string `json:"group_by"`
	// Objective picks, within a cell, the best point over the remaining
	// wildcard parameters; its direction is HigherIsBetter's.
	Objective Metric `json:"objective"`
}

// Cell is one combination of the GroupBy values with the point chosen for
// it.
type Cell struct {
	Key        []string `json:"key"`        // the GroupBy values, in GroupBy order
	Best       Point    `json:"best"`       // the chosen point (its Params say which setting won)
	Candidates int      `json:"candidates"` // points the choice was made among
	// Tie is set when another candidate had the same objective value and
	// the tie-break decided (TieBreak).
	Tie bool `json:"tie,omitempty"`
}

// Result is a query's answer.
type Result struct {
	Query Query    `json:"query"`
	Free  []string `json:"free"`  // wildcard dimensions reduced by the objective
	Cells []Cell   `json:"cells"` // in GroupBy value order
	// TieBreak says how equal objective values were decided.
	TieBreak string `json:"tie_break"`
}

// TieBreak is the order Evaluate applies when objective values are equal.
const TieBreak = "equal objective values: the lower cost per hour wins, then the configuration with fewer nodes, then the parameters in text order (path=value, by path; treatment name last)"

// Evaluate answers q over points. An unknown objective, a GroupBy
// dimension that is also fixed, or a fixed value no point has is an error
// that says which.
func Evaluate(points []Point, q Query) (Result, error) {
	if q.Objective == "" {
		q.Objective = ProfitPerHour
	}
	if !Known(q.Objective) {
		return Result{}, fmt.Errorf("objective %q is not a metric; use one of %s", q.Objective, metricList())
	}
	dims := Dimensions(points)
	known := map[string][]string{}
	for _, d := range dims {
		known[d.Name] = d.Values
	}
	for _, g := range q.GroupBy {
		if _, ok := known[g]; !ok {
			return Result{}, fmt.Errorf("group_by %q is neither %q nor a parameter of these results (%s)", g, Level, dimList(dims))
		}
		if _, ok := q.Fixed[g]; ok {
			return Result{}, fmt.Errorf("%q is both fixed and in group_by; fix it or plot it, not both", g)
		}
	}
	for k, v := range q.Fixed {
		vs, ok := known[k]
		if !ok {
			return Result{}, fmt.Errorf("fixed %q is neither %q nor a parameter of these results (%s)", k, Level, dimList(dims))
		}
		if !contains(vs, v) {
			return Result{}, fmt.Errorf("fixed %s=%s was not measured; measured values: %s", k, v, strings.Join(vs, ", "))
		}
	}
	res := Result{Query: q, TieBreak: TieBreak, Cells: []Cell{}}
	grouped := map[string]bool{}
	for _, g := range q.GroupBy {
		grouped[g] = true
	}
	for _, d := range dims {
		if _, fixed := q.Fixed[d.Name]; !fixed && !grouped[d.Name] {
			res.Free = append(res.Free, d.Name)
		}
	}
	cells := map[string]*Cell{}
	var order [][]string
	for _, p := range points {
		if !matches(p, q.Fixed) {
			continue
		}
		key := make([]string, len(q.GroupBy))
		ok := true
		for i, g := range q.GroupBy {
			key[i], ok = p.Dim(g)
			if !ok {
				break
			}
		}
		if !ok {
			continue
		}
		k := strings.Join(key, "\x00")
		c := cells[k]
		if c == nil {
			cells[k] = &Cell{Key: key, Best: p, Candidates: 1}
			order = append(order, key)
			continue
		}
		c.Candidates++
		switch compare(p, c.Best, q.Objective) {
		case better:
			c.Best, c.Tie = p, false
		case tieWon:
			c.Best, c.Tie = p, true
		case tieLost:
			c.Tie = true
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		for n := range order[i] {
			if order[i][n] != order[j][n] {
				return lessValue(order[i][n], order[j][n])
			}
		}
		return false
	})
	for _, key := range order {
		res.Cells = append(res.Cells, *cells[strings.Join(key, "\x00")])
	}
	return res, nil
}

type verdict int

const (
	worse verdict = iota
	better
	tieWon
	tieLost
)

// compare judges p against the current best b: a known objective value
// beats an unknown one, then the objective decides, then (a tie) the
// lower cost per hour, then fewer nodes (the plan's order,
// internal/analysis/plan), then the parameters' text.
func compare(p, b Point, obj Metric) verdict {
	pv, bv := p.Metric(obj), b.Metric(obj)
	switch {
	case pv.Known() && !bv.Known():
		return better
	case !pv.Known() && bv.Known():
		return worse
	case pv.Known() && pv.Mean != bv.Mean:
		if (pv.Mean > bv.Mean) == HigherIsBetter(obj) {
			return better
		}
		return worse
	}
	pc, bc := p.Metric(CostPerHour), b.Metric(CostPerHour)
	if pc.Known() && bc.Known() && pc.Mean != bc.Mean {
		if pc.Mean < bc.Mean {
			return tieWon
		}
		return tieLost
	}
	if p.Nodes > 0 && b.Nodes > 0 && p.Nodes != b.Nodes {
		if p.Nodes < b.Nodes {
			return tieWon
		}
		return tieLost
	}
	if paramText(p) < paramText(b) {
		return tieWon
	}
	return tieLost
}

// paramText is the point's parameters in path order, then its treatment:
// a deterministic last tie-break.
func paramText(p Point) string {
	var keys []string
	for k := range p.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\x00", k, p.Params[k])
	}
	return b.String() + "\x01" + p.Treatment
}

func matches(p Point, fixed map[string]string) bool {
	for k, v := range fixed {
		pv, ok := p.Dim(k)
		if !ok || pv != v {
			return false
		}
	}
	return true
}

func contains(vs []string, v string) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

func metricList() string {
	var s []string
	for _, m := range Metrics {
		s = append(s, string(m))
	}
	return strings.Join(s, ", ")
}

func dimList(dims []Dimension) string {
	var s []string
	for _, d := range dims {
		s = append(s, d.Name)
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// Num is a number that encodes NaN and infinities as JSON null.
type Num float64

// MarshalJSON writes null for NaN and ±Inf.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads null as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	var p *float64
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*n = Num(orNaN(p))
	return nil
}
