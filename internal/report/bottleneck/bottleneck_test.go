package bottleneck

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ab "github.com/headroom-dev/headroom/internal/analysis/bottleneck"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	_ "github.com/headroom-dev/headroom/internal/target/null"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// synthSpec is a campaign of two treatments: one application server, or
// two, in front of a database host with 0.5 vCPU.
const synthSpec = `
name: syn
target: {type: null}
workload: {ycsb: c}
load: {model: open, rates: [10, 20, 30, 40]}
slo: {percentile: 95, threshold: 100ms}
repetitions: 2
lab:
  hosts:
    - {name: app, count: 1, type: small}
    - {name: db1, type: small, vcpus: 0.5}
analysis:
  bottleneck:
    hosts: [app, app1, app2, db1]
    map:
      x: {path: "lab.hosts[1].vcpus", label: DB vCPUs}
      y: {path: "lab.hosts[0].count", label: app servers}
treatments:
  - name: a1
  - name: a2
    set: {"lab.hosts[0].count": 2}
`

// labEvent records the treatment's hosts as a campaign does: 50 Mbit/s
// links (6.25e6 bytes/s).
func labEvent(hosts ...string) string {
	var hs []string
	for _, h := range hosts {
		hs = append(hs, fmt.Sprintf(`{"name":%q,"network_mbit":50,"volumes":null,"now":{"network_mbit":50}}`, h))
	}
	return `{"name":"syn","hosts":[` + strings.Join(hs, ",") + `]}`
}

// synthStore writes the campaign's results with designed causes:
//
//   - a1: app's CPU runs at 30, 70, 98 and 100% at levels 10 to 40 (one
//     percentage point apart in the two repetitions), the database's at a
//     quarter of that; at 40 half the requests take 500 ms. The single
//     bottleneck at 30 and 40 is app/cpu, and the sweep's intervention
//     point is 40.
//   - a2: two application servers at half that each; the database's CPU
//     runs at 2.5 x level percent, saturated at 40 (db1/cpu).
//   - the machine "vm" is busy at 100% everywhere: outside the hosts the
//     analysis judges.
//
// Throughput is 10, 20, 30 and 31 ok/s (a1), 10, 20, 30 and 35 (a2).
func synthStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Create(filepath.Join(t.TempDir(), "results.db"), store.Campaign{Name: "syn", SpecYAML: synthSpec, CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	start := t0
	levels := []float64{10, 20, 30, 40}
	appUtil := []float64{30, 70, 98, 100}
	for ti, tr := range []string{"a1", "a2"} {
		apps := []string{"app"}
		if tr == "a2" {
			apps = []string{"app1", "app2"}
		}
		if err := st.AddEvent(store.Event{Time: start, Kind: "lab", Detail: labEvent(append(apps, "db1")...)}); err != nil {
			t.Fatal(err)
		}
		start = start.Add(time.Second)
		for li, level := range levels {
			for rep := 1; rep <= 2; rep++ {
				slot := ti*spec.SlotsPerTreatment + li*2 + rep - 1
				id, err := st.StartRun(store.Run{Seq: slot, Slot: slot, Treatment: tr, Model: "open", LevelIndex: li, Level: level, Repetition: rep, Start: start})
				if err != nil {
					t.Fatal(err)
				}
				h := store.NewHistogram()
				for i := range 100 {
					v := int64(10_000)
					if level == 40 && i%2 == 0 {
						v = 500_000
					}
					_ = h.RecordValue(v)
				}
				if err := st.AddIntervals([]store.Interval{{RunID: id, Phase: "measure", Op: "read", Start: start, Duration: 10 * time.Second, Count: 100, Hist: h}}); err != nil {
					t.Fatal(err)
				}
				noise := float64(2*rep - 3) // -1 or +1
				var samples []monitor.Sample
				add := func(host, res, metric string, v float64, at time.Time) {
					samples = append(samples, monitor.Sample{Host: host, Resource: res, Metric: metric, Start: at, Period: time.Second, Value: v, Source: monitor.SourceSampled})
				}
				for sec := range 10 {
					at := start.Add(time.Duration(sec) * time.Second)
					u := math.Min(100, appUtil[li]+noise)
					if level == 40 {
						u = 100
					}
					db := u / 4
					for _, a := range apps {
						if tr == "a2" {
							add(a, "cpu", monitor.CPUUtilPct, u/2, at)
						} else {
							add(a, "cpu", monitor.CPUUtilPct, u, at)
						}
						add(a, "net:eth0", monitor.NetTxBytes, 1e4*level, at)
					}
					if tr == "a2" {
						db = math.Min(100, 2.5*level+noise)
					}
					add("db1", "cpu", monitor.CPUUtilPct, db, at)
					add("vm", "cpu", monitor.CPUUtilPct, 100, at)
				}
				if err := st.AddSamples(id, samples); err != nil {
					t.Fatal(err)
				}
				thr := level
				if level == 40 {
					thr = map[string]float64{"a1": 31, "a2": 35}[tr]
				}
				end := start.Add(10 * time.Second)
				if err := st.FinishRun(id, store.StatusCompleted, "", end, store.RunSummary{MeasureStart: start, MeasureEnd: end, MeasureSecs: 10, Completed: 100, Throughput: thr}); err != nil {
					t.Fatal(err)
				}
				start = end.Add(time.Second)
			}
		}
	}
	return st
}

func TestAnalyze(t *testing.T) {
	st := synthStore(t)
	a, err := Analyze(st)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Treatments) != 2 {
		t.Fatalf("%d treatments", len(a.Treatments))
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
	// The link capacities came from the lab event: 1e4 x level bytes/s is
	// 6.4% of 6.25e6 at level 40.
	for _, rs := range a1.Runs[len(a1.Runs)-1].Result.Resources {
		if rs.Resource == "app/net:eth0" && math.Abs(rs.Mean-6.4) > 1e-9 {
			t.Errorf("app/net:eth0 at %v%%, want 6.4", rs.Mean)
		}
		if strings.HasPrefix(rs.Resource, "vm/") {
			t.Errorf("the machine %s was judged though hosts leaves it out", rs.Resource)
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
	m := a.Map
	if m == nil || m.Err != "" || len(m.Map.X) != 1 || m.Map.X[0] != 0.5 || len(m.Map.Y) != 2 {
		t.Fatalf("map %+v", m)
	}
	if c := m.Map.Cells[1][0]; c.Config != "0.5/2" || c.MaxThroughput != 35 || c.Bottleneck != "DB_CPU" || m.Treatment[c.Config] != "a2" {
		t.Fatalf("cell %+v", c)
	}
}

func TestSections(t *testing.T) {
	a, err := Analyze(synthStore(t))
	if err != nil {
		t.Fatal(err)
	}
	r := &page.Report{Sections: Sections(a)}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	blocks := map[string]page.Block{}
	for _, s := range r.Sections {
		ids = append(ids, s.ID)
		for _, b := range s.Blocks {
			switch {
			case b.Table != nil:
				blocks[b.Table.ID] = b
			case b.Chart != nil:
				blocks[b.Chart.ID] = b
			}
		}
	}
	if strings.Join(ids, ",") != "bottlenecks-a1,bottlenecks-a2,bottleneck-maps" {
		t.Fatalf("sections %v", ids)
	}
	for _, id := range []string{"bn-runs-a1", "bn-freq-a1", "bn-states-a1-1", "bn-states-a1-2", "bn-density-a1-1", "bn-steps-a1", "bn-ranked-a1", "bn-map-throughput", "bn-map-bottleneck"} {
		if _, ok := blocks[id]; !ok {
			t.Errorf("no block %s", id)
		}
	}
	sum := r.Sections[0].Summary
	if !strings.HasPrefix(sum, "At the highest load (40 req/s, repetition 1): single bottleneck: app/cpu") || !strings.Contains(sum, "Intervention point w* = 40") {
		t.Errorf("summary %q", sum)
	}
	// The states at level 40: app/cpu saturated in every interval.
	st := blocks["bn-states-a1-2"].Chart
	if st.Title != "Saturation states at 40 req/s" || strings.Join(st.Bars.Categories, ",") != "app/cpu" || float64(st.Bars.Series[0].Values[0]) != 100 {
		t.Errorf("states chart %q %+v", st.Title, st.Bars)
	}
	// f_R marks: full at 30 and 40.
	fr := blocks["bn-freq-a1"].Table
	if fr.Columns[2].Title != "app/cpu" || fr.Rows[4][2].Mark != "fail" || fr.Rows[0][2].Mark != "" {
		t.Errorf("f_R table %+v", fr.Rows)
	}
	rk := blocks["bn-ranked-a1"].Table
	if rk.Rows[0][1].Text != "APP_CPU" {
		t.Errorf("ranked %+v", rk.Rows)
	}
	mp := blocks["bn-map-throughput"].Chart.Heat
	if strings.Join(mp.XLabels, ",") != "0.5" || strings.Join(mp.YLabels, ",") != "1,2" || float64(mp.Values[0][0]) != 31 || float64(mp.Values[1][0]) != 35 {
		t.Errorf("throughput map %+v", mp)
	}
	bm := blocks["bn-map-bottleneck"].Table
	if bm.Rows[0][1].Text != "DB_CPU (35 ok/s, a2)" || bm.Rows[1][1].Text != "APP_CPU (31 ok/s, a1)" {
		t.Errorf("bottleneck map %+v", bm.Rows)
	}
	if s := r.Sections[2].Summary; s != "Throughput ranges from 31 to 35 ok/s over 2 configurations; the highest is a2 (DB vCPUs 0.5, app servers 2), limited by DB_CPU. Bottlenecks on the map: APP_CPU, DB_CPU." {
		t.Errorf("map summary %q", s)
	}
	// And the page renders.
	if err := page.Write(t.TempDir(), r); err != nil {
		t.Fatal(err)
	}
}

func TestTerminal(t *testing.T) {
	a, err := Analyze(synthStore(t))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	Terminal(&b, a)
	out := b.String()
	for _, want := range []string{
		"Bottlenecks · treatment a1 (1s intervals, saturated above 95%, hosts app, app1, app2, db1)\n",
		"  level 30, repetition 1 (30.0 ok/s): single bottleneck: app/cpu, critically saturated in 100% of 1s intervals (f_R = 1.00, mean utilisation 97%)\n",
		"  intervention analysis: intervention point w* = 40",
		"    1.  APP_CPU  R = ",
		"  maximum throughput 35.0 ok/s at 40; primary bottleneck there: DB_CPU\n",
		"Maximum throughput (ok/s) and primary bottleneck by app servers (rows) and DB vCPUs (columns)\n",
		"  app servers \\ DB vCPUs   0.5\n  2                        35 DB_CPU\n  1                        31 APP_CPU\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal output lacks %q:\n%s", want, out)
		}
	}
}

// Without treatments there are no maps; without an SLO no intervention
// analysis; each says why.
func TestWithoutMapOrSLO(t *testing.T) {
	st, err := store.Create(filepath.Join(t.TempDir(), "r.db"), store.Campaign{Name: "x", SpecYAML: "name: x\ntarget: {type: null}\nworkload: {ycsb: c}\nload: {model: open, rates: [10]}\nanalysis: {bottleneck: {map: {x: {path: seed}, y: {path: repetitions}}}}\n", CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id, err := st.StartRun(store.Run{Model: "open", Level: 10, Repetition: 1, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddSamples(id, []monitor.Sample{{Host: "h", Resource: "cpu", Metric: monitor.CPUUtilPct, Start: t0, Period: time.Second, Value: 99, Source: monitor.SourceSampled}}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(id, store.StatusCompleted, "", t0.Add(time.Second), store.RunSummary{MeasureStart: t0, MeasureEnd: t0.Add(time.Second), MeasureSecs: 1}); err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(st)
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
	r := &page.Report{Sections: Sections(a)}
	if err := r.Validate(); err != nil || r.Sections[0].ID != "bottlenecks" || r.Sections[1].Summary != "No maps: the maps need a campaign with at least two treatments that vary the tier sizes." {
		t.Fatalf("%v %+v", err, r.Sections)
	}
}

// A level's states chart has a bar for every repetition: one without a
// bottleneck resource spent all its intervals in the state "none". Levels
// where no run had a bottleneck get no chart.
func TestStatesIncludeRunsWithoutBottleneck(t *testing.T) {
	tr := &Treatment{Runs: []*Run{
		{Run: store.Run{Level: 5, Repetition: 1, Model: "open"}},
		{Run: store.Run{Level: 10, Repetition: 1, Model: "open"}, Result: ab.Result{States: []ab.State{{Freq: 0.75}, {Saturated: []string{"h/cpu"}, Freq: 0.25}}}},
		{Run: store.Run{Level: 10, Repetition: 2, Model: "open"}},
	}}
	charts, left := stateCharts(tr, "", "src")
	if len(charts) != 1 || left != 0 {
		t.Fatalf("%d charts, %d left out", len(charts), left)
	}
	b := charts[0].Bars
	if strings.Join(b.Categories, ",") != "none,h/cpu" || len(b.Series) != 2 ||
		b.Series[0].Values[0] != 75 || b.Series[0].Values[1] != 25 || b.Series[1].Values[0] != 100 || b.Series[1].Values[1] != 0 {
		t.Fatalf("bars %+v", b)
	}
}
