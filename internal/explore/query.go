package explore

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/wildcard"
)

// Request is one question the page asks: what goes on the axes, what
// tells series apart, which parameters are fixed (the rest are
// wildcards), and the objective that reduces the free wildcards.
type Request struct {
	X         string            // a dimension (wildcard.Level or a parameter) or a metric
	Y         wildcard.Metric   // a metric
	Series    string            // a dimension drawn as one series per value; "" = one series
	Fixed     map[string]string // dimension -> value; absent = wildcard
	Objective wildcard.Metric
}

// FixPrefix begins the URL parameter that fixes a dimension:
// fix.PATH=VALUE ("*" or empty = wildcard).
const FixPrefix = "fix."

// Wildcard is the value that leaves a dimension free.
const Wildcard = "*"

// ParseRequest reads a request from the page's URL parameters (x, y,
// series, objective, fix.PATH), with the defaults the page opens on:
// level against throughput, one series, the analysis's objective.
func ParseRequest(q url.Values, objective wildcard.Metric) Request {
	req := Request{X: q.Get("x"), Y: wildcard.Metric(q.Get("y")), Series: q.Get("series"),
		Objective: wildcard.Metric(q.Get("objective")), Fixed: map[string]string{}}
	if req.X == "" {
		req.X = wildcard.Level
	}
	if req.Y == "" {
		req.Y = wildcard.Throughput
	}
	if req.Objective == "" {
		req.Objective = objective
	}
	for k, vs := range q {
		if name, ok := strings.CutPrefix(k, FixPrefix); ok && len(vs) > 0 && vs[0] != Wildcard && vs[0] != "" {
			req.Fixed[name] = vs[0]
		}
	}
	return req
}

// Axis is one axis of the plot.
type Axis struct {
	Name    string `json:"name"`
	Label   string `json:"label"`
	Metric  bool   `json:"metric"`  // a metric (else a dimension)
	Numeric bool   `json:"numeric"` // values are numbers (else categories, in order)
}

// PlotPoint is one cell of the query drawn at (X, Y): X is the cell's
// dimension value (XText; X.Mean its number when numeric) or the chosen
// point's metric.
type PlotPoint struct {
	X     wildcard.Value `json:"x"`
	XText string         `json:"x_text"`
	Y     wildcard.Value `json:"y"`
	Cell  CellView       `json:"cell"`
}

// CellView is a query cell with the index of the store its chosen point
// came from.
type CellView struct {
	wildcard.Cell
	Store int `json:"store"`
}

// Series is the points of one value of the series dimension.
type Series struct {
	Name   string      `json:"name"` // "PATH=VALUE", or "all" without a series dimension
	Value  string      `json:"value"`
	Points []PlotPoint `json:"points"`
}

// View is the answer to a Request: the plotted series and the plan table
// (for each workload level, the configuration the objective prefers among
// those the fixed parameters allow).
type View struct {
	X         Axis              `json:"x"`
	Y         Axis              `json:"y"`
	SeriesBy  string            `json:"series_by,omitempty"`
	Objective wildcard.Metric   `json:"objective"`
	Fixed     map[string]string `json:"fixed"`
	Free      []string          `json:"free"` // wildcards reduced by the objective in each plotted cell
	Series    []Series          `json:"series"`
	Plan      []CellView        `json:"plan"`
	PlanFree  []string          `json:"plan_free"` // wildcards the plan chose among
	TieBreak  string            `json:"tie_break"`
}

// Query answers req over the explorer's points. A request naming an
// unknown axis or metric, or fixing a plotted dimension, is an error that
// says which.
func (e *Explorer) Query(req Request) (View, error) {
	if !wildcard.Known(req.Y) {
		return View{}, fmt.Errorf("y %q is not a metric; use one of %s", req.Y, metricNames())
	}
	xMetric := wildcard.Known(wildcard.Metric(req.X))
	if !xMetric && !e.isDim(req.X) {
		return View{}, fmt.Errorf("x %q is neither a metric (%s) nor a dimension (%s)", req.X, metricNames(), e.dimNames())
	}
	if req.Series != "" && !e.isDim(req.Series) {
		return View{}, fmt.Errorf("series %q is not a dimension; use one of %s", req.Series, e.dimNames())
	}
	if req.Series == req.X {
		return View{}, fmt.Errorf("%q is already on the x axis; choose another series or none", req.X)
	}
	var group []string
	if xMetric {
		if _, fixed := req.Fixed[wildcard.Level]; !fixed && req.Series != wildcard.Level {
			group = append(group, wildcard.Level)
		}
	} else {
		group = append(group, req.X)
	}
	if req.Series != "" {
		group = append(group, req.Series)
	}
	res, err := wildcard.Evaluate(e.points, wildcard.Query{Fixed: req.Fixed, GroupBy: group, Objective: req.Objective})
	if err != nil {
		return View{}, err
	}
	v := View{X: e.axis(req.X), Y: e.axis(string(req.Y)), SeriesBy: req.Series, Objective: res.Query.Objective,
		Fixed: req.Fixed, Free: res.Free, Series: []Series{}, TieBreak: res.TieBreak}
	if v.Free == nil {
		v.Free = []string{}
	}
	seriesAt := -1
	if req.Series != "" {
		seriesAt = len(group) - 1
	}
	index := map[string]int{}
	for _, c := range res.Cells {
		val := ""
		if seriesAt >= 0 {
			val = c.Key[seriesAt]
		}
		i, ok := index[val]
		if !ok {
			i = len(v.Series)
			index[val] = i
			name := "all"
			if seriesAt >= 0 {
				name = req.Series + "=" + val
			}
			v.Series = append(v.Series, Series{Name: name, Value: val})
		}
		p := PlotPoint{Y: c.Best.Metric(req.Y), Cell: e.cellView(c)}
		if xMetric {
			p.X = c.Best.Metric(wildcard.Metric(req.X))
			p.XText = formatValue(p.X.Mean)
		} else {
			p.XText = c.Key[0]
			p.X = wildcard.Value{Mean: math.NaN(), Half: math.NaN(), N: c.Best.Metric(req.Y).N}
			if x, err := strconv.ParseFloat(p.XText, 64); err == nil {
				p.X.Mean = x
			}
		}
		v.Series[i].Points = append(v.Series[i].Points, p)
	}
	// Series in the dimension's value order (numbers by value).
	vals := make([]string, 0, len(v.Series))
	for _, s := range v.Series {
		vals = append(vals, s.Value)
	}
	wildcard.SortValues(vals)
	sorted := make([]Series, 0, len(v.Series))
	for _, val := range vals {
		sorted = append(sorted, v.Series[index[val]])
	}
	v.Series = sorted
	v.Plan, v.PlanFree, err = e.queryPlan(req)
	return v, err
}

// queryPlan is, for each workload level the fixed parameters allow, the
// configuration the objective prefers over the wildcards.
func (e *Explorer) queryPlan(req Request) ([]CellView, []string, error) {
	var group []string
	if _, fixed := req.Fixed[wildcard.Level]; !fixed {
		group = []string{wildcard.Level}
	}
	res, err := wildcard.Evaluate(e.points, wildcard.Query{Fixed: req.Fixed, GroupBy: group, Objective: req.Objective})
	if err != nil {
		return nil, nil, err
	}
	out := make([]CellView, 0, len(res.Cells))
	for _, c := range res.Cells {
		out = append(out, e.cellView(c))
	}
	free := res.Free
	if free == nil {
		free = []string{}
	}
	return out, free, nil
}

func (e *Explorer) cellView(c wildcard.Cell) CellView {
	v := CellView{Cell: c, Store: -1}
	if s := e.sourceOf(c.Best.Source); s != nil {
		v.Store = s.index
	}
	return v
}

func (e *Explorer) isDim(name string) bool {
	for _, d := range e.dims {
		if d.Name == name {
			return true
		}
	}
	return false
}

func (e *Explorer) dimNames() string {
	var s []string
	for _, d := range e.dims {
		s = append(s, d.Name)
	}
	return strings.Join(s, ", ")
}

// axis describes a dimension or a metric as an axis.
func (e *Explorer) axis(name string) Axis {
	if m := wildcard.Metric(name); wildcard.Known(m) {
		return Axis{Name: name, Label: metricLabel(m), Metric: true, Numeric: true}
	}
	a := Axis{Name: name, Label: name, Numeric: true}
	if name == wildcard.Level {
		a.Label = "load (" + e.levelUnit + ")"
	}
	for _, d := range e.dims {
		if d.Name != name {
			continue
		}
		for _, v := range d.Values {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				a.Numeric = false
			}
		}
	}
	return a
}

func formatValue(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "–"
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}
