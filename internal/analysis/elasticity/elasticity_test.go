package elasticity

import (
	"math"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func sec(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// designed is a 90 s run of one-second intervals with a node added at
// 20 s (server up at 22 s, serving at 27 s) and a removal at 60 s that
// fails. The known answers:
//   - W0 = [0, 20): 100 ok/s at p99 10 ms; before = (100, 10 ms);
//   - W1 = [20, 60): 60 ok/s at 50 ms (SLO missed) for 10 s, 120 ok/s at
//     20 ms for 5 s, then 150 ok/s at 8 ms, with one dip to 100 ok/s at
//     45 s; after = the median of [50, 60) = (150, 8 ms);
//   - the band is throughput ≥ 135 and p99 ≤ 8.8 ms; the last excursion
//     of more than one interval ends at 34 s, so both settle at 35 s: 15 s
//     each, transition [20, 35) (Done at 27 s is earlier);
//   - SLO seconds 10; latency excess 10 × (50 - 8) + 5 × (20 - 8) = 480
//     ms·s; gain per node 150 - 100 = 50;
//   - with no excursion ignored, the dip at 45 s counts, so throughput
//     settles at 46 s: 26 s;
//   - W2 = [60, 90) at (150, 8 ms); the removal never completed, so its
//     transition is its whole window: no SLO second, no excess.
func designed() Input {
	var ps []Point
	for s := 0; s < 90; s++ {
		p := Point{Start: sec(float64(s)), Dur: time.Second, Throughput: 150, P99: 8000}
		switch {
		case s < 20:
			p.Throughput, p.P99 = 100, 10000
		case s < 30:
			p.Throughput, p.P99, p.SLOMiss = 60, 50000, true
		case s < 35:
			p.Throughput, p.P99 = 120, 20000
		case s == 45:
			p.Throughput = 100
		}
		ps = append(ps, p)
	}
	return Input{Points: ps, HasSLO: true, Changes: []Change{
		{Action: "add_node", Node: "node4", Host: "db4", Delta: 1, Requested: sec(20), Started: sec(22), Done: sec(27), BytesStreamed: 1 << 20},
		{Action: "remove_node", Node: "node2", Delta: -1, Requested: sec(60), Error: "decommission timed out"},
	}}
}

func TestDesignedRun(t *testing.T) {
	res, err := Analyze(designed(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 2 {
		t.Fatalf("%d changes, want 2", len(res.Changes))
	}
	add := res.Changes[0]
	if !add.Served || add.ToStart != 2*time.Second || add.ToServe != 7*time.Second {
		t.Errorf("add: served %v, to start %v, to serve %v; want true, 2s, 7s", add.Served, add.ToStart, add.ToServe)
	}
	if add.Before.Throughput != 100 || add.Before.P99 != 10000 || add.Before.N != 10 || !add.Before.From.Equal(sec(10)) {
		t.Errorf("before %+v, want 100 ok/s, 10 ms over [10, 20)", add.Before)
	}
	if add.After.Throughput != 150 || add.After.P99 != 8000 || add.After.N != 10 || !add.After.From.Equal(sec(50)) {
		t.Errorf("after %+v, want 150 ok/s, 8 ms over [50, 60)", add.After)
	}
	if add.ThroughputSettle != 15*time.Second || add.P99Settle != 15*time.Second || !add.TransitionEnd.Equal(sec(35)) {
		t.Errorf("settle %v / %v, transition to %v; want 15s, 15s, 35 s", add.ThroughputSettle, add.P99Settle, add.TransitionEnd.Sub(t0))
	}
	if add.SLOSeconds != 10 || math.Abs(add.LatencyExcess-480) > 1e-9 || add.GainPerNode != 50 {
		t.Errorf("SLO %v s, excess %v ms·s, gain %v; want 10, 480, 50", add.SLOSeconds, add.LatencyExcess, add.GainPerNode)
	}
	if len(add.Notes) != 0 {
		t.Errorf("notes on a clean add: %v", add.Notes)
	}
	rm := res.Changes[1]
	if rm.Served || rm.ToServe != -1 || rm.ToStart != -1 || !rm.TransitionEnd.Equal(sec(90)) {
		t.Errorf("remove: %+v; want not served, unknown times, transition to the run's end", rm)
	}
	if rm.SLOSeconds != 0 || rm.LatencyExcess != 0 || rm.GainPerNode != 0 || rm.Before.Throughput != 150 {
		t.Errorf("remove: SLO %v, excess %v, gain %v, before %v", rm.SLOSeconds, rm.LatencyExcess, rm.GainPerNode, rm.Before.Throughput)
	}
	if len(rm.Notes) == 0 || !strings.Contains(rm.Notes[0], "node2 was never out and stopped: decommission timed out") {
		t.Errorf("remove notes %v", rm.Notes)
	}

	raw, err := Analyze(designed(), Config{Excursion: -1})
	if err != nil {
		t.Fatal(err)
	}
	if got := raw.Changes[0]; got.ThroughputSettle != 26*time.Second || got.P99Settle != 15*time.Second || !got.TransitionEnd.Equal(sec(46)) {
		t.Errorf("strict: settle %v / %v, transition to %v; want 26s, 15s, 46 s", got.ThroughputSettle, got.P99Settle, got.TransitionEnd.Sub(t0))
	}
	// The excess and SLO seconds of [20, 46): the dip adds no latency.
	if got := raw.Changes[0]; got.SLOSeconds != 10 || math.Abs(got.LatencyExcess-480) > 1e-9 {
		t.Errorf("strict: SLO %v, excess %v", got.SLOSeconds, got.LatencyExcess)
	}
}

// A change whose metrics never settle: p99 rises steadily to the end of
// the run, so its last three intervals are above the band around the
// median of the last 10 s, and the transition runs to the end.
func TestNeverSettles(t *testing.T) {
	var ps []Point
	for s := 0; s < 40; s++ {
		p99 := 1000.0
		if s >= 20 {
			p99 = 1000 * float64(s-18) // 2 ms at 20 s ... 21 ms at 39 s
		}
		ps = append(ps, Point{Start: sec(float64(s)), Dur: time.Second, Throughput: 50, P99: p99})
	}
	in := Input{Points: ps, Changes: []Change{{Action: "add_node", Node: "node3", Delta: 1, Requested: sec(20), Started: sec(21), Done: sec(24)}}}
	res, err := Analyze(in, Config{})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Changes[0]
	// After p99 = median of 12..21 ms = 16.5 ms; 19, 20 and 21 ms are over
	// 16.5 × 1.1 = 18.15 ms.
	if m.After.P99 != 16500 || m.P99Settle != -1 || m.ThroughputSettle != 0 || !m.TransitionEnd.Equal(sec(40)) {
		t.Errorf("%+v; want after p99 16.5 ms, p99 unsettled, throughput at once, transition to 40 s", m)
	}
	if !math.IsNaN(m.SLOSeconds) {
		t.Errorf("SLO seconds %v without an SLO, want NaN", m.SLOSeconds)
	}
	// Excess: Σ over 20..39 s of max(0, p99 - 16.5 ms) = 0.5+1.5+...+4.5 = 12.5 ms·s.
	if math.Abs(m.LatencyExcess-12.5) > 1e-9 {
		t.Errorf("excess %v, want 12.5", m.LatencyExcess)
	}
	if len(m.Notes) != 1 || !strings.Contains(m.Notes[0], "p99 was still more than 10% worse") {
		t.Errorf("notes %v", m.Notes)
	}
}

// An open loop whose offered rate bounds throughput before and after says
// the gain is not a capacity; a run without changes gives none; bad
// parameters and unordered input are errors.
func TestOfferedNoneAndErrors(t *testing.T) {
	var ps []Point
	for s := 0; s < 30; s++ {
		ps = append(ps, Point{Start: sec(float64(s)), Dur: time.Second, Throughput: 200, P99: 3000})
	}
	in := Input{Points: ps, Offered: 200, Changes: []Change{{Action: "add_node", Node: "node2", Delta: 1, Requested: sec(10), Done: sec(12)}}}
	res, err := Analyze(in, Config{Steady: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Changes[0]
	if m.GainPerNode != 0 || m.ToStart != -1 || m.ToServe != 2*time.Second || m.Before.N != 5 || !m.TransitionEnd.Equal(sec(12)) {
		t.Errorf("%+v", m)
	}
	if len(m.Notes) != 1 || !strings.Contains(m.Notes[0], "matched the offered 200 req/s") {
		t.Errorf("notes %v", m.Notes)
	}
	res, err = Analyze(Input{Points: ps}, Config{})
	if err != nil || len(res.Changes) != 0 {
		t.Errorf("no changes: %v, %v", res.Changes, err)
	}
	for _, cfg := range []Config{{Tolerance: 1.5}, {Tolerance: -0.1}, {Steady: -time.Second}} {
		if _, err := Analyze(in, cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
	early := in
	early.Changes = []Change{{Action: "add_node", Node: "node2", Delta: 1, Requested: sec(-5), Done: sec(2)}}
	res, err = Analyze(early, Config{})
	if err != nil || len(res.Changes) != 1 || !strings.Contains(strings.Join(res.Changes[0].Notes, " "), "requested outside the measured intervals") {
		t.Errorf("a change before the measured phase: %+v, %v", res.Changes, err)
	}
	bad := in
	bad.Points = []Point{ps[1], ps[0]}
	if _, err := Analyze(bad, Config{}); err == nil || !strings.Contains(err.Error(), "time order") {
		t.Errorf("unordered intervals: %v", err)
	}
	if _, err := Analyze(Input{Changes: in.Changes}, Config{}); err == nil {
		t.Error("changes without intervals accepted")
	}
}

// Changes requested inside an interval, as in a real run: node4 added at
// 10.3 s (serving at 23.2 s), node2 removed at 30.2 s (out at 42.3 s);
// 3000 ok/s at 0.25 ms except 1500 ok/s at 400 ms in [12, 24) and 1800
// ok/s at 450 ms in [30, 42). The interval [30, 31), in which the removal
// was asked for, counts after it, so the add's window is [11, 30) and its
// steady state the intervals that start once node4 served: [24, 30), six
// intervals (a note says they are fewer than 10 s). Throughput settles at
// 24 s (13.7 s) for the add and at 42 s (11.8 s) for the removal, whose
// steady state rests on [43, 45); the removal's transition ends when the
// node was out, 42.3 s, with an excess of 12 × (450 - 0.25) ms·s.
func TestRequestsInsideIntervals(t *testing.T) {
	var ps []Point
	for s := 0; s < 45; s++ {
		p := Point{Start: sec(float64(s)), Dur: time.Second, Throughput: 3000, P99: 250}
		switch {
		case s >= 12 && s < 24:
			p.Throughput, p.P99 = 1500, 400000
		case s >= 30 && s < 42:
			p.Throughput, p.P99 = 1800, 450000
		}
		ps = append(ps, p)
	}
	in := Input{Points: ps, Changes: []Change{
		{Action: "add_node", Node: "node4", Delta: 1, Requested: sec(10.3), Started: sec(10.4), Done: sec(23.2)},
		{Action: "remove_node", Node: "node2", Delta: -1, Requested: sec(30.2), Done: sec(42.3)},
	}}
	res, err := Analyze(in, Config{})
	if err != nil {
		t.Fatal(err)
	}
	add, rm := res.Changes[0], res.Changes[1]
	if add.After.N != 6 || add.After.Throughput != 3000 || add.After.P99 != 250 || add.Before.N != 10 {
		t.Errorf("add: before %+v after %+v", add.Before, add.After)
	}
	if want := 13700 * time.Millisecond; add.ThroughputSettle != want || add.P99Settle != want {
		t.Errorf("add settles %v / %v, want %v", add.ThroughputSettle, add.P99Settle, want)
	}
	if !strings.Contains(strings.Join(add.Notes, " "), "rests on 6 intervals") {
		t.Errorf("add notes %v", add.Notes)
	}
	if want := 11800 * time.Millisecond; rm.After.N != 2 || rm.ThroughputSettle != want || !rm.TransitionEnd.Equal(sec(42.3)) {
		t.Errorf("remove: after %+v, settle %v, transition to %v", rm.After, rm.ThroughputSettle, rm.TransitionEnd.Sub(t0))
	}
	if math.Abs(rm.LatencyExcess-12*(450-0.25)) > 1e-6 || rm.GainPerNode != 0 {
		t.Errorf("remove: excess %v, gain %v", rm.LatencyExcess, rm.GainPerNode)
	}
}

// A scheduled load that steps down between the steady states: a node
// added at 10 s under 2,500 req/s due (1,000 answered) is done at 40 s,
// and the load falls to 40 req/s at 50 s, inside the after-window's
// steady span [55, 60). The two throughputs (1,000 and 40) answer
// different loads: the gain per node is undefined, with a note. The same
// timeline under a steady 2,500 req/s due gives the gain (1,800 - 1,000).
func TestGainUndefinedWhenTheLoadMoved(t *testing.T) {
	timeline := func(stepDown bool) []Point {
		var ps []Point
		for s := 0; s < 60; s++ {
			p := Point{Start: sec(float64(s)), Dur: time.Second, Throughput: 1000, P99: 900000, Offered: 2500}
			switch {
			case stepDown && s >= 50:
				p.Throughput, p.P99, p.Offered = 40, 5000, 40
			case s >= 40:
				p.Throughput, p.P99 = 1800, 400000
			}
			ps = append(ps, p)
		}
		return ps
	}
	add := []Change{{Action: "add_node", Node: "node2", Delta: 1, Requested: sec(10), Started: sec(20), Done: sec(40)}}
	res, err := Analyze(Input{Points: timeline(true), Changes: add}, Config{Steady: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Changes[0]
	if !math.IsNaN(m.GainPerNode) || m.Before.Offered != 2500 || m.After.Offered != 40 || !strings.Contains(strings.Join(m.Notes, " "), "moved from 2500.0 to 40.0 req/s") {
		t.Errorf("load stepped down: gain %v, offered %v -> %v, notes %v; want the gain undefined and a note", m.GainPerNode, m.Before.Offered, m.After.Offered, m.Notes)
	}
	res, err = Analyze(Input{Points: timeline(false), Changes: add}, Config{Steady: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Changes[0]; m.GainPerNode != 800 || strings.Contains(strings.Join(m.Notes, " "), "moved") {
		t.Errorf("steady load: gain %v, notes %v; want 800 and no note", m.GainPerNode, m.Notes)
	}
}
