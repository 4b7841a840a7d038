package bottleneck

import (
	"math"
	"strings"
	"testing"
)

func TestMaps(t *testing.T) {
	// RUBBoS-like 1/A/1/D grid: x = DB servers (tier 3), y = app servers
	// (tier 1); 1/2/1/2 was not run.
	points := []ConfigPoint{
		{Config: "1/1/1/1", MaxThroughput: 500, Bottleneck: "DB_CPU"},
		{Config: "1/1/1/2", MaxThroughput: 700, Bottleneck: "APP_CPU"},
		{Config: "1/2/1/1", MaxThroughput: 520, Bottleneck: "DB_CPU"},
		{Config: "1/1/1/4", MaxThroughput: 710, Bottleneck: "APP_CPU"},
		{Config: "1/2/1/4", MaxThroughput: 900, Bottleneck: "CM_CPU"},
	}
	m, err := Maps(points, 3, 1, []string{"web", "app", "cm", "db"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Fixed != "1/*/1/*" || m.XLabel != "db" || m.YLabel != "app" {
		t.Fatalf("fixed %q labels %q %q", m.Fixed, m.XLabel, m.YLabel)
	}
	if len(m.X) != 3 || m.X[0] != 1 || m.X[1] != 2 || m.X[2] != 4 || len(m.Y) != 2 || m.Y[1] != 2 {
		t.Fatalf("axes %v %v", m.X, m.Y)
	}
	if c := m.Cells[1][2]; c.Config != "1/2/1/4" || c.MaxThroughput != 900 || c.Bottleneck != "CM_CPU" {
		t.Fatalf("cell (y=2, x=4) %+v", c)
	}
	if c := m.Cells[1][1]; c.Config != "" || !math.IsNaN(c.MaxThroughput) {
		t.Fatalf("missing cell %+v", c)
	}
	if m.MinThroughput != 500 || m.MaxThroughput != 900 || strings.Join(m.Bottlenecks, ",") != "APP_CPU,CM_CPU,DB_CPU" {
		t.Fatalf("range %v..%v legend %v", m.MinThroughput, m.MaxThroughput, m.Bottlenecks)
	}
	// Decimal sizes (vCPUs): "0.5" lies left of "1".
	m, err = Maps([]ConfigPoint{{Config: "2/1", MaxThroughput: 3}, {Config: "2/0.5", MaxThroughput: 1}, {Config: "1/0.5", MaxThroughput: 2}}, 1, 0, nil)
	if err != nil || len(m.X) != 2 || m.X[0] != 0.5 || m.X[1] != 1 || m.Y[0] != 1 || m.Cells[1][0].Config != "2/0.5" || !math.IsNaN(m.Cells[0][1].MaxThroughput) {
		t.Fatalf("decimal sizes: %+v %v", m, err)
	}
	// Node-type suffixes: "2L" is 2 servers.
	m, err = Maps([]ConfigPoint{{Config: "1/1/1/2L", MaxThroughput: 1}, {Config: "1/2/1/9L", MaxThroughput: 2}}, 3, 1, nil)
	if err != nil || m.X[1] != 9 || m.Cells[1][1].Config != "1/2/1/9L" {
		t.Fatalf("suffixes: %+v %v", m, err)
	}

	for _, c := range []struct {
		points []ConfigPoint
		x, y   int
		want   string
	}{
		{nil, 0, 1, "at least one configuration"},
		{points, 1, 1, "both 1"},
		{points, 3, 4, "has 4 tiers, so tiers 3 and 4 cannot be the map's axes"},
		{[]ConfigPoint{{Config: "1/x/1"}}, 1, 2, `tier "x" does not start with a size`},
		{[]ConfigPoint{{Config: "1/1/1/1"}, {Config: "2/1/1/1"}}, 3, 1, `configurations "1/1/1/1" and "2/1/1/1" differ in tier 0, which is not an axis`},
		{[]ConfigPoint{{Config: "1/1/1/1"}, {Config: "1/1/1/1L"}}, 3, 1, "fall into the same map cell"},
		{[]ConfigPoint{{Config: "1/1/1"}, {Config: "1/1/1/1"}}, 2, 1, "different numbers of tiers"},
	} {
		if _, err := Maps(c.points, c.x, c.y, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("error %v, want %q", err, c.want)
		}
	}
}

// FuzzMaps: configuration strings come from users; Maps must answer with a
// grid or an error, never panic, and put every point in a cell.
func FuzzMaps(f *testing.F) {
	for _, s := range []string{"1/2/1/2", "1/2/1/2L", "1//1", "/", "99999999999999999999/1", "1/-1/1"} {
		f.Add(s, "1/1/1/1", 3, 1)
	}
	f.Fuzz(func(t *testing.T, a, b string, x, y int) {
		m, err := Maps([]ConfigPoint{{Config: a, MaxThroughput: 1}, {Config: b, MaxThroughput: 2}}, x, y, nil)
		if err != nil {
			return
		}
		found := 0
		for _, row := range m.Cells {
			for _, c := range row {
				if c.Config != "" {
					found++
				}
			}
		}
		if found != 2 {
			t.Fatalf("%q %q: %d cells filled", a, b, found)
		}
	})
}
