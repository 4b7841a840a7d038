package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The meter's rate is the rows of the last RateWindow, not of the whole
// population: a load that slows from 1000 to 100 rows/s shows 100 rows/s
// once the window has passed the change, and the time left follows.
func TestRowMeterRateFollowsTheLastSeconds(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := NewRowMeter(t0)
	var r Rows
	done := int64(0)
	for s := 1; s <= 10; s++ { // 1000 rows/s for 10 s
		done += 1000
		r = m.At(t0.Add(time.Duration(s)*time.Second), done, 100000)
	}
	if r.PerSecond != 1000 || r.Left != 90*time.Second {
		t.Fatalf("steady 1000 rows/s: %+v", r)
	}
	for s := 11; s <= 20; s++ { // then 100 rows/s
		done += 100
		r = m.At(t0.Add(time.Duration(s)*time.Second), done, 100000)
	}
	if r.PerSecond != 100 {
		t.Fatalf("after 10 s at 100 rows/s the rate is %v, want 100 (the last %v only)", r.PerSecond, RateWindow)
	}
	if want := time.Duration(100000-done) * 10 * time.Millisecond; r.Left != want {
		t.Fatalf("time left %v, want %v (rows left / rate)", r.Left, want)
	}
	if got := r.String(); got != "11000/100000 rows, 100 rows/s, ETA 14m50s" {
		t.Fatalf("String() = %q", got)
	}
	// Before any row, nothing is known; at the end, no ETA.
	if s := NewRowMeter(t0).At(t0, 0, 10).String(); s != "0/10 rows" {
		t.Errorf("no rows yet: %q", s)
	}
	if s := NewRowMeter(t0).At(t0.Add(2*time.Second), 10, 10).String(); s != "10/10 rows, 5 rows/s" {
		t.Errorf("done: %q", s)
	}
}

// The line printer says once that it populates, then a line of rows,
// rate and ETA every period while rows load, and a closing line with the
// whole population's time when it printed any; the bar's description
// carries the same.
func TestLinesReportAPopulationEveryPeriod(t *testing.T) {
	var buf bytes.Buffer
	rep := NewLines(&buf, 50*time.Millisecond)
	rep.Update(State{Phase: "populate", Runs: 2})
	t0 := time.Now()
	m := NewRowMeter(t0)
	for i := int64(1); i <= 20; i++ {
		time.Sleep(10 * time.Millisecond)
		r := m.At(time.Now(), i*50, 1000)
		rep.Update(State{Phase: "populate", Runs: 2, Populate: &r})
	}
	took := time.Since(t0)
	out := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(out) < 3 || out[0] != "populating the target..." {
		t.Fatalf("lines:\n%s", buf.String())
	}
	// 200 ms or more of loading at one line per 50 ms, each with a rate
	// and an ETA.
	if n := len(out) - 2; n < 2 || n > int(took/(50*time.Millisecond)) {
		t.Errorf("%d progress lines over %v at one per 50 ms:\n%s", n, took, buf.String())
	}
	for _, l := range out[1 : len(out)-1] {
		if !strings.HasPrefix(l, "populate: ") || !strings.Contains(l, " rows/s, ETA ") {
			t.Errorf("progress line %q has no rate and ETA", l)
		}
	}
	if last := out[len(out)-1]; !strings.HasPrefix(last, "populate: 1000 rows in ") || !strings.HasSuffix(last, " rows/s)") {
		t.Errorf("closing line %q", last)
	}
	// A population shorter than the period prints only its first line.
	buf.Reset()
	rep.Update(State{Phase: "reset: repopulate"})
	rep.Update(State{Phase: "populate", Run: 1})
	r := NewRowMeter(time.Now()).At(time.Now(), 1000, 1000)
	rep.Update(State{Phase: "populate", Run: 1, Populate: &r})
	if buf.String() != "populating the target...\n" {
		t.Errorf("a short population printed %q", buf.String())
	}

	if d := describe(State{Phase: "populate", Run: 0, Runs: 4, Populate: &Rows{Done: 300, Total: 1000, PerSecond: 70, Left: 10 * time.Second}}); d != "populate · 300/1000 rows, 70 rows/s, ETA 10s" {
		t.Errorf("bar description %q", d)
	}
}
