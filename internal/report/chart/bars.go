package chart

import "math"

func drawBars(cv *canvas, b *Bars) {
	var items []legendItem
	for i, s := range b.Series {
		color, _ := seriesColor(i)
		items = append(items, legendItem{name: s.Name, color: color, kind: "line"})
	}
	f := cv.layout(items, 0)
	ys := []float64{0} // bars grow from zero
	defined := 0
	for _, s := range b.Series {
		for j, v := range s.Values {
			if !v.Defined() {
				continue
			}
			defined++
			e := 0.0
			if s.Err != nil && s.Err[j].Defined() {
				e = math.Abs(float64(s.Err[j]))
			}
			ys = append(ys, float64(v)-e, float64(v)+e)
		}
	}
	y := b.Y
	y.Log = false // a bar's length must be proportional to its value
	sy := newScale(ys, y, f.bottom, f.top, 5)
	cv.yAxis(f, sy, y)
	cv.categoryAxis(f, b.Categories, b.X)
	cv.axesLines(f)
	if defined == 0 || len(b.Categories) == 0 {
		cv.noData(f)
		return
	}
	band := f.width() / float64(len(b.Categories))
	group := band * 0.8
	bw := group / float64(max(len(b.Series), 1))
	zero := sy.at(0)
	for i, s := range b.Series {
		color, _ := seriesColor(i)
		for j, v := range s.Values {
			if !v.Defined() {
				continue
			}
			x := f.left + band*float64(j) + (band-group)/2 + bw*float64(i)
			t := s.Name + ", " + b.Categories[j] + ": " + withUnit(float64(v), b.Y.Unit)
			e := NaN
			if s.Err != nil {
				e = s.Err[j]
			}
			if e.Defined() && e != 0 {
				t += " ± " + Value(math.Abs(float64(e)))
			}
			top := sy.at(float64(v))
			cv.rect(x+1, zero, bw-2, top-zero, color, "", t)
			if e.Defined() && e != 0 {
				cx := x + bw/2
				y0, y1 := sy.at(float64(v)-math.Abs(float64(e))), sy.at(float64(v)+math.Abs(float64(e)))
				cv.line(cx, y0, cx, y1, "#333333", 1.2, "")
				cv.line(cx-3, y0, cx+3, y0, "#333333", 1.2, "")
				cv.line(cx-3, y1, cx+3, y1, "#333333", 1.2, "")
			}
		}
	}
}
