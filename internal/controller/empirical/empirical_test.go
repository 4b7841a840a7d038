package empirical

import (
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/controller/ods"
	"github.com/headroom-dev/headroom/internal/controller/sensor"
)

var t0 = time.Unix(1_700_000_000, 0)

// window is 30 s of responses: fast at 100 ms, the rest at 700 ms (within
// the normal 1 s, over the sensitive 0.5 s).
func window(t *testing.T, now time.Time, fast, slow int) []sensor.Second {
	var out []sensor.Second
	for i := 30; i > 0; i-- {
		h := hdrhistogram.New(1, 3_600_000_000, 3)
		for j := 0; j < fast; j++ {
			h.RecordValue(100_000)
		}
		for j := 0; j < slow; j++ {
			h.RecordValue(700_000)
		}
		out = append(out, sensor.Second{Start: now.Add(-time.Duration(i) * time.Second), Hist: h})
	}
	return out
}

func flat(read float64) map[string][]float64 {
	s := make([]float64, 120)
	for i := range s {
		s[i] = read
	}
	return map[string][]float64{"read": s}
}

func records(cfg string, cost float64, n int, read, sla float64) []ods.Record {
	var out []ods.Record
	for i := 0; i < n; i++ {
		out = append(out, ods.Record{Time: t0.Add(-time.Duration(i) * time.Second), Config: cfg, Cost: cost,
			Sensitive: sla, Normal: sla, Throughput: ods.Vector{"read": read}})
	}
	return out
}

// The synthetic ODS: 1/1 ($2/h) serves 100 req/s well and was seen for
// 10 s at 300 poorly; 2/1 ($3/h) and 2/2 ($4/h) serve 300 well. With
// alpha 0 a record that served more than the forecast is at distance 0,
// so at 100 req/s 1/1's group holds all 50 records (mean SLA 92%:
// eligible); at 300 only the 10 poor ones (support 10: rejected).
func store() *ods.Store {
	s := ods.New()
	s.Append(records("1/1", 2, 40, 100, 1)...)
	s.Append(records("1/1", 2, 10, 300, 0.6)...)
	s.Append(records("2/1", 3, 40, 300, 0.95)...)
	s.Append(records("2/2", 4, 40, 300, 0.99)...)
	return s
}

var tiers = []Tier{{Name: "app", Nodes: 1, CPU: 0.9, Min: 1, Max: 4}, {Name: "db", Nodes: 1, CPU: 0.4, Min: 1, Max: 4}}

func TestDecide(t *testing.T) {
	c := Default()
	now := t0.Add(time.Hour)
	cases := []struct {
		name       string
		st         *ods.Store
		fast, slow int
		read       float64
		current    string
		cost       float64
		tiers      []Tier
		action     Action
		config     string
		tier       string
		delta      int
		reason     string
	}{
		// 20% over 0.5 s: up; forecast 300; 1/1 rejected (support 10), 2/1 cheapest eligible.
		{"up via ODS", store(), 8, 2, 300, "1/1", 2, tiers, Configure, "2/1", "", 0, "ODS chose 2/1"},
		// All within 0.5 s at 100 req/s on 2/2: down to 1/1, the cheapest that served 100.
		{"down via ODS", store(), 10, 0, 100, "2/2", 4, tiers, Configure, "1/1", "", 0, "ODS chose 1/1"},
		// 95% within 0.5 s: hold.
		{"hold", store(), 19, 1, 300, "1/1", 2, tiers, Hold, "", "", 0, "neither violated"},
		// Up at 300 on 2/2 ($4): nothing eligible is dearer → horizontal model, app has the highest CPU.
		{"up, nothing dearer", store(), 5, 5, 300, "2/2", 4, tiers, Fallback, "", "app", 1, "no eligible configuration dearer"},
		// Empty ODS, down: every tier is at its minimum of 1 node → hold.
		{"down, nothing can shrink", ods.New(), 10, 0, 100, "1/1", 2, tiers, Hold, "", "", 0, "no tier can shrink"},
		// Empty ODS, down with 2 db nodes: db (lowest CPU) loses one.
		{"down fallback", ods.New(), 10, 0, 100, "1/2", 3, []Tier{{Name: "app", Nodes: 2, CPU: 0.5, Min: 1}, {Name: "db", Nodes: 2, CPU: 0.1, Min: 1}},
			Fallback, "", "db", -1, "ODS has no configuration"},
		// Empty ODS, down: app at 20% on 2 nodes would run at 40% on one,
		// below the 50% bound, so it shrinks; db (30% on 2) would reach 60%.
		{"down fallback skips a tier that would run hot", ods.New(), 10, 0, 100, "2/2", 4, []Tier{{Name: "app", Nodes: 2, CPU: 0.2, Min: 1}, {Name: "db", Nodes: 2, CPU: 0.3, Min: 1}},
			Fallback, "", "app", -1, "tier app"},
		{"down fallback holds a busy tier", ods.New(), 10, 0, 100, "2/1", 3, []Tier{{Name: "app", Nodes: 2, CPU: 0.3, Min: 1}, {Name: "db", Nodes: 1, CPU: 0.1, Min: 1}},
			Hold, "", "", 0, "would reach 50% or more"},
		// Empty ODS, up with app at its max: db grows.
		{"up fallback past a full tier", ods.New(), 0, 10, 500, "4/1", 5, []Tier{{Name: "app", Nodes: 4, CPU: 0.95, Max: 4}, {Name: "db", Nodes: 1, CPU: 0.5}},
			Fallback, "", "db", 1, "tier db"},
	}
	for _, tc := range cases {
		d := c.Decide(tc.st, Input{Now: now, Seconds: window(t, now, tc.fast, tc.slow), History: flat(tc.read),
			Current: tc.current, CurrentCost: tc.cost, Tiers: tc.tiers})
		if d.Action != tc.action || d.Config != tc.config || d.Tier != tc.tier || d.Delta != tc.delta || !strings.Contains(d.Reason, tc.reason) {
			t.Errorf("%s: got %s config %q tier %q %+d (%s); want %s %q %q %+d (%q)", tc.name, d.Action, d.Config, d.Tier, d.Delta, d.Reason,
				tc.action, tc.config, tc.tier, tc.delta, tc.reason)
		}
		if d.Action != Hold || d.Path != sensor.Hold {
			if got := d.Forecast["read"]; got != tc.read {
				t.Errorf("%s: forecast %v, want the flat history's %v", tc.name, got, tc.read)
			}
		}
	}
}

func TestDecideFollowsASeasonalForecast(t *testing.T) {
	// History rising toward 300 within the horizon: a 240 s sine whose
	// peak of 300 comes 20 s after now. The ODS is asked about the peak,
	// so the scale-up goes to 2/1 even though the last second saw 200.
	h := make([]float64, 240)
	for i := range h {
		x := float64(i - 259)
		h[i] = 200 + 100*cosTurns(x/240)
	}
	now := t0.Add(time.Hour)
	d := Default().Decide(store(), Input{Now: now, Seconds: window(t, now, 5, 5), History: map[string][]float64{"read": h},
		Current: "1/1", CurrentCost: 2, Tiers: tiers})
	if d.Action != Configure || d.Config != "2/1" || d.Forecast["read"] < 299 {
		t.Fatalf("got %s %q forecast %v (%s)", d.Action, d.Config, d.Forecast, d.Reason)
	}
}

func TestCheck(t *testing.T) {
	if err := Default().Check(); err != nil {
		t.Fatal(err)
	}
	c := Default()
	c.Query.Radius = 0
	if c.Check() == nil {
		t.Fatal("a zero radius must be refused")
	}
}
