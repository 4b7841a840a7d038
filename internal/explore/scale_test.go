package explore

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/heappeak"
	"github.com/headroom-dev/headroom/internal/storegen"
)

// BenchmarkExplorerLongRun times the explorer's API on a generated
// 20-minute run at 100 ms intervals (60,000 interval rows), after the
// store is warmed as `headroom explore` warms it: each iteration asks for
// the answer cards, the report's sections and the run's detail (its
// per-interval timeline). It reports the heap's peak over warming and the
// requests (docs/performance.md):
//
//	go test -run '^$' -bench BenchmarkExplorerLongRun -benchtime 5x ./internal/explore
func BenchmarkExplorerLongRun(b *testing.B) {
	path := filepath.Join(b.TempDir(), "results.db")
	if _, err := storegen.Write(path, storegen.Config{Measure: 20 * time.Minute, Interval: 100 * time.Millisecond}); err != nil {
		b.Fatal(err)
	}
	var e *Explorer
	peak := heappeak.During(func() {
		var err error
		if e, err = Open([]string{path}); err != nil {
			b.Fatal(err)
		}
		for _, s := range e.sources {
			s.warm()
		}
	})
	defer e.Close()
	b.ResetTimer()
	for b.Loop() {
		peak = max(peak, heappeak.During(func() {
			for _, url := range []string{"/api/answer", "/api/sections?store=0", "/api/run?store=0&id=1"} {
				w := httptest.NewRecorder()
				e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, url, nil))
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", url, w.Code, w.Body.String())
				}
			}
		}))
	}
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
}
