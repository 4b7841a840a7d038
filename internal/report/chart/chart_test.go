package chart

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
)

func TestNiceStep(t *testing.T) {
	cases := []struct {
		span float64
		n    int
		want float64
	}{
		{1, 5, 0.2}, {97, 5, 20}, {400, 7, 50}, {0.0042, 5, 0.001}, {12000, 5, 2000}, {7, 5, 1}, {33, 5, 5},
	}
	for _, c := range cases {
		if got := niceStep(c.span, c.n); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("niceStep(%g, %d) = %g, want %g", c.span, c.n, got, c.want)
		}
	}
}

func ticksText(s scale) string {
	var out []string
	for _, v := range s.ticks {
		out = append(out, s.label(v))
	}
	return strings.Join(out, " ")
}

func TestScale(t *testing.T) {
	cases := []struct {
		name   string
		values []float64
		axis   Axis
		lo, hi float64
		ticks  string
	}{
		{"rounded out", []float64{3, 97}, Axis{}, 0, 100, "0 20 40 60 80 100"},
		{"fixed min", []float64{10, 97}, Axis{Min: At(0)}, 0, 100, "0 20 40 60 80 100"},
		{"fixed ends hold", []float64{20, 80}, Axis{Min: At(0), Max: At(100)}, 0, 100, "0 20 40 60 80 100"},
		{"data beyond a fixed end", []float64{20, 130}, Axis{Min: At(0), Max: At(100)}, 0, 140, "0 20 40 60 80 100 120 140"},
		{"thousands", []float64{0, 9000}, Axis{}, 0, 10000, "0 2k 4k 6k 8k 10k"},
		{"fractions", []float64{0.01, 0.9}, Axis{}, 0, 1, "0 0.2 0.4 0.6 0.8 1.0"},
		{"one value", []float64{100}, Axis{}, 50, 150, "50 60 70 80 90 100 110 120 130 140 150"},
		{"no data", nil, Axis{}, 0, 1, "0 0.2 0.4 0.6 0.8 1.0"},
		{"NaN ignored", []float64{math.NaN(), 4, 9}, Axis{}, 4, 9, "4 5 6 7 8 9"},
		{"log decades", []float64{0.4, 22}, Axis{Log: true}, 0.1, 100, "0.1 1 10 100"},
		{"log with 2 and 5", []float64{150, 4000}, Axis{Log: true}, 100, 10000, "100 200 500 1000 2000 5000 10k"},
		{"log skips <= 0", []float64{-3, 0, 5, 50}, Axis{Log: true}, 1, 100, "1 2 5 10 20 50 100"},
	}
	for _, c := range cases {
		n := 5
		if c.name == "one value" {
			n = 7
		}
		s := newScale(c.values, c.axis, 0, 100, n)
		if math.Abs(s.lo-c.lo) > 1e-9 || math.Abs(s.hi-c.hi) > 1e-9 {
			t.Errorf("%s: domain %g..%g, want %g..%g", c.name, s.lo, s.hi, c.lo, c.hi)
		}
		if got := ticksText(s); got != c.ticks {
			t.Errorf("%s: ticks %q, want %q", c.name, got, c.ticks)
		}
	}
	s := newScale([]float64{1, 100}, Axis{Log: true}, 0, 200, 5)
	if s.at(10) != 100 || s.at(1) != 0 || s.at(100) != 200 || s.at(-1) != 0 {
		t.Errorf("log positions %g %g %g", s.at(1), s.at(10), s.at(100))
	}
}

func TestValue(t *testing.T) {
	for v, want := range map[float64]string{1234.56: "1235", 12.345: "12.35", 0.012345: "0.01235", 0: "0", 100: "100", -2.5: "-2.5", math.NaN(): "n/a", 1e6: "1000000"} {
		if got := Value(v); got != want {
			t.Errorf("Value(%g) = %q, want %q", v, got, want)
		}
	}
}

func TestBoxOf(t *testing.T) {
	// 1..101: the p-th percentile of 101 sorted values is x[p] = p + 1.
	var xs []float64
	for i := 101; i >= 1; i-- {
		xs = append(xs, float64(i))
	}
	xs = append(xs, math.NaN())
	b := BoxOf("a", xs)
	if b.N != 101 || b.Mean != 51 || b.P1 != 2 || b.P25 != 26 || b.P75 != 76 || b.P99 != 100 {
		t.Errorf("BoxOf(1..101) = %+v", b)
	}
	// Interpolation: {10, 20}: h = 0.25 -> 12.5 at p25, h = 0.99 -> 19.9 at p99.
	b = BoxOf("b", []float64{20, 10})
	if b.P25 != 12.5 || math.Abs(float64(b.P99)-19.9) > 1e-9 || b.Mean != 15 {
		t.Errorf("BoxOf(10, 20) = %+v", b)
	}
	if b := BoxOf("c", nil); b.N != 0 || b.Mean.Defined() || b.P99.Defined() {
		t.Errorf("BoxOf(nil) = %+v", b)
	}
}

func TestNumJSON(t *testing.T) {
	p := []Point{{X: 1, Y: 2.5, Err: 0.5}, {X: 2, Y: NaN, Err: NaN}, {X: 3, Y: 0}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `[{"x":1,"y":2.5,"err":0.5},{"x":2,"y":null},{"x":3,"y":0,"err":0}]` {
		t.Errorf("points as JSON: %s", b)
	}
	var back []Point
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back[1].Y.Defined() || back[0].Y != 2.5 || back[2].Y != 0 || !back[2].Y.Defined() {
		t.Errorf("points back: %+v", back)
	}
}

func TestColorAt(t *testing.T) {
	if colorAt(0) != "#440154" || colorAt(1) != "#fde725" || colorAt(0.5) != "#21918c" || colorAt(-1) != "#440154" || colorAt(2) != "#fde725" {
		t.Errorf("colours %s %s %s", colorAt(0), colorAt(0.5), colorAt(1))
	}
}

// elements parses svg as XML (so it must be well-formed) and counts its
// elements by name.
func elements(t *testing.T, svg string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok {
			counts[se.Name.Local]++
		}
	}
	return counts
}

func sampleCharts() []Chart {
	gap := []Point{{X: 0, Y: 1}, {X: 1, Y: 2}, {X: 2, Y: NaN}, {X: 3, Y: 4}, {X: 4, Y: 3}}
	return []Chart{
		{ID: "line", Title: "A <line> & more", Source: "from 2 runs", Line: &Line{
			X: Axis{Label: "time", Unit: "s"}, Y: Axis{Label: "throughput", Unit: "ok/s", Min: At(0)},
			Series: []Series{{Name: "rep 1", Points: gap}, {Name: "offered", Dashed: true, Points: []Point{{X: 0, Y: 5}, {X: 4, Y: 5}}}},
			Rules:  []Rule{{Axis: "y", Value: 4.5, Label: "SLO"}, {Axis: "x", Value: 2, Label: "fault"}},
			Ranges: []Range{{From: 1, To: 2, Label: "missed"}}, RangesName: "SLO missed",
		}},
		{ID: "err", Title: "Error bars", Source: "s", Line: &Line{X: Axis{Label: "load"}, Y: Axis{Label: "latency", Unit: "ms", Log: true},
			Series: []Series{{Name: "p99", Points: []Point{{X: 100, Y: 0.5, Err: 0.6}, {X: 200, Y: 5, Err: 1}, {X: 300, Y: -1}}}}}},
		{ID: "bars", Title: "Bars", Source: "s", Bars: &Bars{X: Axis{Label: "level"}, Y: Axis{Label: "requests"}, Categories: []string{"a", "b"},
			Series: []BarSeries{{Name: "late", Values: []Num{1, 2}, Err: []Num{0.5, NaN}}, {Name: "dropped", Values: []Num{0, NaN}}}}},
		{ID: "boxes", Title: "Boxes", Source: "s", Boxes: &Boxes{X: Axis{Label: "level"}, Y: Axis{Label: "ok/s"},
			Boxes: []Box{BoxOf("1", []float64{1, 2, 3}), BoxOf("2", nil)}}},
		{ID: "heat", Title: "Heat", Source: "s", Heat: &HeatMap{X: Axis{Label: "t", Unit: "s"}, Y: Axis{Label: "level"}, Scale: Axis{Label: "p99", Unit: "ms"},
			XLabels: []string{"0", "1", "2"}, YLabels: []string{"100", "200"}, Values: [][]Num{{1, 2, NaN}, {3, 4, 5}}}},
	}
}

func TestSVG(t *testing.T) {
	want := map[string]map[string]int{
		// A gap splits rep 1 into two paths; offered is a third. Five
		// markers (one undefined point has none), one range rect.
		"line": {"path": 3, "circle": 6, "rect": 2},
		// The point at -1 is left out on a log axis; two error bars of
		// three lines each.
		"err":   {"path": 1, "circle": 2},
		"bars":  {"rect": 3},
		"boxes": {"rect": 1},
		// 6 cells, 48 colour-scale steps.
		"heat": {"rect": 6 + 48},
	}
	for _, c := range sampleCharts() {
		svg, err := c.SVG()
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		els := elements(t, svg)
		if els["svg"] != 1 || els["title"] < 1 || els["desc"] != 1 || els["text"] < 4 {
			t.Errorf("%s: elements %v", c.ID, els)
		}
		for name, n := range want[c.ID] {
			if els[name] != n {
				t.Errorf("%s: %d <%s>, want %d", c.ID, els[name], name, n)
			}
		}
		if !strings.Contains(svg, `role="img" aria-labelledby="`+c.ID+`-t `+c.ID+`-d"`) {
			t.Errorf("%s: not labelled for assistive technology", c.ID)
		}
		again, _ := c.SVG()
		if again != svg {
			t.Errorf("%s: two renderings differ", c.ID)
		}
		if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
			t.Errorf("%s: NaN or Inf in the SVG", c.ID)
		}
	}
	svg, _ := sampleCharts()[0].SVG()
	for _, s := range []string{"A &lt;line&gt; &amp; more", "throughput (ok/s)", "time (s)", ">SLO missed<", `stroke-dasharray="5 3"`, "<title>rep 1: 1 s → 2 ok/s</title>"} {
		if !strings.Contains(svg, s) {
			t.Errorf("line chart lacks %q", s)
		}
	}
	svg, _ = sampleCharts()[1].SVG()
	if !strings.Contains(svg, "<title>p99: 100 → 0.5 ms ± 0.6</title>") {
		t.Errorf("error-bar tooltip missing:\n%s", svg)
	}
}

func TestSVGNoData(t *testing.T) {
	for _, c := range []Chart{
		{ID: "a", Title: "t", Source: "s", Line: &Line{Series: []Series{{Name: "x", Points: []Point{{X: 1, Y: NaN}}}}}},
		{ID: "b", Title: "t", Source: "s", Bars: &Bars{}},
		{ID: "c", Title: "t", Source: "s", Boxes: &Boxes{}},
		{ID: "d", Title: "t", Source: "s", Heat: &HeatMap{}},
	} {
		svg, err := c.SVG()
		if err != nil {
			t.Fatal(err)
		}
		elements(t, svg)
		if !strings.Contains(svg, ">no data<") {
			t.Errorf("%s: empty chart does not say so", c.ID)
		}
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		c    Chart
		want string
	}{
		{Chart{ID: "1a", Title: "t", Source: "s", Line: &Line{}}, "must start with a letter"},
		{Chart{ID: "a", Title: "t", Line: &Line{}}, "set both Title and Source"},
		{Chart{ID: "a", Title: "t", Source: "s"}, "set exactly one of Line, Bars, Boxes and Heat (0 are set)"},
		{Chart{ID: "a", Title: "t", Source: "s", Line: &Line{}, Bars: &Bars{}}, "(2 are set)"},
		{Chart{ID: "a", Title: "t", Source: "s", Bars: &Bars{Categories: []string{"x"}, Series: []BarSeries{{Name: "s"}}}}, `bar series "s" needs one value`},
		{Chart{ID: "a", Title: "t", Source: "s", Heat: &HeatMap{YLabels: []string{"y"}}}, "one row of values per Y label"},
		{Chart{ID: "a", Title: "t", Source: "s", Heat: &HeatMap{YLabels: []string{"y"}, XLabels: []string{"x"}, Values: [][]Num{{}}}}, "row 0 has 0 values for 1 X labels"},
		{Chart{ID: "a", Title: "t", Source: "s", Line: &Line{Rules: []Rule{{Axis: "z", Label: "r"}}}}, `use "x" or "y"`},
	}
	for _, c := range cases {
		_, err := c.c.SVG()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.c, err, c.want)
		}
	}
}
