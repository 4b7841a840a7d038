package capacity

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
)

// The v1 treatments store: small and big, 2 levels x 2 repetitions each,
// SLO p95 of read within 5 ms, big setting 8 ms. Each curve comes in
// campaign order with its own treatment's SLO.
func TestFromResultsTreatmentSLOs(t *testing.T) {
	cc, err := FromResults(resultstest.OpenV1(t, "treatments.db"), Config{})
	if err != nil || cc.Problem != nil {
		t.Fatal(err, cc.Problem)
	}
	if len(cc.Curves) != 2 {
		t.Fatalf("%d curves, want small and big", len(cc.Curves))
	}
	for i, want := range []struct {
		name      string
		threshold time.Duration
	}{{"small", 5 * time.Millisecond}, {"big", 8 * time.Millisecond}} {
		tc := cc.Curves[i]
		if tc.Treatment.Name != want.name || tc.Curve.Treatment != want.name || tc.Curve.Model != "open" || len(tc.Input.Runs) != 4 {
			t.Errorf("curve %d: %s/%s %s with %d runs; want %s, open, 4 runs", i, tc.Treatment.Name, tc.Curve.Treatment, tc.Curve.Model, len(tc.Input.Runs), want.name)
		}
		if s := tc.Input.SLO; s == nil || s.Percentile != 95 || s.Threshold != want.threshold || s.Op != "read" {
			t.Errorf("%s: SLO %+v, want p95 of read within %v", want.name, s, want.threshold)
		}
		if len(tc.Curve.Points) != 2 || tc.Curve.Points[1].Level.Level != 2000 || tc.Curve.Points[1].SLO == nil || !tc.Curve.Points[1].SLO.Pass {
			t.Errorf("%s: points %+v", want.name, tc.Curve.Points)
		}
	}
}

// Runs without facts (a store holding only runs) still make curves, with
// their runs' load model; a treatment whose runs mix models is a problem of
// the data, reported in Campaign.Problem rather than as a read error.
func TestFromResultsRunsOnly(t *testing.T) {
	c := newCampaign(t, 3)
	c.mm1("a", 100, []float64{20, 40, 60}, 2)
	r, err := results.New(c.st)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := FromResults(r, Config{})
	if err != nil || cc.Problem != nil || len(cc.Curves) != 1 || cc.Curves[0].Curve.Model != "open" || cc.Curves[0].Input.SLO != nil {
		t.Fatalf("curves %+v, %v", cc, err)
	}
	c.add(run{treatment: "a", model: "closed", levelIndex: 3, level: 4, rep: 1, throughput: 50, meanLatency: 0.01})
	if r, err = results.New(c.st); err != nil {
		t.Fatal(err)
	}
	cc, err = FromResults(r, Config{})
	if err != nil || cc.Problem == nil || !strings.Contains(cc.Problem.Error(), "mixes open and closed") || len(cc.Curves) != 0 {
		t.Errorf("mixed models: %+v, %v", cc, err)
	}
}
