package availability

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// timeline generates a run of one-second intervals at rate requests per
// second with a p99 of base µs, then lets a test spoil seconds; it keeps
// the per-second truth, from which each test computes its expected
// figures by its own arithmetic.
type timeline struct {
	t0     time.Time
	rate   int64
	base   float64
	ok     []int64
	failed []int64
	nf     []int64
	p99    []float64
}

func newTimeline(seconds int, rate int64, base float64) *timeline {
	tl := &timeline{t0: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), rate: rate, base: base}
	for i := 0; i < seconds; i++ {
		tl.ok = append(tl.ok, rate)
		tl.failed = append(tl.failed, 0)
		tl.nf = append(tl.nf, 0)
		tl.p99 = append(tl.p99, base)
	}
	return tl
}

func (tl *timeline) at(sec float64) time.Time {
	return tl.t0.Add(time.Duration(sec * float64(time.Second)))
}

// down makes seconds [a, b) fail every request.
func (tl *timeline) down(a, b int) {
	for i := a; i < b; i++ {
		tl.ok[i], tl.failed[i], tl.p99[i] = 0, tl.rate, math.NaN()
	}
}

// slow makes seconds [a, b) succeed with p99 = f × base.
func (tl *timeline) slow(a, b int, f float64) {
	for i := a; i < b; i++ {
		tl.p99[i] = f * tl.base
	}
}

func (tl *timeline) points() []Point {
	var out []Point
	for i := range tl.ok {
		out = append(out, Point{Start: tl.at(float64(i)), Dur: time.Second, OK: tl.ok[i], Failed: tl.failed[i], NotFound: tl.nf[i], P99: tl.p99[i]})
	}
	return out
}

// sumOver sums the truth over the seconds whose midpoint is in [a, b).
func (tl *timeline) sumOver(a, b float64) (ok, due, nf int64, n int) {
	for i := range tl.ok {
		if m := float64(i) + 0.5; m >= a && m < b {
			ok += tl.ok[i]
			due += tl.ok[i] + tl.failed[i]
			nf += tl.nf[i]
			n++
		}
	}
	return
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func nearDur(t *testing.T, what string, got, want time.Duration) {
	t.Helper()
	if d := got - want; d < -time.Microsecond || d > time.Microsecond {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// A primary killed at 20.3 s: seconds 20..24 fail, the start at 25.0
// brings it back, seconds 25..26 are slow (cold cache, 6x p99), from 27
// on all is as before.
func TestKillAndStart(t *testing.T) {
	tl := newTimeline(60, 100, 1000)
	tl.down(20, 25)
	tl.slow(25, 27, 6)
	fault, rec := 20.3, 25.0
	evs := []Event{{At: tl.at(rec), Action: ActStart, Host: "db1"}, {At: tl.at(fault), Action: ActKill, Host: "db1"}}
	res, err := Analyze(tl.points(), evs, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scenarios) != 1 {
		t.Fatalf("scenarios: %+v", res.Scenarios)
	}
	sc := res.Scenarios[0]
	if sc.Fault.Action != ActKill || sc.Recovery.Action != ActStart {
		t.Fatalf("paired %s -> %s", sc.Fault.Action, sc.Recovery.Action)
	}
	ok, due, _, n := tl.sumOver(fault, rec)
	if sc.N != n || sc.Due != due || sc.OK != ok {
		t.Errorf("window: %d intervals, %d due, %d ok; want %d, %d, %d", sc.N, sc.Due, sc.OK, n, due, ok)
	}
	near(t, "yield", sc.Yield, float64(ok)/float64(due))
	near(t, "harvest", sc.Harvest, 1) // nothing answered "not found"
	// The steady state: the seconds wholly within the 10 s before the
	// fault, 10.3 to 20.3: 11..19.
	if sc.Before.N != 9 {
		t.Errorf("steady intervals %d, want 9", sc.Before.N)
	}
	near(t, "steady throughput", sc.Before.Throughput, 100)
	near(t, "steady p99", sc.Before.P99, 1000)
	// Second 20 is the first to show it (errors), ending at 21.0.
	if !sc.Detected || sc.DetectedBy != "no success" {
		t.Errorf("detected %v by %q", sc.Detected, sc.DetectedBy)
	}
	nearDur(t, "time to detect", sc.Detect, tl.at(21).Sub(tl.at(fault)))
	// Back within the band from second 27 (25, 26 have 6x p99).
	if !sc.Recovered {
		t.Fatal("not recovered")
	}
	nearDur(t, "MTTR", sc.MTTR, tl.at(27).Sub(tl.at(fault)))
	near(t, "degraded capacity", sc.Degraded, float64(ok)/float64(n)/100)
	// One failure over the run: downtime is the MTTR.
	nearDur(t, "downtime", res.Downtime, sc.MTTR)
	near(t, "availability", res.Availability, (60-sc.MTTR.Seconds())/60)
	near(t, "request availability", res.Requests, float64(60*100-5*100)/(60*100))
	if res.Failures != 1 || res.MTTF != res.Uptime {
		t.Errorf("failures %d, MTTF %v, uptime %v", res.Failures, res.MTTF, res.Uptime)
	}
	if a := res.Timeline[22].Availability; a != 0 {
		t.Errorf("availability of second 22 = %v, want 0", a)
	}
}

// Three kills, each followed by a start: MTTF and MTTR over the run.
func TestRepeatedFaults(t *testing.T) {
	tl := newTimeline(100, 50, 2000)
	var evs []Event
	var downtime float64
	for _, f := range []struct {
		at       float64
		outage   int
		recovery float64
	}{{15.5, 3, 18.0}, {45.2, 6, 50.0}, {75.7, 2, 77.0}} {
		a := int(f.at)
		tl.down(a, a+f.outage)
		evs = append(evs, Event{At: tl.at(f.at), Action: ActKill, Host: "db1"}, Event{At: tl.at(f.recovery), Action: ActStart, Host: "db1"})
		downtime += float64(a+f.outage) - f.at // back from the first good second
	}
	res, err := Analyze(tl.points(), evs, Config{Stable: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failures != 3 {
		t.Fatalf("failures %d, want 3: %+v", res.Failures, res.Scenarios)
	}
	near(t, "downtime", res.Downtime.Seconds(), downtime)
	uptime := 100 - downtime
	near(t, "MTTF", res.MTTF.Seconds(), uptime/3)
	near(t, "MTTR", res.MTTR.Seconds(), downtime/3)
	near(t, "availability", res.Availability, uptime/100)
	near(t, "MTTF/(MTTF+MTTR)", res.Availability, (uptime/3)/(uptime/3+downtime/3))
}

// A p99 spike without errors is detected by p99 only past k × before;
// reads answered "not found" lower the harvest.
func TestDetectByP99AndHarvest(t *testing.T) {
	tl := newTimeline(40, 200, 500)
	tl.slow(20, 22, 2) // 2x: within k = 3, not a detection
	tl.slow(22, 25, 8)
	for i := 20; i < 25; i++ {
		tl.ok[i], tl.failed[i], tl.nf[i] = 150, 0, 0
	}
	// not-found reads count as failed requests that were answered
	tl.failed[23], tl.nf[23] = 50, 50
	tl.ok[23] = 150
	evs := []Event{{At: tl.at(20), Action: ActStop, Host: "db2"}, {At: tl.at(25), Action: ActContinue, Host: "db2"}}
	res, err := Analyze(tl.points(), evs, Config{})
	if err != nil {
		t.Fatal(err)
	}
	sc := res.Scenarios[0]
	// second 20 has 150 of 200: throughput only, no errors, 2x p99: not
	// shown; second 22's p99 is 8x.
	if !sc.Detected || sc.DetectedBy != "p99" {
		t.Fatalf("detected %v by %q", sc.Detected, sc.DetectedBy)
	}
	nearDur(t, "time to detect", sc.Detect, 3*time.Second)
	ok, _, nf, _ := tl.sumOver(20, 25)
	near(t, "harvest", sc.Harvest, float64(ok)/float64(ok+nf))
	nearDur(t, "MTTR", sc.MTTR, 5*time.Second)
}

func TestUndetectedAndUnrecovered(t *testing.T) {
	tl := newTimeline(30, 100, 1000)
	tl.down(20, 30)
	evs := []Event{
		{At: tl.at(12), Action: ActLinkDown, Host: "db3"}, // a replica nobody reads from
		{At: tl.at(15), Action: ActLinkUp, Host: "db3"},
		{At: tl.at(20), Action: ActKill, Host: "db1"}, // never started again
	}
	res, err := Analyze(tl.points(), evs, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scenarios) != 2 {
		t.Fatalf("scenarios: %+v", res.Scenarios)
	}
	if sc := res.Scenarios[0]; sc.Detected || sc.MTTR != 0 {
		t.Errorf("a fault with no effect: detected %v, MTTR %v", sc.Detected, sc.MTTR)
	}
	sc := res.Scenarios[1]
	if !sc.Detected || sc.Recovered || sc.Recovery.Action != "" {
		t.Errorf("kill without start: detected %v, recovered %v, recovery %q", sc.Detected, sc.Recovered, sc.Recovery.Action)
	}
	nearDur(t, "MTTR to the end", sc.MTTR, 10*time.Second)
	near(t, "yield", sc.Yield, 0)
	near(t, "availability", res.Availability, 20.0/30)
}

func TestPairing(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	fs, unpaired := Pair([]Event{
		{At: at(1), Action: ActKill, Host: "db1"},
		{At: at(2), Action: ActStop, Host: "db2"},
		{At: at(3), Action: ActStart, Host: "db2"}, // db2 was stopped, not killed
		{At: at(4), Action: ActContinue, Host: "db2"},
		{At: at(5), Action: ActPromote, Host: "db3"}, // ends the kill of db1
		{At: at(6), Action: ActPartition},
		{At: at(7), Action: ActHeal},
		{At: at(8), Action: "set_cpu", Host: "db1"},
		{At: at(9), Action: ActKill, Host: "db4", Error: "no such host"},
		{At: at(10), Action: ActStall, Host: "db1"},
		{At: at(11), Action: ActResume, Host: "db2"}, // another host's volume
		{At: at(12), Action: ActResume, Host: "db1"},
	})
	want := []string{"kill db1 -> promote db3", "stop db2 -> continue db2", "partition  -> heal ", "stall_disk db1 -> resume_disk db1"}
	if len(fs) != len(want) {
		t.Fatalf("failures: %+v", fs)
	}
	for i, f := range fs {
		got := f.Fault.Action + " " + f.Fault.Host + " -> " + f.Recovery.Action + " " + f.Recovery.Host
		if got != want[i] {
			t.Errorf("failure %d: %s, want %s", i, got, want[i])
		}
	}
	if len(unpaired) != 2 || unpaired[0].Action != ActStart || unpaired[1].Action != ActResume || unpaired[1].Host != "db2" {
		t.Errorf("unpaired: %+v", unpaired)
	}
}

func TestNoSteadyStateAndBadConfig(t *testing.T) {
	tl := newTimeline(10, 10, 100)
	tl.down(0, 3)
	res, err := Analyze(tl.points(), []Event{{At: tl.at(0), Action: ActKill, Host: "db1"}}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if sc := res.Scenarios[0]; sc.Problem == "" || sc.Detected {
		t.Errorf("a fault at the start: problem %q, detected %v", sc.Problem, sc.Detected)
	}
	for _, c := range []Config{{Tolerance: 1.5}, {Stable: -1}, {DetectFactor: 0.5}, {Steady: -time.Second}} {
		if _, err := Analyze(tl.points(), nil, c); err == nil || !strings.HasPrefix(err.Error(), "availability: ") {
			t.Errorf("config %+v: err %v", c, err)
		}
	}
	if _, err := Analyze(nil, nil, Config{}); err == nil {
		t.Error("no intervals: no error")
	}
}

// The example's shape: a partition at 10 s that the clients do not see
// (an async replica cut off), a kill at 15.01 s (seconds 15..17 fail), a
// heal at 17 s and a promote at 18 s (back from 18). The partition has
// no visible effect (the kill's failing second 15 has its midpoint after
// the kill, so it shows the kill, not the partition); the kill is judged
// against the steady state before it. Then the same with a partition the
// writes do see (sync: second 11..14 half failing): the kill comes during
// that outage and takes its steady state.
func TestOverlappingFaults(t *testing.T) {
	evs := func(tl *timeline) []Event {
		return []Event{
			{At: tl.at(10), Action: ActPartition}, {At: tl.at(15.01), Action: ActKill, Host: "pg1"},
			{At: tl.at(17), Action: ActHeal}, {At: tl.at(18), Action: ActPromote, Host: "pg2"},
		}
	}
	tl := newTimeline(40, 100, 1000)
	tl.down(15, 18)
	res, err := Analyze(tl.points(), evs(tl), Config{})
	if err != nil {
		t.Fatal(err)
	}
	part, kill := res.Scenarios[0], res.Scenarios[1]
	if part.Detected || kill.Problem != "" || !kill.Detected || kill.Recovery.Action != ActPromote {
		t.Fatalf("partition detected %v; kill %+v", part.Detected, kill)
	}
	nearDur(t, "kill detect", kill.Detect, tl.at(16).Sub(tl.at(15.01)))
	nearDur(t, "kill MTTR", kill.MTTR, tl.at(18).Sub(tl.at(15.01)))
	if res.Failures != 1 {
		t.Errorf("failures %d, want 1", res.Failures)
	}

	tl = newTimeline(40, 100, 1000)
	for i := 10; i < 15; i++ {
		tl.ok[i], tl.failed[i] = 50, 50
	}
	tl.down(15, 18)
	res, err = Analyze(tl.points(), evs(tl), Config{})
	if err != nil {
		t.Fatal(err)
	}
	part, kill = res.Scenarios[0], res.Scenarios[1]
	if !part.Detected || kill.Problem != "" || kill.Before.N != part.Before.N || kill.Before.Throughput != 100 {
		t.Fatalf("partition %+v; kill %+v", part, kill)
	}
	nearDur(t, "partition MTTR", part.MTTR, 8*time.Second)
	nearDur(t, "downtime (the union)", res.Downtime, 8*time.Second)
}

// A service back at 25.0 whose per-second p99 then wobbles around the
// band: seconds 26 and 28 at 1.3x the steady p99 (above 1.2x), 25, 27
// and 29 at 1x. The recovery is judged on the first of the 5 seconds and
// their median, so it starts at 25 (MTTR 4.7 s from the fault at 20.3);
// each second in the band would have put it at 29. A first second out of
// the band still delays it: with second 25 at 1.3x it starts at 27,
// whose window 27..31 has a median of 1x.
func TestRecoveryToleratesAWobblingP99(t *testing.T) {
	for _, c := range []struct {
		slow []int
		want float64
	}{{[]int{26, 28}, 25}, {[]int{25, 26, 28}, 27}} {
		tl := newTimeline(60, 20, 1900)
		tl.down(20, 25)
		for _, s := range c.slow {
			tl.slow(s, s+1, 1.3)
		}
		evs := []Event{{At: tl.at(20.3), Action: ActKill, Host: "db1"}, {At: tl.at(25), Action: ActStart, Host: "db1"}}
		res, err := Analyze(tl.points(), evs, Config{})
		if err != nil {
			t.Fatal(err)
		}
		if sc := res.Scenarios[0]; !sc.Recovered {
			t.Errorf("slow seconds %v: not recovered", c.slow)
		} else {
			nearDur(t, fmt.Sprintf("MTTR with slow seconds %v", c.slow), sc.MTTR, tl.at(c.want).Sub(tl.at(20.3)))
		}
	}
}
