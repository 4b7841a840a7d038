package page

import (
	"math"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/analysis/bottleneck/bottlenecktest"
)

// The interval charts draw, per level, the resources the bottleneck
// analysis classified as bottlenecks in that level's runs, and only those
// (bottlenecktest.TwoTiers' designed causes): app/cpu at 30 req/s (97 and
// 99% in the two repetitions) and 40 req/s (100%) in a1; db1/cpu at 40
// req/s in a2 (2.5 x 40 = 100%, capped). Levels where nothing saturated
// get no such chart, and the busy machine outside the judged hosts (vm)
// is never one.
func TestSaturatedChartsFollowTheClassification(t *testing.T) {
	rep, err := Build(bottlenecktest.TwoTiers(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		resource string
		values   [2]float64 // repetition 1 and 2
	}{
		"t-a1-level3-saturated-util": {"app/cpu", [2]float64{97, 99}},
		"t-a1-level4-saturated-util": {"app/cpu", [2]float64{100, 100}},
		"t-a2-level4-saturated-util": {"db1/cpu", [2]float64{99, 100}},
	}
	seen := map[string]bool{}
	for _, s := range rep.Sections {
		for _, b := range s.Blocks {
			if b.Chart == nil || !strings.Contains(b.Chart.ID, "saturated") {
				continue
			}
			w, ok := want[b.Chart.ID]
			if !ok {
				t.Errorf("chart %s (%s): no resource saturated at that level by design", b.Chart.ID, b.Chart.Title)
				continue
			}
			seen[b.Chart.ID] = true
			if !strings.Contains(b.Chart.Title, "("+w.resource+")") || b.Chart.Line == nil || len(b.Chart.Line.Series) != 2 {
				t.Errorf("chart %s: %q with %v; want %s, one series per repetition", b.Chart.ID, b.Chart.Title, b.Chart.Line, w.resource)
				continue
			}
			for i, se := range b.Chart.Line.Series {
				if len(se.Points) != 10 {
					t.Errorf("chart %s %s: %d points, want the run's 10 seconds", b.Chart.ID, se.Name, len(se.Points))
				}
				for _, p := range se.Points {
					if math.Abs(float64(p.Y)-w.values[i]) > 1e-9 {
						t.Errorf("chart %s %s at %v s: %v%%, want %v%%", b.Chart.ID, se.Name, p.X, p.Y, w.values[i])
						break
					}
				}
			}
		}
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("no chart %s", id)
		}
	}
}
