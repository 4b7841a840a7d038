package scaling

import (
	"math"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/analysis/capacity"
	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/analysis/stats"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Seed 002 §V (seed-digest §5): 4 × m1.large ($0.36/h) ~1,200 ops/s;
// vertically to 4 × m1.xlarge (twice the resources, $0.72/h) ~4,000 ops/s,
// a 3.3× scale-up; horizontally to 8 × m1.large ~5,000 ops/s, "4×"
// (5000/1200 = 4.17). Costs: 4·0.36·730 = $1,051.20/month, $0.876 per
// req/s; 8·0.36·730 = 4·0.72·730 = $2,102.40, i.e. $0.42048 and $0.5256
// per req/s. Linearity over units 4, 8, 8 with throughput 1200, 5000,
// 4000: Sxx = 32/3, Sxy = 8800, Syy = 7.76e6, so b = 825, a = -2100,
// r = 8800/sqrt(32/3 · 7.76e6).
func TestSeed002Cassandra(t *testing.T) {
	res, err := Analyze([]Treatment{
		{Name: "4-large", Servers: 4, Throughput: 1200, ResponseTime: 20000, Load: 1000, PricePerHour: 0.36},
		{Name: "8-large", Servers: 8, Throughput: 5000, ResponseTime: 8000, Load: 1000, PricePerHour: 0.36},
		{Name: "4-xlarge", Servers: 4, Size: 2, Throughput: 4000, ResponseTime: 10000, Load: 1200, PricePerHour: 0.72},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Baseline != "4-large" || len(res.Rows) != 3 {
		t.Fatalf("baseline %q rows %d", res.Baseline, len(res.Rows))
	}
	want := []struct {
		kind                           string
		alpha, scaleUp, eff, cost, cpr float64
	}{
		{"baseline", 1, 1, 1, 1051.2, 0.876},
		{"horizontal", 2, 5000.0 / 1200, 5000.0 / 2400, 2102.4, 0.42048},
		{"vertical", 2, 4000.0 / 1200, 4000.0 / 2400, 2102.4, 0.5256},
	}
	for i, w := range want {
		r := res.Rows[i]
		if r.Kind != w.kind || !near(r.Alpha, w.alpha, 1e-12) || !near(r.ScaleUp, w.scaleUp, 1e-12) || !near(r.Efficiency, w.eff, 1e-12) ||
			!near(r.CostPerMonth, w.cost, 1e-9) || !near(r.CostPerReqPerSec, w.cpr, 1e-12) {
			t.Errorf("row %d: %+v, want %+v", i, r, w)
		}
	}
	// Speed-up: 20 ms → 8 ms at the same load is 2.5; the vertical run was
	// measured at another load, so its speed-up is undefined.
	if !near(res.Rows[1].SpeedUp, 2.5, 1e-12) || !math.IsNaN(res.Rows[2].SpeedUp) || res.Rows[0].SpeedUp != 1 {
		t.Errorf("speed-ups %v %v %v", res.Rows[0].SpeedUp, res.Rows[1].SpeedUp, res.Rows[2].SpeedUp)
	}
	if !hasNote(res.Notes, `speed-up of "4-xlarge" is undefined: its response time was measured at load 1200, the baseline's at 1000`) {
		t.Errorf("notes %v", res.Notes)
	}
	r := 8800 / math.Sqrt(32.0/3*7.76e6)
	if f := res.Linearity; f.N != 3 || !near(f.Slope, 825, 1e-9) || !near(f.Intercept, -2100, 1e-9) || !near(f.R, r, 1e-12) {
		t.Errorf("linearity %+v, want b 825, a -2100, r %v", f, r)
	}
	if !hasNote(res.Notes, "2 distinct server capacities") {
		t.Errorf("no note on too few capacities: %v", res.Notes)
	}
}

// Perfectly linear horizontal scaling over 2, 4, 8 servers: scale-up
// equals alpha, efficiency 1, r = 1; a named baseline other than the
// smallest gives alpha < 1.
func TestLinearAndNamedBaseline(t *testing.T) {
	ts := []Treatment{
		{Name: "n2", Servers: 2, Throughput: 1000},
		{Name: "n4", Servers: 4, Throughput: 2000},
		{Name: "n8", Servers: 8, Throughput: 4000},
	}
	res, err := Analyze(ts, "n4")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if !near(r.ScaleUp, r.Alpha, 1e-12) || !near(r.Efficiency, 1, 1e-12) || !math.IsNaN(r.CostPerMonth) || !math.IsNaN(r.SpeedUp) {
			t.Errorf("row %+v", r)
		}
	}
	if res.Rows[0].Alpha != 0.5 || res.Rows[0].Kind != "horizontal" || res.Rows[1].Kind != "baseline" {
		t.Errorf("rows %+v", res.Rows)
	}
	if res.Linearity.R != 1 || !near(res.Linearity.Slope, 500, 1e-9) || len(res.Notes) != 0 {
		t.Errorf("linearity %+v notes %v", res.Linearity, res.Notes)
	}
}

func TestErrors(t *testing.T) {
	ok := Treatment{Name: "a", Servers: 1, Throughput: 10}
	for name, ts := range map[string][]Treatment{
		"none":      nil,
		"duplicate": {ok, ok},
		"servers":   {{Name: "a", Servers: 0, Throughput: 10}},
		"size":      {{Name: "a", Servers: 1, Size: -1, Throughput: 10}},
		"tput":      {{Name: "a", Servers: 1, Throughput: -1}},
		"tput inf":  {{Name: "a", Servers: 1, Throughput: math.Inf(1)}},
		"price":     {{Name: "a", Servers: 1, Throughput: 1, PricePerHour: -1}},
	} {
		if _, err := Analyze(ts, ""); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	if _, err := Analyze([]Treatment{ok}, "b"); err == nil || !strings.Contains(err.Error(), `baseline "b"`) {
		t.Errorf("unknown baseline: %v", err)
	}
	// A baseline without throughput leaves scale-up undefined, not an error.
	res, err := Analyze([]Treatment{{Name: "a", Servers: 1}, {Name: "b", Servers: 2, Throughput: 5}}, "")
	if err != nil || !math.IsNaN(res.Rows[1].ScaleUp) || !hasNote(res.Notes, "no throughput") {
		t.Errorf("zero baseline: %v %+v", err, res)
	}
}

// An unknown throughput (NaN, e.g. a probe without an estimate) is not 0:
// its scale-up, efficiency and cost per req/s stay undefined and the
// linearity fit uses the other treatments only (here exactly linear).
func TestUnknownThroughput(t *testing.T) {
	ts := []Treatment{
		{Name: "one", Servers: 1, Throughput: 100, PricePerHour: 1},
		{Name: "two", Servers: 2, Throughput: math.NaN(), PricePerHour: 1},
		{Name: "three", Servers: 3, Throughput: 300, PricePerHour: 1},
		{Name: "four", Servers: 4, Throughput: 400, PricePerHour: 1},
	}
	res, err := Analyze(ts, "")
	if err != nil {
		t.Fatal(err)
	}
	two := res.Rows[1]
	if !math.IsNaN(two.ScaleUp) || !math.IsNaN(two.Efficiency) || !math.IsNaN(two.CostPerReqPerSec) || two.CostPerMonth != 2*730 {
		t.Errorf("unknown row %+v", two)
	}
	if f := res.Linearity; f.N != 3 || !near(f.Slope, 100, 1e-9) || !near(f.Intercept, 0, 1e-9) || !near(f.R, 1, 1e-12) {
		t.Errorf("linearity %+v", f)
	}
	if !hasNote(res.Notes, `"two" has no throughput estimate`) {
		t.Errorf("notes %v", res.Notes)
	}
	if !near(res.Rows[3].ScaleUp, 4, 1e-12) {
		t.Errorf("scale-up of four %v", res.Rows[3].ScaleUp)
	}
}

func point(level, tput, latency float64) capacity.Point {
	return capacity.Point{Level: levels.Level{Level: level, Throughput: stats.Estimate{Mean: tput, N: 2}},
		Latency: stats.Estimate{Mean: latency, N: 2}}
}

// Two curves with knees at 200 and 300 req/s: the common load is 200, the
// highest level both measured at or below the lower knee; speed-up there
// is 12 ms / 9 ms.
func TestFromCurves(t *testing.T) {
	curves := []capacity.Curve{
		{Treatment: "small", MaxThroughput: 280, Knee: &capacity.Knee{Level: 200},
			Points: []capacity.Point{point(100, 100, 10000), point(200, 200, 12000), point(300, 280, 50000)}},
		{Treatment: "big", MaxThroughput: 390, Knee: &capacity.Knee{Level: 300},
			Points: []capacity.Point{point(100, 100, 8000), point(200, 200, 9000), point(300, 300, 10000), point(400, 390, 30000)}},
	}
	shapes := map[string]Shape{"small": {Servers: 2, PricePerHour: 0.1}, "big": {Servers: 3, PricePerHour: 0.1}}
	ts, notes, err := FromCurves(curves, shapes)
	if err != nil || len(notes) != 0 || len(ts) != 2 {
		t.Fatalf("%v %v %+v", err, notes, ts)
	}
	if ts[0].Throughput != 280 || ts[0].ResponseTime != 12000 || ts[0].Load != 200 || ts[1].ResponseTime != 9000 || ts[1].Servers != 3 {
		t.Fatalf("treatments %+v", ts)
	}
	res, err := Analyze(ts, "")
	if err != nil || res.Baseline != "small" || !near(res.Rows[1].SpeedUp, 12.0/9, 1e-12) || !near(res.Rows[1].ScaleUp, 390.0/280, 1e-12) {
		t.Fatalf("%v %+v", err, res)
	}
	// No knee on one curve: noted; a shape for an unknown treatment or a
	// curve without a shape is an error.
	curves[1].Knee = nil
	if _, notes, _ := FromCurves(curves, shapes); !hasNote(notes, `"big" has no knee`) {
		t.Errorf("notes %v", notes)
	}
	if _, _, err := FromCurves(curves, map[string]Shape{"small": {Servers: 1}}); err == nil {
		t.Error("missing shape: want an error")
	}
	// A curve whose every level the client limited has no capacity: its
	// throughput stays unknown (NaN), not 0.
	curves[1].MaxThroughput = math.NaN()
	if ts, notes, _ := FromCurves(curves, shapes); !math.IsNaN(ts[1].Throughput) || !hasNote(notes, "free of client limits") {
		t.Errorf("unknown capacity: %+v %v", ts, notes)
	}
	shapes["ghost"] = Shape{Servers: 1}
	if _, _, err := FromCurves(curves, shapes); err == nil || !strings.Contains(err.Error(), "ghost") {
		t.Errorf("unknown shape: %v", err)
	}
}

func hasNote(notes []string, s string) bool {
	for _, n := range notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// When one treatment met the SLO at no level, every treatment is compared
// on the highest throughput it served at a level the client did not limit
// (seed 002's T), the one that met the SLO too, so that like is compared
// with like. Worked by hand: small's peak is 320 (its 1,600 level; the
// 800 level served less), big's 790 (its client-limited 1,600 level, at
// 900, does not count): scale-up 790 / 320.
func TestFromCurvesOnPeakWhenNoLevelMetTheSLO(t *testing.T) {
	limited := point(1600, 900, 90000)
	limited.ClientLimited = 1
	curves := []capacity.Curve{
		{Treatment: "small", MaxThroughput: math.NaN(), MaxIndex: -1, FirstFail: 0, LastPass: -1,
			Points: []capacity.Point{point(200, 150, 900000), point(400, 260, 800000), point(800, 200, 1000000), point(1600, 320, 700000)}},
		{Treatment: "big", MaxThroughput: 400, MaxIndex: 1, FirstFail: 2, LastPass: 1, Knee: &capacity.Knee{Level: 400},
			Points: []capacity.Point{point(200, 190, 200000), point(400, 400, 180000), point(800, 790, 340000), limited}},
	}
	shapes := map[string]Shape{"small": {Servers: 4, PricePerHour: 0.18}, "big": {Servers: 2, Size: 2, PricePerHour: 0.36}}
	ts, notes, err := FromCurves(curves, shapes)
	if err != nil {
		t.Fatal(err)
	}
	if ts[0].Throughput != 320 || ts[1].Throughput != 790 {
		t.Fatalf("throughputs %v and %v, want the peaks 320 and 790", ts[0].Throughput, ts[1].Throughput)
	}
	if !hasNote(notes, `no level of treatment "small" met the SLO`) {
		t.Errorf("notes %v", notes)
	}
	res, err := Analyze(ts, "small")
	if err != nil || !near(res.Rows[1].ScaleUp, 790.0/320, 1e-12) {
		t.Fatalf("%v %+v", err, res.Rows)
	}
	if i := throughputIndex(curves[1], onPeak(curves) != ""); i != 2 {
		t.Errorf("big's response times are taken at level index %d, want 2 (its peak)", i)
	}

	// With a capacity under the SLO on every curve nothing changes.
	curves[0].MaxThroughput, curves[0].MaxIndex, curves[0].LastPass = 150, 0, 0
	ts, notes, _ = FromCurves(curves, shapes)
	if ts[0].Throughput != 150 || ts[1].Throughput != 400 || hasNote(notes, "met the SLO") {
		t.Errorf("with capacities: %v %v, notes %v", ts[0].Throughput, ts[1].Throughput, notes)
	}
}
