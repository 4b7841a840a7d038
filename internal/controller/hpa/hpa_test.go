package hpa

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Unix(1_700_000_000, 0)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

type step struct {
	at          float64 // seconds after t0
	current     int
	utilisation float64
	want        int
	reason      string // a word the reason must contain ("" = any)
}

func run(t *testing.T, name string, c Config, steps []step) {
	t.Helper()
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		d := a.Decide(at(s.at), s.current, s.utilisation)
		if d.Desired != s.want || !strings.Contains(d.Reason, s.reason) {
			t.Errorf("%s step %d (t=%vs, %d replicas at %.0f%%): desired %d (%s), want %d (%q)",
				name, i, s.at, s.current, 100*s.utilisation, d.Desired, d.Reason, s.want, s.reason)
		}
	}
}

func TestDocumentedBehaviour(t *testing.T) {
	def := Default() // target 60%, min 1, max 10

	// desired = ceil(current × utilisation / target): 2 × 90/60 = 3.
	run(t, "ratio", def, []step{{0, 2, 0.9, 3, "ceil"}})

	// 65/60 = 1.083 is within the 0.1 tolerance: no change; 70/60 is not.
	run(t, "tolerance", def, []step{{0, 2, 0.65, 2, "tolerance"}, {1, 2, 0.70, 3, "ceil"}})

	// 37/60 = 0.62 is outside the tolerance, but ceil(1 × 0.62) keeps one
	// replica; the reason must not call it within the tolerance.
	run(t, "ceiling keeps the count", def, []step{{0, 1, 0.37, 1, "ceil(1 × 0.62) = 1: no change"}})

	// Scale-up policies (Max of +100% and +4 pods per 15 s): from 2,
	// the limit is max(4, 6) = 6; 5 s later the period still started at 2,
	// so 6 holds; at 20 s the period starts at 6: max(12, 10) = 12, capped
	// at max replicas 10.
	run(t, "scale-up rate", def, []step{
		{0, 2, 6.0, 6, "scale-up policies"},
		{5, 6, 6.0, 6, ""},
		{20, 6, 6.0, 10, "max replicas"},
	})

	// Scale-down stabilisation (300 s): a drop to 15% at 60 s recommends 1,
	// but the highest recommendation of the last 300 s is 4 (at 0 s); once
	// it leaves the window (at 301 s) the scale-down happens, and 100% per
	// 15 s lets it go all the way to min replicas.
	run(t, "stabilisation", def, []step{
		{0, 4, 0.6, 4, "tolerance"},
		{60, 4, 0.15, 4, "stabilised"},
		{200, 4, 0.15, 4, "stabilised"},
		{301, 4, 0.15, 1, ""},
	})

	// Time compression 10: the same story ten times faster.
	fast := Default()
	fast.Compression = 10
	run(t, "compressed", fast, []step{
		{0, 4, 0.6, 4, ""},
		{6, 4, 0.15, 4, "stabilised"},
		{30.1, 4, 0.15, 1, ""},
	})

	// Scale-down policy of 1 pod per 60 s, no stabilisation: 5 → 4, held
	// at 4 within the period (the period started at 5), then 3.
	slow := Default()
	slow.Down = Rules{Select: "Max", Policies: []Policy{{Type: "Pods", Value: 1, Period: 60 * time.Second}}}
	run(t, "scale-down rate", slow, []step{
		{0, 5, 0.1, 4, "scale-down policies"},
		{30, 4, 0.1, 4, "scale-down policies"},
		{61, 4, 0.1, 3, "scale-down policies"},
	})

	// Select Min takes the policy allowing the least change: +1 pod
	// rather than +100%.
	minSel := Default()
	minSel.Up = Rules{Select: "Min", Policies: []Policy{{Type: "Percent", Value: 100, Period: 15 * time.Second}, {Type: "Pods", Value: 1, Period: 15 * time.Second}}}
	run(t, "select min", minSel, []step{{0, 4, 1.2, 5, "scale-up policies"}})

	// Disabled scale-down never removes a replica.
	off := Default()
	off.Down = Rules{Select: "Disabled"}
	run(t, "disabled", off, []step{{0, 5, 0.05, 5, ""}})

	// min replicas bound a scale-down: 3 × 10/60 → 1, raised to 2.
	floor := Default()
	floor.Min = 2
	floor.Down.Stabilization = 0
	run(t, "min replicas", floor, []step{{0, 3, 0.1, 2, "min replicas"}})
}

func TestCheck(t *testing.T) {
	if err := Default().Check(); err != nil {
		t.Fatal(err)
	}
	bad := []func(*Config){
		func(c *Config) { c.Min = 0 },
		func(c *Config) { c.Max = 0 },
		func(c *Config) { c.Target = 0 },
		func(c *Config) { c.Compression = 0 },
		func(c *Config) { c.SyncPeriod = 0 },
		func(c *Config) { c.Up.Select = "Most" },
		func(c *Config) { c.Down.Policies = []Policy{{Type: "Nodes", Value: 1, Period: time.Second}} },
	}
	for i, f := range bad {
		c := Default()
		f(&c)
		if _, err := New(c); err == nil {
			t.Errorf("case %d: %+v should be refused", i, c)
		}
	}
}

// The HPA decides every sync period (Kubernetes: 15 s), compressed like
// its windows: a trace played 6 times faster has it decide every 2.5 s.
func TestIntervalIsTheCompressedSyncPeriod(t *testing.T) {
	c := Default()
	if c.Interval() != 15*time.Second {
		t.Fatalf("default interval %v, want 15s", c.Interval())
	}
	c.Compression = 6
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if a.Interval() != 2500*time.Millisecond {
		t.Fatalf("interval at compression 6: %v, want 2.5s", a.Interval())
	}
}
