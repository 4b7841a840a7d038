package rigor

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
)

// The designed cluster campaign of internal/analysis/scaling's
// TestFromClusters: 4 small nodes (baseline), 8 small (horizontal) and 2
// large (vertical) with capacity 400, 800 and 400 ok/s, $0.657 per month
// per ok/s each, response-time CV at capacity 0.5, 1/3 and 0.75, and a
// line over small nodes of 100 ok/s per node.
func nodeScalingModel(t *testing.T) *results.Results {
	ms := time.Millisecond
	lv := func(level, tput float64, a, b time.Duration) resultstest.ClusterLevel {
		return resultstest.ClusterLevel{Level: level, Throughput: tput, LatA: a, LatB: b}
	}
	st := resultstest.ClusterStore(t, "nodes", &results.SLO{Percentile: 99, Threshold: 100 * ms}, []resultstest.ClusterTreatment{
		{Name: "4-small", Nodes: 4, Type: "small", VCPUs: 0.5, Price: 0.09, Levels: []resultstest.ClusterLevel{
			lv(100, 100, 8*ms, 12*ms), lv(200, 200, 8*ms, 12*ms), lv(400, 400, 10*ms, 30*ms), lv(800, 420, 200*ms, 400*ms)}},
		{Name: "8-small", Nodes: 8, Type: "small", VCPUs: 0.5, Price: 0.09, Levels: []resultstest.ClusterLevel{
			lv(100, 100, 8*ms, 12*ms), lv(200, 200, 8*ms, 12*ms), lv(400, 400, 8*ms, 12*ms), lv(800, 800, 10*ms, 20*ms)}},
		{Name: "2-large", Nodes: 2, Type: "large", VCPUs: 1, Price: 0.18, Levels: []resultstest.ClusterLevel{
			lv(100, 100, 8*ms, 12*ms), lv(200, 200, 8*ms, 12*ms), lv(400, 400, 5*ms, 35*ms), lv(800, 600, 150*ms, 450*ms)}},
	})
	return model(t, st)
}

func TestNodeScalingSection(t *testing.T) {
	r := nodeScalingModel(t)
	secs, err := NodeScalingSections(r)
	if err != nil {
		t.Fatal(err)
	}
	validates(t, secs)
	sec := mustSection(t, secs, "node-scaling")
	tb := table(t, secs, "node-scaling-table")
	strat, nodes, typ, tput, cost, cv := col(t, tb, "strategy"), col(t, tb, "nodes"), col(t, tb, "node type"), col(t, tb, "throughput"), col(t, tb, "cost per ok/s"), col(t, tb, "RT CV at capacity")
	want := []struct {
		strategy, typ   string
		nodes, tput, cv float64
	}{{"baseline", "small", 4, 400, 0.5}, {"horizontal", "small", 8, 800, 1.0 / 3}, {"vertical", "large", 2, 400, 0.75}}
	for i, w := range want {
		row := tb.Rows[i]
		if row[strat].Text != w.strategy || row[typ].Text != w.typ || value(row[nodes]) != w.nodes || value(row[tput]) != w.tput ||
			!near(value(row[cost]), 0.657, 1e-9) || !near(value(row[cv]), w.cv, 0.01) {
			t.Errorf("row %d: %+v", i, row)
		}
	}
	for _, s := range []string{
		"8-small (horizontal, 8 × small) reaches 800 ok/s, a scale-up of 2.00 over 4-small and a speed-up of 2.00, at $0.657 per month per ok/s",
		"Over small nodes, throughput grows by 100 ok/s per node",
		"bigger nodes (vertical) vary more than more nodes (horizontal), mean CV 0.75 against 0.33",
	} {
		if !strings.Contains(sec.Summary, s) {
			t.Errorf("summary lacks %q:\n%s", s, sec.Summary)
		}
	}
	c := chartByID(t, secs, "node-scaling-throughput")
	if len(c.Line.Series) != 3 || c.Line.Series[0].Name != "small nodes" || c.Line.Series[1].Name != "small fit" || !c.Line.Series[1].Dashed {
		t.Errorf("chart series %+v", c.Line.Series)
	}

	got := map[string]string{}
	for _, name := range []string{"4-small", "8-small"} {
		fs, err := Findings(r, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if f.Label == "Node scaling" {
				got[name] = f.Text
			}
		}
	}
	if !strings.Contains(got["8-small"], "a scale-up of 2.00 over 4-small") || !strings.Contains(got["4-small"], "100 ok/s per node") {
		t.Errorf("findings %v", got)
	}

	// A campaign without clusters has no such section.
	st, _ := variationStore(t)
	if secs, err := NodeScalingSections(model(t, st)); err != nil || len(secs) != 0 {
		t.Errorf("sections without clusters: %v, %v", secs, err)
	}
}
