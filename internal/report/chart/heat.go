package chart

import (
	"fmt"
	"math"
)

// viridis stops at 0, 1/4, 1/2, 3/4 and 1: a perceptually even,
// colour-blind-safe sequential scale that stays readable in grey.
var viridis = [][3]float64{{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}

// colorAt returns the colour of f in [0, 1].
func colorAt(f float64) string {
	f = math.Min(math.Max(f, 0), 1)
	pos := f * float64(len(viridis)-1)
	i := min(int(pos), len(viridis)-2)
	t := pos - float64(i)
	var c [3]int
	for k := range c {
		c[k] = int(math.Round(viridis[i][k] + t*(viridis[i+1][k]-viridis[i][k])))
	}
	return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2])
}

const scaleWidth = 84.0 // room right of the plot for the colour scale

func drawHeat(cv *canvas, h *HeatMap) {
	f := cv.layout(nil, scaleWidth)
	var vs []float64
	for _, row := range h.Values {
		for _, v := range row {
			if v.Defined() {
				vs = append(vs, float64(v))
			}
		}
	}
	// The colour scale is an axis drawn vertically beside the plot.
	bar := frame{left: f.right + 22, right: f.right + 34, top: f.top, bottom: f.bottom}
	sc := newScale(vs, h.Scale, bar.bottom, bar.top, 5)
	cv.categoryAxis(f, h.XLabels, h.X)
	rows := len(h.YLabels)
	if rows > 0 {
		bandY := (f.bottom - f.top) / float64(rows)
		every := int(math.Ceil(16 / bandY))
		for i, l := range h.YLabels {
			if i%max(every, 1) == 0 {
				cv.text(f.left-6, f.bottom-bandY*(float64(i)+0.5)+4, l, "end", "")
			}
		}
	}
	mid := (f.top + f.bottom) / 2
	fmt.Fprintf(&cv.b, `<text x="14" y="%s" text-anchor="middle" transform="rotate(-90 14 %s)">%s</text>`+"\n", num(mid), num(mid), esc(axisTitle(h.Y)))
	if len(vs) == 0 || rows == 0 || len(h.XLabels) == 0 {
		cv.axesLines(f)
		cv.noData(f)
		return
	}
	frac := func(v float64) float64 { return (sc.at(v) - sc.p0) / (sc.p1 - sc.p0) }
	bw := f.width() / float64(len(h.XLabels))
	bh := (f.bottom - f.top) / float64(rows)
	for yi, row := range h.Values {
		for xi, v := range row {
			x, y := f.left+bw*float64(xi), f.bottom-bh*float64(yi+1)
			where := axisTitle(h.X) + " " + h.XLabels[xi] + ", " + axisTitle(h.Y) + " " + h.YLabels[yi] + ": "
			if !v.Defined() || (h.Scale.Log && v <= 0) {
				cv.rect(x, y, bw+0.3, bh+0.3, "#f2f2f2", "", where+"no data")
				continue
			}
			// Cells overlap by a fraction of a unit so that no hairline of
			// background shows between them.
			cv.rect(x, y, bw+0.3, bh+0.3, colorAt(frac(float64(v))), "", where+withUnit(float64(v), h.Scale.Unit))
		}
	}
	cv.axesLines(f)
	const steps = 48
	step := (bar.bottom - bar.top) / steps
	for i := range steps {
		cv.rect(bar.left, bar.bottom-step*float64(i+1), bar.right-bar.left, step+0.3, colorAt((float64(i)+0.5)/steps), "", "")
	}
	for _, t := range sc.ticks {
		y := sc.at(t)
		cv.line(bar.right, y, bar.right+4, y, "#333333", 1, "")
		cv.text(bar.right+6, y+4, sc.label(t), "start", "")
	}
	x := bar.right + 48
	fmt.Fprintf(&cv.b, `<text x="%s" y="%s" text-anchor="middle" transform="rotate(-90 %s %s)">%s</text>`+"\n", num(x), num(mid), num(x), num(mid), esc(axisTitle(h.Scale)))
}
