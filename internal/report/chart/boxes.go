package chart

import (
	"fmt"
	"math"
	"sort"
)

// Box is one box of a box plot (seed-digest §4, seed 000 §4: "averages
// instead of the medians, boxes present 25th and 75th percentiles and
// whiskers 1st and 99th percentiles").
type Box struct {
	Label string `json:"label"`
	N     int    `json:"n"` // values summarised
	Mean  Num    `json:"mean"`
	P1    Num    `json:"p1"`
	P25   Num    `json:"p25"`
	P75   Num    `json:"p75"`
	P99   Num    `json:"p99"`
}

// BoxOf summarises xs (NaN values ignored). Percentiles interpolate
// linearly between order statistics: the p-th percentile of n sorted values
// x[0..n-1] is x[h] at h = (n-1)p/100, interpolated between neighbours
// (Hyndman and Fan's type 7). With no values every statistic is undefined.
func BoxOf(label string, xs []float64) Box {
	v := make([]float64, 0, len(xs))
	sum := 0.0
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
			sum += x
		}
	}
	b := Box{Label: label, N: len(v), Mean: NaN, P1: NaN, P25: NaN, P75: NaN, P99: NaN}
	if len(v) == 0 {
		return b
	}
	sort.Float64s(v)
	q := func(p float64) Num {
		h := float64(len(v)-1) * p / 100
		lo := math.Floor(h)
		hi := math.Min(lo+1, float64(len(v)-1))
		return Num(v[int(lo)] + (h-lo)*(v[int(hi)]-v[int(lo)]))
	}
	b.Mean = Num(sum / float64(len(v)))
	b.P1, b.P25, b.P75, b.P99 = q(1), q(25), q(75), q(99)
	return b
}

func drawBoxes(cv *canvas, bx *Boxes) {
	f := cv.layout([]legendItem{{name: "line: mean · box: 25th–75th percentile · whiskers: 1st–99th percentile", kind: "text"}}, 0)
	var ys []float64
	labels := make([]string, len(bx.Boxes))
	for i, b := range bx.Boxes {
		labels[i] = b.Label
		for _, v := range []Num{b.Mean, b.P1, b.P25, b.P75, b.P99} {
			if v.Defined() {
				ys = append(ys, float64(v))
			}
		}
	}
	sy := newScale(ys, bx.Y, f.bottom, f.top, 5)
	cv.yAxis(f, sy, bx.Y)
	cv.categoryAxis(f, labels, bx.X)
	cv.axesLines(f)
	if len(ys) == 0 {
		cv.noData(f)
		return
	}
	band := f.width() / float64(len(bx.Boxes))
	w := math.Min(44, band*0.5)
	color := palette[0]
	for i, b := range bx.Boxes {
		if !b.Mean.Defined() {
			continue
		}
		cx := f.left + band*(float64(i)+0.5)
		u := bx.Y.Unit
		t := fmt.Sprintf("%s (n=%d): mean %s, 1st %s, 25th %s, 75th %s, 99th %s percentile", b.Label, b.N,
			withUnit(float64(b.Mean), u), withUnit(float64(b.P1), u), withUnit(float64(b.P25), u),
			withUnit(float64(b.P75), u), withUnit(float64(b.P99), u))
		y1, y25, y75, y99 := sy.at(float64(b.P1)), sy.at(float64(b.P25)), sy.at(float64(b.P75)), sy.at(float64(b.P99))
		cv.line(cx, y1, cx, y25, "#333333", 1.2, "")
		cv.line(cx, y75, cx, y99, "#333333", 1.2, "")
		cv.line(cx-w/4, y1, cx+w/4, y1, "#333333", 1.2, "")
		cv.line(cx-w/4, y99, cx+w/4, y99, "#333333", 1.2, "")
		cv.rect(cx-w/2, y75, w, math.Max(y25-y75, 1), color, ` fill-opacity="0.25" stroke="`+color+`"`, t)
		m := sy.at(float64(b.Mean))
		cv.line(cx-w/2, m, cx+w/2, m, color, 2.5, "")
	}
}
