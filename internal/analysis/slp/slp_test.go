package slp

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/monitor"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// series returns back-to-back points of one period from start.
func series(start time.Time, period time.Duration, values ...float64) Series {
	out := make(Series, len(values))
	for i, v := range values {
		out[i] = Point{Start: start.Add(time.Duration(i) * period), Period: period, Value: v}
	}
	return out
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestPressure(t *testing.T) {
	single, _ := esl.Single(300)
	if got := Pressure(210, single); got != 70 {
		t.Fatalf("SLP(210 | 300) = %v, want exactly 70", got)
	}
	if got := Pressure(600, single); got != 200 {
		t.Fatalf("SLP may exceed 100: %v", got)
	}
	// sum_j (o/s_j) f_j = 200/200 x 0.5 + 200/400 x 0.5 = 0.75.
	dist, _ := esl.NewDistribution([]esl.Level{{Value: 200, Freq: 1}, {Value: 400, Freq: 1}})
	if got := Pressure(200, dist); got != 75 {
		t.Fatalf("SLP(200 | {200, 400}) = %v, want 75", got)
	}
	if !math.IsNaN(Pressure(1, esl.ESL{})) {
		t.Fatal("an empty ESL gives NaN")
	}
}

func TestFromSamples(t *testing.T) {
	e, _ := esl.Single(1000)
	s := func(sec float64, v float64) monitor.Sample {
		return monitor.Sample{Host: "h", Resource: "net:eth0", Metric: monitor.NetRxBytes, Start: at(sec), Period: time.Second, Value: v, Source: monitor.SourceSampled}
	}
	got, err := FromSamples([]monitor.Sample{s(1, 960), s(0, 700)}, e)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Value != 70 || got[1].Value != 96 || !got[0].Start.Equal(at(0)) {
		t.Fatalf("series = %+v", got)
	}
	other := s(2, 1)
	other.Resource = "net:eth1"
	for _, c := range []struct {
		in   []monitor.Sample
		want string
	}{
		{[]monitor.Sample{s(0, 1), other}, "samples mix series"},
		{[]monitor.Sample{s(0, -1)}, "non-negative"},
		{[]monitor.Sample{s(0, 1), s(0.5, 1)}, "overlaps"},
		{nil, "no samples"},
	} {
		if _, err := FromSamples(c.in, e); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("err = %v, want %q", err, c.want)
		}
	}
}

func TestCriticalTimeTiesAndRuns(t *testing.T) {
	s := series(t0, time.Second, 50, 70, 71, 96, 96, 70.0001, 95, 96, 20, 71)
	c70, err := CriticalTime(s, 70)
	if err != nil {
		t.Fatal(err)
	}
	// 70 exactly is not critical: points 2..7 (6 s) and 9 (1 s).
	if c70.TCPT != 7*time.Second || c70.MCPT != 6*time.Second || c70.Covered != 10*time.Second ||
		c70.TCPTPct != 70 || c70.MCPTPct != 60 {
		t.Fatalf("c=70: %+v", c70)
	}
	want := []Range{{at(2), at(8)}, {at(9), at(10)}}
	if len(c70.Periods) != 2 || c70.Periods[0] != want[0] || c70.Periods[1] != want[1] {
		t.Fatalf("periods = %+v, want %+v", c70.Periods, want)
	}
	// 95 exactly is not critical either: points 3-4 and 7.
	c95, _ := CriticalTime(s, 95)
	if c95.TCPT != 3*time.Second || c95.MCPT != 2*time.Second || c95.TCPTPct != 30 || c95.MCPTPct != 20 {
		t.Fatalf("c=95: %+v", c95)
	}
}

func TestCriticalTimeGapsAndPeriods(t *testing.T) {
	// Two 5 s stretches above 70 with a 5 s gap between them: the gap
	// breaks continuity and is not in the denominator.
	s := append(series(at(0), time.Second, 80, 80, 80, 80, 80), series(at(10), time.Second, 80, 80, 80, 80, 80)...)
	c, err := CriticalTime(s, 70)
	if err != nil {
		t.Fatal(err)
	}
	if c.TCPT != 10*time.Second || c.MCPT != 5*time.Second || c.Covered != 10*time.Second || c.TCPTPct != 100 || c.MCPTPct != 50 || len(c.Periods) != 2 {
		t.Fatalf("gap: %+v", c)
	}
	if s.Gaps() != 1 {
		t.Fatalf("gaps = %d", s.Gaps())
	}

	// A 60 s point followed by thirty 1 s points, all above 70, then one
	// at 10: continuous for 90 s of 91 covered.
	s = append(Series{{Start: at(0), Period: time.Minute, Value: 80}}, series(at(60), time.Second, make30(80)...)...)
	s = append(s, Point{Start: at(90), Period: time.Second, Value: 10})
	c, _ = CriticalTime(s, 70)
	if c.MCPT != 90*time.Second || c.TCPT != 90*time.Second || c.Covered != 91*time.Second || !near(c.TCPTPct, 9000.0/91, 1e-12) {
		t.Fatalf("mixed periods: %+v", c)
	}

	// 5 ms of jitter (under 1% of 1 s) neither breaks nor overlaps.
	s = Series{{Start: at(0), Period: time.Second, Value: 80}, {Start: at(1.005), Period: time.Second, Value: 80}, {Start: at(1.998), Period: time.Second, Value: 80}}
	if c, err := CriticalTime(s, 70); err != nil || c.MCPT != 3*time.Second || len(c.Periods) != 1 {
		t.Fatalf("jitter: %+v, %v", c, err)
	}
	if _, err := CriticalTime(Series{{Start: at(0), Period: time.Second}, {Start: at(0.5), Period: time.Second}}, 70); err == nil {
		t.Fatal("overlapping points must fail")
	}
	if _, err := CriticalTime(Series{{Start: at(0), Period: 0}}, 70); err == nil {
		t.Fatal("a zero period must fail")
	}

	empty, err := CriticalTime(nil, 70)
	if err != nil || !math.IsNaN(empty.TCPTPct) || empty.TCPT != 0 {
		t.Fatalf("empty: %+v, %v", empty, err)
	}
}

func make30(v float64) []float64 {
	xs := make([]float64, 30)
	for i := range xs {
		xs[i] = v
	}
	return xs
}

func TestBoxplot(t *testing.T) {
	var vals []float64
	for i := 100; i >= 1; i-- {
		vals = append(vals, float64(i))
	}
	b, err := Boxplot(series(t0, time.Second, vals...))
	if err != nil {
		t.Fatal(err)
	}
	if b.N != 100 || b.Mean != 50.5 || b.Min != 1 || b.P1 != 1 || b.P25 != 25 || b.P50 != 50 || b.P75 != 75 || b.P99 != 99 || b.Max != 100 {
		t.Fatalf("box = %+v", b)
	}
	// Time weighting: one 60 s point at 10 weighs as much as sixty 1 s
	// points at 20.
	s := append(Series{{Start: at(0), Period: time.Minute, Value: 10}}, series(at(60), time.Second, append(make30(20), make30(20)...)...)...)
	b, _ = Boxplot(s)
	if b.Mean != 15 || b.P50 != 10 || b.P75 != 20 || b.P1 != 10 || b.Covered != 2*time.Minute {
		t.Fatalf("weighted box = %+v", b)
	}
	e, _ := Boxplot(nil)
	if !math.IsNaN(e.Mean) || !math.IsNaN(e.P99) {
		t.Fatalf("empty box = %+v", e)
	}
	sum, err := Summarize(series(t0, time.Second, 50, 80, 99))
	if err != nil || len(sum.Critical) != 2 || sum.Critical[0].Threshold != 70 || sum.Critical[0].TCPT != 2*time.Second || sum.Critical[1].TCPT != time.Second {
		t.Fatalf("summary = %+v, %v", sum, err)
	}
}
