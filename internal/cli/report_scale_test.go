package cli

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/heappeak"
	"github.com/headroom-dev/headroom/internal/storegen"
)

// Reporting a run holds the answer, not the run: a 2-hour run of five
// operations at 1-second intervals (36,000 interval rows, each histogram
// about 200 KB when decoded) is reported within 300 MB of heap, which
// holding every decoded interval at once (as report did until 2026-12-07)
// exceeds many times over.
func TestReportOfALongRunHasBoundedHeap(t *testing.T) {
	dir := t.TempDir()
	if _, err := storegen.Write(filepath.Join(dir, "results.db"), storegen.Config{Measure: 2 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	var err error
	peak := heappeak.During(func() { err = reportSource(io.Discard, io.Discard, dir, "", "") })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("peak heap %.0f MB", float64(peak)/1e6)
	if peak > 300e6 {
		t.Errorf("reporting a 2-hour run took %.0f MB of heap, want at most 300 MB", float64(peak)/1e6)
	}
}

// BenchmarkReportLongRun reports a generated run of 20 minutes at 100 ms
// intervals with five operations (60,000 interval rows): docs/performance.md.
func BenchmarkReportLongRun(b *testing.B) {
	dir := b.TempDir()
	if _, err := storegen.Write(filepath.Join(dir, "results.db"), storegen.Config{Measure: 20 * time.Minute, Interval: 100 * time.Millisecond}); err != nil {
		b.Fatal(err)
	}
	var peak uint64
	for b.Loop() {
		peak = max(peak, heappeak.During(func() {
			if err := reportSource(io.Discard, io.Discard, dir, "", ""); err != nil {
				b.Fatal(err)
			}
		}))
	}
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
}
