package empirical

import (
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/controller/ods"
	"github.com/headroom-dev/headroom/internal/controller/sensor"
)

// The measured double scale-up (docs/controller.md, "Measured"), made
// synthetic: a 5 s period and window, 10 requests a second, every request
// at 700 ms (over the sensitive 0.5 s) in seconds 0..7 and at 100 ms from
// second 8 on. The first node is asked for at 5 s and takes effect at
// 6.5 s; seconds 5..7 are the backlog it is draining.
const (
	perSecond = 10
	slowUntil = 8 // seconds before this one are slow
)

var effectLag = 1500 * time.Millisecond

func drainingSeries(t *testing.T) []sensor.Second {
	t.Helper()
	var out []sensor.Second
	for i := 0; i < 40; i++ {
		h := hdrhistogram.New(1, 3_600_000_000, 3)
		v := int64(100_000)
		if i < slowUntil {
			v = 700_000
		}
		for j := 0; j < perSecond; j++ {
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, sensor.Second{Start: t0.Add(time.Duration(i) * time.Second), Hist: h})
	}
	return out
}

// compressed is the example's controller: the seed's, with a 5 s period
// and window, and the given cool-down.
func compressed(cooldown time.Duration) Config {
	c := Default()
	c.Period, c.Horizon, c.Sensor.Window, c.Cooldown = 5*time.Second, 5*time.Second, 5*time.Second, cooldown
	return c
}

// run plays the decisions at 5, 10, 15 and 20 s against the series on an
// empty ODS (so the horizontal model acts), carrying each +1 or −1 out
// with effectLag, and returns the decisions and the node counts after
// each. The tier's CPU stays at 60%, so the bound keeps it from shrinking.
func run(t *testing.T, c Config) ([]Decision, []int) {
	secs := drainingSeries(t)
	nodes := 1
	var last time.Time
	var ds []Decision
	var sizes []int
	for k := 1; k <= 4; k++ {
		now := t0.Add(time.Duration(5*k) * time.Second)
		var seen []sensor.Second
		for _, s := range secs {
			if s.Start.Before(now) {
				seen = append(seen, s)
			}
		}
		d := c.Decide(ods.New(), Input{Now: now, Seconds: seen, History: flat(10), Current: "app", CurrentCost: float64(nodes),
			Tiers: []Tier{{Name: "app", Nodes: nodes, CPU: 0.6, Min: 1, Max: 4}}, LastAction: last})
		if d.Action == Fallback {
			nodes += d.Delta
			last = now.Add(effectLag)
		}
		ds = append(ds, d)
		sizes = append(sizes, nodes)
	}
	return ds, sizes
}

// fastShare is the share of the series' requests within 0.5 s over the
// seconds starting in [from, to): computed from the series' definition,
// not through the sensor.
func fastShare(from, to int) float64 {
	fast := 0
	for i := from; i < to; i++ {
		if i >= slowUntil {
			fast++
		}
	}
	return float64(fast) / float64(to-from)
}

func TestNoCooldownScalesUpTwiceOnADrainingBacklog(t *testing.T) {
	c := compressed(0)
	// The second decision's window, seconds 5..9, holds 3 slow seconds of
	// backlog: 40% within 0.5 s, under the 90% goal.
	if share := fastShare(5, 10); share >= c.Sensor.Goal {
		t.Fatalf("the synthetic backlog does not violate the goal (%v); the test is wrong", share)
	}
	ds, sizes := run(t, c)
	if ds[0].Action != Fallback || ds[0].Delta != 1 || ds[1].Action != Fallback || ds[1].Delta != 1 {
		t.Fatalf("want two scale-ups in a row without a cool-down; got %s %+d (%s), %s %+d (%s)",
			ds[0].Action, ds[0].Delta, ds[0].Reason, ds[1].Action, ds[1].Delta, ds[1].Reason)
	}
	if got, want := ds[1].Reading.Sensitive, fastShare(5, 10); got != want {
		t.Errorf("second reading: sensitive %v, want %v", got, want)
	}
	if sizes[3] != 3 {
		t.Errorf("tier sizes %v, want 3 nodes at the end", sizes)
	}
	for _, d := range ds {
		if strings.Contains(d.Reason, "cooling down") {
			t.Errorf("no cool-down was configured, yet: %s", d.Reason)
		}
	}
}

func TestCooldownHoldsAfterAnAction(t *testing.T) {
	cooldown := 10 * time.Second
	c := compressed(cooldown)
	ds, sizes := run(t, c)
	ups := 0
	for _, d := range ds {
		if d.Action == Fallback && d.Delta == 1 {
			ups++
		}
	}
	if ups != 1 || sizes[3] != 2 {
		t.Fatalf("want one scale-up, to 2 nodes; got %d, sizes %v", ups, sizes)
	}
	// The action took effect at 6.5 s; the cool-down lasts until 16.5 s,
	// so the decisions at 10 and 15 s hold and say so.
	until := t0.Add(5*time.Second + effectLag + cooldown)
	for _, d := range ds[1:3] {
		if d.Action != Hold || !strings.Contains(d.Reason, "cooling down until "+clock(until)) || !strings.Contains(d.Reason, "cooldown 10s") {
			t.Errorf("at %v: got %s (%s); want a hold cooling down until %s", d.At.Sub(t0), d.Action, d.Reason, clock(until))
		}
	}
	// At 10 s the sensor judges only seconds 7..9 (those starting after
	// 6.5 s): one slow of three.
	if got, want := ds[1].Reading.Sensitive, fastShare(7, 10); got != want || ds[1].Reading.Requests != 3*perSecond {
		t.Errorf("reading at 10 s: sensitive %v over %d requests, want %v over %d", got, ds[1].Reading.Requests, want, 3*perSecond)
	}
	// At 20 s the cool-down is over and every request is fast: the
	// scale-down path, held by the CPU bound (60% on 2 nodes is 120% on 1).
	if ds[3].Path != sensor.ScaleDown || ds[3].Action != Hold || strings.Contains(ds[3].Reason, "cooling down") {
		t.Errorf("at 20 s: got %s %s (%s)", ds[3].Path, ds[3].Action, ds[3].Reason)
	}
}

func TestWindowRestartsAtTheLastAction(t *testing.T) {
	secs := drainingSeries(t)
	// A 30 s window at 20 s reaches back to second 0: eight slow seconds
	// of twenty, 60% within 0.5 s.
	now := t0.Add(20 * time.Second)
	var seen []sensor.Second
	for _, s := range secs {
		if s.Start.Before(now) {
			seen = append(seen, s)
		}
	}
	c := Default()
	in := Input{Now: now, Seconds: seen, History: flat(10), Current: "app", CurrentCost: 1,
		Tiers: []Tier{{Name: "app", Nodes: 1, CPU: 0.6, Min: 1, Max: 4}}, LastAction: t0.Add(8 * time.Second)}
	if d := c.Decide(ods.New(), in); d.Path != sensor.ScaleUp || d.Reading.Sensitive != fastShare(0, 20) {
		t.Fatalf("without a cool-down the old violation counts: got %s at %v (%s)", d.Path, d.Reading.Sensitive, d.Reason)
	}
	// With a cool-down of 2 s, over by 20 s, the window starts at the
	// action (8 s): the violation lay entirely before it.
	c.Cooldown = 2 * time.Second
	d := c.Decide(ods.New(), in)
	if d.Path != sensor.ScaleDown || d.Reading.Sensitive != fastShare(8, 20) || d.Reading.Requests != 12*perSecond ||
		!d.Reading.From.Equal(t0.Add(8*time.Second)) || strings.Contains(d.Reason, "cooling down") {
		t.Fatalf("got %s sensitive %v over %d from %v (%s); want scale-down over the 12 s since the action",
			d.Path, d.Reading.Sensitive, d.Reading.Requests, d.Reading.From.Sub(t0), d.Reason)
	}
	// Nothing measured since the action: hold, and say why.
	in.LastAction, in.Now = now, now.Add(5*time.Second)
	if d := c.Decide(ods.New(), in); d.Action != Hold || d.Reason != "no requests in the sensor window since the last action" {
		t.Fatalf("got %s (%s)", d.Action, d.Reason)
	}
}

func TestCoolingDown(t *testing.T) {
	c := Default()
	if _, ok := c.CoolingDown(t0, t0); ok {
		t.Fatal("without a cool-down the controller never cools down")
	}
	c.Cooldown = 10 * time.Second
	if _, ok := c.CoolingDown(t0, time.Time{}); ok {
		t.Fatal("before any action there is nothing to cool down from")
	}
	if until, ok := c.CoolingDown(t0.Add(9*time.Second), t0); !ok || !until.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("9 s after: got %v %v", until, ok)
	}
	if _, ok := c.CoolingDown(t0.Add(10*time.Second), t0); ok {
		t.Fatal("the cool-down ends when its time has passed")
	}
	c.Cooldown = -time.Second
	if err := c.Check(); err == nil || !strings.Contains(err.Error(), "cool-down") {
		t.Fatalf("a negative cool-down: %v", err)
	}
}
