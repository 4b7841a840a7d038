// Package chart holds the charts of Headroom's reports as data, and draws
// them as self-contained, deterministic SVG: the same chart always gives the
// same bytes, every axis has "nice" ticks and a label with its unit, every
// chart has an accessible title and description, and points carry native
// SVG tooltips (<title>), so no script is needed.
//
// A chart is data first: report.json stores the same Chart values that
// report.html draws, so both hold the same numbers.
package chart

import (
	"fmt"
	"regexp"
)

// Chart is one figure: an ID unique in its page, a title, the source of
// its numbers, and exactly one of the kinds below.
type Chart struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Source says what every number is computed from, e.g. "from 5 runs x
	// 3 repetitions, 1 s intervals, measured phase".
	Source string   `json:"source"`
	Line   *Line    `json:"line,omitempty"`
	Bars   *Bars    `json:"bars,omitempty"`
	Boxes  *Boxes   `json:"boxes,omitempty"`
	Heat   *HeatMap `json:"heatmap,omitempty"`
}

// Axis is one axis of a chart.
type Axis struct {
	Label string `json:"label"`
	Unit  string `json:"unit,omitempty"` // printed after the label: "latency (ms)"
	// Log draws a base-10 logarithmic axis; values <= 0 are left out.
	Log bool `json:"log,omitempty"`
	// Min and Max, when set, are where the axis ends unless data lie
	// beyond them (data are never hidden); unset ends follow the data,
	// rounded out to a tick. Set them with At.
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
}

// Line is an x/y chart: one polyline per series, with optional error bars,
// reference rules and shaded x ranges. A time series is a Line whose x is
// seconds from a start the Source names; shaded ranges mark its critical
// periods.
type Line struct {
	X      Axis     `json:"x"`
	Y      Axis     `json:"y"`
	Series []Series `json:"series"`
	Rules  []Rule   `json:"rules,omitempty"`
	Ranges []Range  `json:"ranges,omitempty"`
	// RangesName is the legend entry of the shaded ranges.
	RangesName string `json:"ranges_name,omitempty"`
}

// Series is one named line.
type Series struct {
	Name   string `json:"name"`
	Dashed bool   `json:"dashed,omitempty"` // a reference (e.g. offered load), not a measurement
	// Thin marks an envelope of the series before it (a bucket's lowest or
	// highest interval): drawn thin in that series' colour, without markers.
	Thin   bool    `json:"thin,omitempty"`
	Points []Point `json:"points"`
}

// Point is one x/y value. An undefined Y breaks the line. Err is the
// half-length of the error bar (a standard error, as the Source says).
type Point struct {
	X   float64 `json:"x"`
	Y   Num     `json:"y"`
	Err Num     `json:"err,omitzero"`
}

// Rule is a reference line across the plot: horizontal at Y = Value when
// Axis is "y" (an SLO threshold), vertical at X = Value when "x" (the first
// failing level, an event).
type Rule struct {
	Axis  string  `json:"axis"`
	Value float64 `json:"value"`
	Label string  `json:"label"`
}

// Range is a shaded interval of x, [From, To].
type Range struct {
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Label string  `json:"label"`
}

// Bars is a grouped bar chart: one group per category, one bar per series.
type Bars struct {
	X          Axis        `json:"x"` // Label names what the categories are; Min, Max and Log are ignored
	Y          Axis        `json:"y"`
	Categories []string    `json:"categories"`
	Series     []BarSeries `json:"series"`
}

// BarSeries holds one value per category; Err, when given, one error-bar
// half-length per category.
type BarSeries struct {
	Name   string `json:"name"`
	Values []Num  `json:"values"`
	Err    []Num  `json:"err,omitempty"`
}

// Boxes is a box plot drawn as seed 000 draws them (seed-digest §4): the
// line across the box is the mean, the box spans the 25th to 75th
// percentile and the whiskers the 1st to 99th.
type Boxes struct {
	X     Axis  `json:"x"` // Label names what the boxes are; Min, Max and Log are ignored
	Y     Axis  `json:"y"`
	Boxes []Box `json:"boxes"`
}

// HeatMap colours a grid of cells by value. X labels run left to right,
// Y labels bottom to top; Values[y][x] is the cell of YLabels[y] and
// XLabels[x], undefined where there is no data.
type HeatMap struct {
	X       Axis     `json:"x"`
	Y       Axis     `json:"y"`
	Scale   Axis     `json:"scale"` // the colour scale: label, unit, Log, Min, Max
	XLabels []string `json:"x_labels"`
	YLabels []string `json:"y_labels"`
	Values  [][]Num  `json:"values"`
}

// At returns a pointer to v, for Axis.Min and Axis.Max.
func At(v float64) *float64 { return &v }

var idPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// Validate checks that c can be drawn: a usable ID, a title, a source, one
// kind, and consistent lengths.
func (c *Chart) Validate() error {
	if !idPattern.MatchString(c.ID) {
		return fmt.Errorf("chart %q: the ID must start with a letter and hold only letters, digits, - and _", c.ID)
	}
	if c.Title == "" || c.Source == "" {
		return fmt.Errorf("chart %s: set both Title and Source (what its numbers are computed from)", c.ID)
	}
	kinds := 0
	for _, set := range []bool{c.Line != nil, c.Bars != nil, c.Boxes != nil, c.Heat != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return fmt.Errorf("chart %s: set exactly one of Line, Bars, Boxes and Heat (%d are set)", c.ID, kinds)
	}
	if b := c.Bars; b != nil {
		for _, s := range b.Series {
			if len(s.Values) != len(b.Categories) || (s.Err != nil && len(s.Err) != len(b.Categories)) {
				return fmt.Errorf("chart %s: bar series %q needs one value (and error, if any) per category (%d)", c.ID, s.Name, len(b.Categories))
			}
		}
	}
	if h := c.Heat; h != nil {
		if len(h.Values) != len(h.YLabels) {
			return fmt.Errorf("chart %s: the heat map needs one row of values per Y label (%d rows, %d labels)", c.ID, len(h.Values), len(h.YLabels))
		}
		for i, row := range h.Values {
			if len(row) != len(h.XLabels) {
				return fmt.Errorf("chart %s: heat map row %d has %d values for %d X labels", c.ID, i, len(row), len(h.XLabels))
			}
		}
	}
	for _, r := range c.lineRules() {
		if r.Axis != "x" && r.Axis != "y" {
			return fmt.Errorf("chart %s: rule %q has axis %q; use \"x\" or \"y\"", c.ID, r.Label, r.Axis)
		}
	}
	return nil
}

func (c *Chart) lineRules() []Rule {
	if c.Line == nil {
		return nil
	}
	return c.Line.Rules
}

// SVG draws the chart. It returns an error only for a chart that fails
// Validate.
func (c *Chart) SVG() (string, error) {
	if err := c.Validate(); err != nil {
		return "", err
	}
	cv := newCanvas(c.ID, c.Title, c.Source)
	switch {
	case c.Line != nil:
		drawLine(cv, c.Line)
	case c.Bars != nil:
		drawBars(cv, c.Bars)
	case c.Boxes != nil:
		drawBoxes(cv, c.Boxes)
	default:
		drawHeat(cv, c.Heat)
	}
	return cv.String(), nil
}
