package bottleneck

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/bottleneck/bottlenecktest"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// The designed causes of bottlenecktest.TwoTiers are found, each
// treatment with its own hosts' capacities and settings, and the maps lay
// the treatments out by their facts' axis values.
func TestFromResultsTwoTiers(t *testing.T) {
	a, err := FromResults(bottlenecktest.TwoTiers(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Treatments) != 2 || a.Campaign != "syn" || len(a.Notes) != 0 {
		t.Fatalf("%d treatments, notes %q", len(a.Treatments), a.Notes)
	}
	a1, a2 := a.Treatments[0], a.Treatments[1]
	for _, c := range []struct {
		t       *Treatment
		level   float64
		finding string
	}{
		{a1, 10, "no bottleneck: no resource was above 95% utilisation in more than 1% of its 1s intervals (busiest: app/cpu, f_R = 0.00, mean utilisation 31%)"},
		{a1, 30, "single bottleneck: app/cpu, critically saturated in 100% of 1s intervals (f_R = 1.00, mean utilisation 99%)"},
		{a1, 40, "single bottleneck: app/cpu, critically saturated in 100% of 1s intervals (f_R = 1.00, mean utilisation 100%)"},
		{a2, 30, "no bottleneck: no resource was above 95% utilisation in more than 1% of its 1s intervals (busiest: db1/cpu, f_R = 0.00, mean utilisation 76%)"},
		{a2, 40, "single bottleneck: db1/cpu, critically saturated in 100% of 1s intervals (f_R = 1.00, mean utilisation 100%)"},
	} {
		for _, r := range c.t.Runs {
			if r.Run.Level == c.level && r.Run.Repetition == 2 && r.Result.Finding != c.finding {
				t.Errorf("%s level %v: %q, want %q", c.t.Name, c.level, r.Result.Finding, c.finding)
			}
		}
	}
	// The link capacities came from the hosts' limits: 1e4 x level bytes/s
	// is 6.4% of 6.25e6 at level 40. a2's runs see only its own lab's
	// hosts: no capacity of a1's "app" is left over.
	for _, rs := range a1.Runs[len(a1.Runs)-1].Result.Resources {
		if rs.Resource == "app/net:eth0" && math.Abs(rs.Mean-6.4) > 1e-9 {
			t.Errorf("app/net:eth0 at %v%%, want 6.4", rs.Mean)
		}
		if strings.HasPrefix(rs.Resource, "vm/") {
			t.Errorf("the machine %s was judged though hosts leaves it out", rs.Resource)
		}
	}
	for _, r := range a2.Runs {
		for _, n := range r.Result.Notes {
			if strings.HasPrefix(n, "app/") {
				t.Errorf("a2 level %v: note %q", r.Run.Level, n)
			}
		}
	}
	if strings.Join(a1.Resources, ",") != "app/cpu" || strings.Join(a2.Resources, ",") != "db1/cpu" {
		t.Fatalf("bottleneck resources %v %v", a1.Resources, a2.Resources)
	}
	if len(a1.Density) != 1 || a1.Density[0].Resource != "app/cpu" || len(a1.Density[0].Levels) != 4 || a1.Density[0].N[0] != 20 {
		t.Fatalf("density %+v", a1.Density)
	}
	if a1.MaxThroughput != 31 || a1.MaxLevel != 40 || a1.MaxLabel != "APP_CPU" || a2.MaxThroughput != 35 || a2.MaxLabel != "DB_CPU" {
		t.Fatalf("maxima %v@%v %s, %v %s", a1.MaxThroughput, a1.MaxLevel, a1.MaxLabel, a2.MaxThroughput, a2.MaxLabel)
	}
	iv := a1.Intervention
	if iv == nil || !iv.Found || iv.WStar != 40 || len(iv.Resources) == 0 || iv.Resources[0].Resource != "APP_CPU" || !iv.Config.StrictRules {
		t.Fatalf("intervention %+v (%s)", iv, a1.InterventionNote)
	}
	if cfg := a1.Config(); cfg.Lambda != time.Second || cfg.Alpha != DefaultAlpha || len(cfg.Hosts) != 4 {
		t.Errorf("config %+v", cfg)
	}
	m := a.Map
	if m == nil || m.Err != "" || len(m.Map.X) != 1 || m.Map.X[0] != 0.5 || len(m.Map.Y) != 2 {
		t.Fatalf("map %+v", m)
	}
	if c := m.Map.Cells[1][0]; c.Config != "0.5/2" || c.MaxThroughput != 35 || c.Bottleneck != "DB_CPU" || m.Treatment[c.Config] != "a2" {
		t.Fatalf("cell %+v", c)
	}
}

// Settings come from the treatment's facts; zero fields take the
// defaults.
func TestSettingsOf(t *testing.T) {
	off := false
	set := SettingsOf(results.Treatment{SLO: &results.SLO{Percentile: 99, Threshold: 50 * time.Millisecond, Op: "read"},
		Analysis: results.Analysis{Bottleneck: results.Bottleneck{Alpha: 90, PerCore: true, SLOFloor: 80, StrictRules: &off}}})
	if set.Classify.Lambda != DefaultLambda || set.Classify.Alpha != 90 || !set.Classify.PerCore || set.Intervention.Floor != 80 || set.Intervention.StrictRules {
		t.Errorf("settings %+v", set)
	}
	if set.SLO == nil || set.SLO.Percentile != 99 || set.SLO.Threshold != 50*time.Millisecond || set.SLO.Op != "read" {
		t.Errorf("SLO %+v", set.SLO)
	}
	if set := SettingsOf(results.Treatment{}); set.SLO != nil || !set.Intervention.StrictRules || set.Map != nil {
		t.Errorf("defaults %+v", set)
	}
}

// Without treatments there are no maps; without an SLO no intervention
// analysis; each says why. A store of imported data only has nothing to
// analyse.
func TestWithoutMapOrSLO(t *testing.T) {
	a, err := FromResults(bottlenecktest.NoMapNoSLO(t))
	if err != nil {
		t.Fatal(err)
	}
	tr := a.Treatments[0]
	if tr.Intervention != nil || !strings.Contains(tr.InterventionNote, "needs an SLO") {
		t.Errorf("intervention note %q", tr.InterventionNote)
	}
	if tr.Runs[0].Result.Finding != "single bottleneck: h/cpu, critically saturated in 100% of 1s intervals (f_R = 1.00, mean utilisation 99%)" {
		t.Errorf("finding %q", tr.Runs[0].Result.Finding)
	}
	if a.Map == nil || !strings.Contains(a.Map.Err, "at least two treatments") {
		t.Errorf("map %+v", a.Map)
	}

	r, err := results.New(resultstest.Create(t, "", store.Campaign{Name: "imp", CreatedAt: t0}))
	if err != nil {
		t.Fatal(err)
	}
	if a, err := FromResults(r); err != nil || len(a.Treatments) != 0 || len(a.Notes) != 1 || !strings.Contains(a.Notes[0], "imported resource data only") {
		t.Fatalf("imported: %+v %v", a, err)
	}
}
