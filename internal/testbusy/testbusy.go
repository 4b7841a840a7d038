// Package testbusy lets a timing test tell its own findings from the
// effect of other work on the machine. A test starts a Watch before it
// measures and hands its findings (what it would fail on) to Judge after:
// when some runnable task waited for a processor for more than Share of
// the time in between (the kernel's CPU pressure, /proc/pressure/cpu,
// "some"), the measured wake-ups and lateness were other work's, and Judge
// skips the test naming what it would have failed on; otherwise the
// findings fail it. CI runs the packages one at a time on an otherwise
// idle machine, where every finding fails its test. Without pressure
// information (an old kernel) findings always fail it.
package testbusy

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/hostinfo"
)

// Share is the most of a timing test's wall time during which other tasks
// may have waited for a processor before the test stops judging its own
// clock readings.
const Share = 0.2

// Watch is a window of CPU pressure.
type Watch struct {
	from  float64 // seconds some task waited, at the start
	ok    bool
	start time.Time
}

// Start opens a window now.
func Start() Watch {
	from, ok := hostinfo.CPUWaitSeconds()
	return Watch{from: from, ok: ok, start: time.Now()}
}

// Busy is the share of the window's wall time during which some task
// waited for a processor, and whether it is known.
func (w Watch) Busy() (float64, bool) {
	if !w.ok {
		return 0, false
	}
	to, ok := hostinfo.CPUWaitSeconds()
	wall := time.Since(w.start).Seconds()
	if !ok || wall <= 0 {
		return 0, false
	}
	return (to - w.from) / wall, true
}

// Judge fails t with the findings (none = pass), or skips it, saying why,
// when the machine was busy during the window.
func (w Watch) Judge(t testing.TB, findings []string) {
	t.Helper()
	if len(findings) == 0 {
		return
	}
	msg := strings.Join(findings, "; ")
	if share, ok := w.Busy(); ok && share > Share {
		t.Skipf("the machine was busy (for %.0f%% of this test other tasks waited for a processor, /proc/pressure/cpu), so these timings are not the code's: %s", 100*share, msg)
	}
	t.Fatal(msg)
}
