package bottleneck

import (
	"bytes"
	"strings"
	"testing"

	ab "github.com/headroom-dev/headroom/internal/analysis/bottleneck"
	"github.com/headroom-dev/headroom/internal/analysis/bottleneck/bottlenecktest"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/store"
)

// analysis is the analysis of bottlenecktest.TwoTiers: a1 limited by its
// application server's CPU, a2 by the database's, on a map of two cells.
func analysis(t *testing.T) *ab.Analysis {
	t.Helper()
	a, err := ab.FromResults(bottlenecktest.TwoTiers(t))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestSections(t *testing.T) {
	a := analysis(t)
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
	a := analysis(t)
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
// analysis; the sections say why. (The campaign is of the first schema:
// its settings come from the stored spec text.)
func TestWithoutMapOrSLO(t *testing.T) {
	secs, err := ReportSections(bottlenecktest.NoMapNoSLO(t))
	if err != nil {
		t.Fatal(err)
	}
	r := &page.Report{Sections: secs}
	if err := r.Validate(); err != nil || len(r.Sections) != 2 || r.Sections[0].ID != "bottlenecks" || r.Sections[1].Summary != "No maps: the maps need a campaign with at least two treatments that vary the tier sizes." {
		t.Fatalf("%v %+v", err, r.Sections)
	}
	if sum := r.Sections[0].Summary; sum != "At the highest load (10 req/s, repetition 1): single bottleneck: h/cpu, critically saturated in 100% of 1s intervals (f_R = 1.00, mean utilisation 99%)." {
		t.Errorf("summary %q", sum)
	}
	var notes []string
	for _, b := range r.Sections[0].Blocks {
		if b.Note != nil {
			notes = append(notes, b.Note.Text)
		}
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "The intervention analysis needs an SLO") {
		t.Errorf("notes %q", notes)
	}
}

// A level's states chart has a bar for every repetition: one without a
// bottleneck resource spent all its intervals in the state "none". Levels
// where no run had a bottleneck get no chart.
func TestStatesIncludeRunsWithoutBottleneck(t *testing.T) {
	tr := &ab.Treatment{Runs: []*ab.Run{
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

// A treatment's bottleneck IDs name it as the page's sections do
// (format.ID), so "Fast.2" is fast-2 in every anchor of the report.
func TestSlugIsThePagesID(t *testing.T) {
	for name, want := range map[string]string{"": "", "a1": "-a1", "Fast.2": "-fast-2", "type-small_iops-300": "-type-small-iops-300"} {
		if got := slug(name); got != want {
			t.Errorf("slug(%q) = %q, want %q", name, got, want)
		}
	}
}
