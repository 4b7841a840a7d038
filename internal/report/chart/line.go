package chart

import "math"

// markersUpTo is the most points a series may have for each to get a
// marker with a tooltip; denser series are drawn as lines only, which keeps
// long time series small and readable.
const markersUpTo = 120

const shadeColor = "#D55E00"

func drawLine(cv *canvas, l *Line) {
	var items []legendItem
	for i, s := range l.Series {
		color, dashed := seriesColor(colorIndex(l.Series, i))
		kind := "line"
		if s.Dashed || dashed {
			kind = "dash"
		}
		items = append(items, legendItem{name: s.Name, color: color, kind: kind})
	}
	if len(l.Ranges) > 0 {
		name := l.RangesName
		if name == "" {
			name = "shaded periods"
		}
		items = append(items, legendItem{name: name, color: shadeColor, kind: "shade"})
	}
	f := cv.layout(items, 0)

	var xs, ys []float64
	defined := 0
	for _, s := range l.Series {
		for _, p := range s.Points {
			if !p.Y.Defined() {
				continue
			}
			defined++
			xs = append(xs, p.X)
			y, e := float64(p.Y), 0.0
			if p.Err.Defined() {
				e = math.Abs(float64(p.Err))
			}
			ys = append(ys, y-e, y+e)
			if l.Y.Log && y-e <= 0 {
				ys = append(ys, y) // the bar is cut at the axis, the point still counts
			}
		}
	}
	for _, r := range l.Ranges {
		xs = append(xs, r.From, r.To)
	}
	for _, r := range l.Rules {
		if r.Axis == "x" {
			xs = append(xs, r.Value)
		} else {
			ys = append(ys, r.Value)
		}
	}
	sx := newScale(xs, l.X, f.left, f.right, 7)
	sy := newScale(ys, l.Y, f.bottom, f.top, 5)
	cv.yAxis(f, sy, l.Y)
	cv.xAxis(f, sx, l.X)

	for _, r := range l.Ranges {
		x0, x1 := sx.at(r.From), sx.at(r.To)
		cv.rect(x0, f.top, math.Max(x1-x0, 1), f.bottom-f.top, shadeColor, ` fill-opacity="0.18"`, r.Label)
	}
	for _, r := range l.Rules {
		if r.Axis == "x" {
			x := sx.at(r.Value)
			cv.line(x, f.top, x, f.bottom, "#555555", 1.2, "4 3")
			// The label goes on the side with more room, so that a rule at
			// the right edge keeps its label inside the chart.
			if x > (f.left+f.right)/2 {
				cv.text(x-4, f.top+12, r.Label, "end", ` fill="#333333"`+halo)
			} else {
				cv.text(x+4, f.top+12, r.Label, "start", ` fill="#333333"`+halo)
			}
		} else {
			y := sy.at(r.Value)
			cv.line(f.left, y, f.right, y, "#555555", 1.2, "4 3")
			cv.text(f.right-4, y-5, r.Label, "end", ` fill="#333333"`+halo)
		}
	}
	cv.axesLines(f)
	if defined == 0 {
		cv.noData(f)
		return
	}
	for i, s := range l.Series {
		drawSeries(cv, f, sx, sy, l, s, i)
	}
}

// colorIndex is the colour of series i: its own, or for a thin envelope
// that of the series it belongs to (the last one before it that is not
// thin).
func colorIndex(ss []Series, i int) int {
	n := -1
	for j := 0; j <= i; j++ {
		if !ss[j].Thin || n < 0 {
			n++
		}
	}
	return n
}

func drawSeries(cv *canvas, f frame, sx, sy scale, l *Line, s Series, i int) {
	color, dashed := seriesColor(colorIndex(l.Series, i))
	dash := ""
	if s.Dashed || dashed {
		dash = "5 3"
	}
	width := 2.0
	if s.Thin {
		width = 0.8
	}
	usable := func(p Point) bool { return p.Y.Defined() && (!l.Y.Log || p.Y > 0) }
	// Lines break at undefined values: a gap is a gap, not a straight
	// line across it.
	var px, py []float64
	flush := func() {
		if len(px) > 1 {
			cv.polyline(px, py, color, dash, width)
		}
		px, py = px[:0], py[:0]
	}
	for _, p := range s.Points {
		if !usable(p) {
			flush()
			continue
		}
		px, py = append(px, sx.at(p.X)), append(py, sy.at(float64(p.Y)))
	}
	flush()
	for _, p := range s.Points {
		if !usable(p) || !p.Err.Defined() || p.Err == 0 {
			continue
		}
		x, e := sx.at(p.X), math.Abs(float64(p.Err))
		y0 := sy.at(float64(p.Y) - e)
		if l.Y.Log && float64(p.Y)-e <= 0 {
			y0 = f.bottom
		}
		y1 := sy.at(float64(p.Y) + e)
		cv.line(x, y0, x, y1, color, 1.2, "")
		cv.line(x-4, y0, x+4, y0, color, 1.2, "")
		cv.line(x-4, y1, x+4, y1, color, 1.2, "")
	}
	for j, p := range s.Points {
		if !usable(p) {
			continue
		}
		isolated := (j == 0 || !usable(s.Points[j-1])) && (j == len(s.Points)-1 || !usable(s.Points[j+1]))
		if (s.Thin || len(s.Points) > markersUpTo) && !isolated {
			continue
		}
		t := s.Name + ": " + withUnit(p.X, l.X.Unit) + " → " + withUnit(float64(p.Y), l.Y.Unit)
		if p.Err.Defined() && p.Err != 0 {
			t += " ± " + Value(math.Abs(float64(p.Err)))
		}
		cv.circle(sx.at(p.X), sy.at(float64(p.Y)), 3, color, t)
	}
}
