package chart

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// Geometry shared by every chart, in SVG user units. The SVG scales to the
// page width through its viewBox.
const (
	width      = 720.0
	plotHeight = 240.0
	marginL    = 64.0 // y tick labels and the rotated y axis label
	marginR    = 24.0
	marginB    = 46.0 // x tick labels and the x axis label
	legendRow  = 18.0
	charWidth  = 6.6 // rough width of one 12px sans-serif character, for layout
)

// palette is Okabe and Ito's colour-blind-safe set (yellow left out: too
// pale on white). Series past the seventh repeat it, dashed.
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}

func seriesColor(i int) (color string, dashed bool) {
	return palette[i%len(palette)], i >= len(palette)
}

// canvas accumulates the body of one SVG.
type canvas struct {
	id, title, desc string
	height          float64
	b               strings.Builder
}

func newCanvas(id, title, desc string) *canvas {
	return &canvas{id: id, title: title, desc: desc, height: plotHeight + marginB + 16}
}

// String wraps the body in an accessible <svg>: role img, labelled by its
// title and described by the source of its numbers.
func (c *canvas) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" role="img" aria-labelledby="%s-t %s-d" font-family="sans-serif" font-size="12">`,
		num(width), num(c.height), c.id, c.id)
	fmt.Fprintf(&s, "\n<title id=\"%s-t\">%s</title><desc id=\"%s-d\">%s</desc>\n", c.id, esc(c.title), c.id, esc(c.desc))
	s.WriteString(c.b.String())
	s.WriteString("</svg>")
	return s.String()
}

func esc(s string) string { return html.EscapeString(s) }

// num prints a coordinate with at most one decimal, so that output is
// stable and small.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

func tip(s string) string {
	if s == "" {
		return ""
	}
	return "<title>" + esc(s) + "</title>"
}

func (c *canvas) line(x1, y1, x2, y2 float64, stroke string, w float64, dash string) {
	fmt.Fprintf(&c.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"%s/>`+"\n",
		num(x1), num(y1), num(x2), num(y2), stroke, num(w), dashAttr(dash))
}

func dashAttr(dash string) string {
	if dash == "" {
		return ""
	}
	return ` stroke-dasharray="` + dash + `"`
}

func (c *canvas) rect(x, y, w, h float64, fill, extra, tooltip string) {
	if h < 0 {
		y, h = y+h, -h
	}
	if tooltip == "" {
		fmt.Fprintf(&c.b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"%s/>`+"\n", num(x), num(y), num(w), num(h), fill, extra)
		return
	}
	fmt.Fprintf(&c.b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"%s>%s</rect>`+"\n", num(x), num(y), num(w), num(h), fill, extra, tip(tooltip))
}

func (c *canvas) circle(x, y, r float64, fill, tooltip string) {
	fmt.Fprintf(&c.b, `<circle cx="%s" cy="%s" r="%s" fill="%s">%s</circle>`+"\n", num(x), num(y), num(r), fill, tip(tooltip))
}

// halo paints a white outline under a label that sits on lines, so that
// it stays readable.
const halo = ` stroke="#ffffff" stroke-width="3" paint-order="stroke"`

// text writes a label; anchor is start, middle or end.
func (c *canvas) text(x, y float64, s, anchor, extra string) {
	fmt.Fprintf(&c.b, `<text x="%s" y="%s" text-anchor="%s"%s>%s</text>`+"\n", num(x), num(y), anchor, extra, esc(s))
}

// polyline draws connected points as one path.
func (c *canvas) polyline(xs, ys []float64, stroke string, dash string, width float64) {
	var d strings.Builder
	for i := range xs {
		if i == 0 {
			d.WriteString("M")
		} else {
			d.WriteString(" L")
		}
		d.WriteString(num(xs[i]) + " " + num(ys[i]))
	}
	fmt.Fprintf(&c.b, `<path d="%s" fill="none" stroke="%s" stroke-width="%s"%s/>`+"\n", d.String(), stroke, num(width), dashAttr(dash))
}

// frame is the plot area.
type frame struct{ left, right, top, bottom float64 }

func (f frame) width() float64 { return f.right - f.left }

// legendItem is one entry of the legend above the plot.
type legendItem struct {
	name, color string
	kind        string // "line", "dash", "shade", "text"
}

// layout places the legend above the plot, wrapping its entries into rows,
// and returns the plot area; extraRight reserves room at the right (the
// heat map's colour scale).
func (c *canvas) layout(items []legendItem, extraRight float64) frame {
	top := 12.0
	x, rows := marginL, 0
	type placed struct {
		legendItem
		x, y float64
	}
	var ps []placed
	for _, it := range items {
		w := 22 + charWidth*float64(len([]rune(it.name))) + 14
		if it.kind == "text" {
			w -= 22
		}
		if x+w > width-marginR && x > marginL {
			x, rows = marginL, rows+1
		}
		ps = append(ps, placed{it, x, top + float64(rows)*legendRow})
		x += w
	}
	if len(items) > 0 {
		top += float64(rows+1)*legendRow + 4
	}
	for _, p := range ps {
		y := p.y + 4
		switch p.kind {
		case "line", "dash":
			dash := ""
			if p.kind == "dash" {
				dash = "5 3"
			}
			c.line(p.x, y, p.x+16, y, p.color, 2, dash)
		case "shade":
			c.rect(p.x, y-6, 16, 12, p.color, ` fill-opacity="0.18"`, "")
		}
		tx := p.x + 22
		if p.kind == "text" {
			tx = p.x
		}
		c.text(tx, y+4, p.name, "start", "")
	}
	f := frame{left: marginL, right: width - marginR - extraRight, top: top, bottom: top + plotHeight}
	c.height = f.bottom + marginB
	return f
}

// axisTitle is "label (unit)".
func axisTitle(a Axis) string {
	if a.Unit == "" {
		return a.Label
	}
	return a.Label + " (" + a.Unit + ")"
}

// yAxis draws horizontal grid lines with tick labels, and the axis title.
func (c *canvas) yAxis(f frame, s scale, a Axis) {
	for _, t := range s.ticks {
		y := s.at(t)
		c.line(f.left, y, f.right, y, "#e3e3e3", 1, "")
		c.text(f.left-6, y+4, s.label(t), "end", "")
	}
	mid := (f.top + f.bottom) / 2
	fmt.Fprintf(&c.b, `<text x="14" y="%s" text-anchor="middle" transform="rotate(-90 14 %s)">%s</text>`+"\n", num(mid), num(mid), esc(axisTitle(a)))
}

// xAxis draws vertical grid lines with tick labels, and the axis title.
func (c *canvas) xAxis(f frame, s scale, a Axis) {
	for _, t := range s.ticks {
		x := s.at(t)
		c.line(x, f.top, x, f.bottom, "#eeeeee", 1, "")
		c.text(x, f.bottom+16, s.label(t), "middle", "")
	}
	c.text((f.left+f.right)/2, f.bottom+36, axisTitle(a), "middle", "")
}

// categoryAxis labels bands under the plot, leaving labels out evenly when
// they would overlap.
func (c *canvas) categoryAxis(f frame, labels []string, a Axis) {
	n := len(labels)
	if n == 0 {
		c.text((f.left+f.right)/2, f.bottom+36, axisTitle(a), "middle", "")
		return
	}
	band := f.width() / float64(n)
	longest := 1
	for _, l := range labels {
		longest = max(longest, len([]rune(l)))
	}
	every := int(math.Ceil((charWidth*float64(longest) + 8) / band))
	for i, l := range labels {
		if i%max(every, 1) == 0 {
			c.text(f.left+band*(float64(i)+0.5), f.bottom+16, l, "middle", "")
		}
	}
	c.text((f.left+f.right)/2, f.bottom+36, axisTitle(a), "middle", "")
}

// axesLines draws the left and bottom edges of the plot.
func (c *canvas) axesLines(f frame) {
	c.line(f.left, f.bottom, f.right, f.bottom, "#333333", 1, "")
	c.line(f.left, f.top, f.left, f.bottom, "#333333", 1, "")
}

func (c *canvas) noData(f frame) {
	c.text((f.left+f.right)/2, (f.top+f.bottom)/2, "no data", "middle", ` fill="#777777"`)
}

// withUnit prints a value and its unit for tooltips.
func withUnit(v float64, unit string) string {
	if unit == "" {
		return Value(v)
	}
	if unit == "%" {
		return Value(v) + "%"
	}
	return Value(v) + " " + unit
}
