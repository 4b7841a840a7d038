package campaign

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// poolServer is an HTTP server whose capacity is known by construction:
// workers requests are served at a time, each taking exactly service; up
// to queue more wait their turn (in arrival order: a channel's blocked
// senders are served first come, first served), and a request arriving
// when the queue is full is refused with 503. Its capacity is
// workers/service requests per second.
func poolServer(t *testing.T, workers, queue int, service time.Duration) *httptest.Server {
	t.Helper()
	slots := make(chan struct{}, workers)
	var inside atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if inside.Add(1) > int64(workers+queue) {
			inside.Add(-1)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		defer inside.Add(-1)
		slots <- struct{}{}
		time.Sleep(service)
		<-slots
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// sweepOf reads the campaign's (only) sweep back through the results model.
func sweepOf(t *testing.T, st *store.Store) *results.Sweep {
	t.Helper()
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := r.Sweep("")
	if err != nil || sw == nil {
		t.Fatalf("sweep: %v, %v", sw, err)
	}
	return sw
}

// levelsRun lists the distinct levels of the store's runs, in order.
func levelsRun(t *testing.T, st *store.Store) []float64 {
	t.Helper()
	runs, err := st.Runs()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[float64]bool{}
	var out []float64
	for _, r := range runs {
		if !seen[r.Level] {
			seen[r.Level] = true
			out = append(out, r.Level)
		}
	}
	sort.Float64s(out)
	return out
}

// An open-loop sweep against a server of capacity 400 req/s (8 workers of
// 20 ms, 40 queued at most, the rest refused) stops at 450 req/s, the first
// level above capacity, because the server refuses a share of the requests
// there (at least 1 - 400/450 = 11% once its queue has filled); 150 and 300
// req/s (utilisation 0.75 at most) refuse nothing. No higher level runs,
// and there is nothing to resume.
func TestSweepStopsAtFirstLevelAboveCapacity(t *testing.T) {
	srv := poolServer(t, 8, 40, 20*time.Millisecond)
	dir := t.TempDir()
	s := parse(t, dir, fmt.Sprintf(`
name: sweep-open
target: {type: http, base_url: %q, read: {path: "/r/{key}"}}
workload: {operations: {read: 1}, record_count: 10}
load:
  model: open
  arrival: constant
  rates: {from: 150, step: 150, until: saturated, max: 1500}
phases: {populate: false, warmup: 1500ms, measure: 2s}
interval: 250ms
monitor: {enabled: false}
output: out
`, srv.URL))
	out, st := start(t, s)
	if got := levelsRun(t, st); fmt.Sprint(got) != "[150 300 450]" {
		t.Fatalf("levels run %v, want [150 300 450]: the sweep must stop at the first level above 400 req/s", got)
	}
	if out.Runs != 3 || out.Completed != 3 {
		t.Errorf("outcome: %d runs planned, %d completed; want 3 and 3", out.Runs, out.Completed)
	}
	sw := sweepOf(t, st)
	if sw.Plan.Levels != 10 || sw.Plan.From != 150 || sw.Plan.ErrorPct != 1 {
		t.Errorf("stored plan %+v", sw.Plan)
	}
	stop, ok := sw.Stop()
	if !ok || stop.Level != 450 {
		t.Fatalf("stop %+v %v, want 450 req/s saturated", stop, ok)
	}
	if stop.ErrorPct < 5 || len(stop.Reasons) != 1 || !strings.Contains(stop.Reasons[0], "of requests failed (more than 1%), mostly http_503") {
		t.Errorf("stop at %.1f%% errors with reasons %q; want about 11%% refused (http_503) as the one reason", stop.ErrorPct, stop.Reasons)
	}
	for _, v := range sw.Levels[:2] {
		if v.Saturated || v.ErrorPct != 0 {
			t.Errorf("level %g: saturated %v with %.2f%% errors; want neither below capacity", v.Level, v.Saturated, v.ErrorPct)
		}
	}
	if n := strings.Join(stop.Notes, " "); !strings.Contains(n, "the CPU rule cannot fire: the target's CPU is not monitored") {
		t.Errorf("notes %q should say the CPU of a server Headroom does not run is not judged", n)
	}
	r, _ := results.New(st)
	if done, planned := r.Progress(); done != 3 || planned != 3 {
		t.Errorf("progress %d of %d, want 3 of 3: a stopped sweep is finished", done, planned)
	}
	if _, err := Resume(context.Background(), out.Dir, Options{}); !errors.Is(err, ErrNothingToResume) {
		t.Errorf("resume after the sweep stopped: %v, want nothing to resume", err)
	}
}

// cancelAfter is a progress reporter that cancels the campaign once n runs
// have ended, as a Ctrl-C between runs would.
type cancelAfter struct {
	progress.Reporter
	n      int
	cancel func()
}

func (c *cancelAfter) RunDone(s progress.State, v string) {
	if c.n--; c.n == 0 {
		c.cancel()
	}
}

// A closed-loop sweep against 4 workers of 20 ms with an SLO of p99 <= 32
// ms: up to 4 clients every request takes 20 ms; 6 clients share 4 workers,
// so every other request waits a whole service (40 ms, mean 30 ms by
// Little's law) and the SLO fails at 6, the first level above capacity.
// The campaign is interrupted after 3 runs (level 2 twice, level 4 once);
// the resumed campaign runs level 4's second repetition and level 6, runs
// nothing twice, and stops at the same level as an uninterrupted sweep.
func TestSweepResumesWhereItStopped(t *testing.T) {
	srv := poolServer(t, 4, 1000, 20*time.Millisecond)
	dir := t.TempDir()
	s := parse(t, dir, fmt.Sprintf(`
name: sweep-closed
target: {type: http, base_url: %q, read: {path: "/r/{key}"}}
workload: {operations: {read: 1}, record_count: 10}
load: {model: closed, clients: {from: 2, step: 2, until: saturated, max_levels: 6}}
slo: {percentile: 99, threshold: 32ms}
repetitions: 2
phases: {populate: false, warmup: 500ms, measure: 1500ms}
interval: 250ms
monitor: {enabled: false}
output: out
`, srv.URL))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := Start(ctx, s, Options{Progress: &cancelAfter{Reporter: progress.Quiet(), n: 3, cancel: cancel}})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("first session: %v, want interrupted", err)
	}
	st := openStore(t, out)
	if got := levelsRun(t, st); fmt.Sprint(got) != "[2 4]" {
		t.Fatalf("levels before the interruption %v, want [2 4]", got)
	}
	r, _ := results.New(st)
	if done, planned := r.Progress(); done != 3 || planned != 12 {
		t.Errorf("interrupted progress %d of %d, want 3 of 12 (the sweep may still run all 6 levels)", done, planned)
	}

	again, err := Resume(context.Background(), out.Dir, Options{})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if again.Runs != 6 || again.Completed != 6 {
		t.Errorf("resumed outcome: %d runs planned, %d completed; want 6 and 6", again.Runs, again.Completed)
	}
	runs := storedRuns(t, st, 6)
	slots := map[int]bool{}
	for _, run := range runs {
		if slots[run.Slot] {
			t.Errorf("slot %d (level %g, repetition %d) ran twice", run.Slot, run.Level, run.Repetition)
		}
		slots[run.Slot] = true
	}
	if got := levelsRun(t, st); fmt.Sprint(got) != "[2 4 6]" {
		t.Errorf("levels %v, want [2 4 6]", got)
	}
	sw := sweepOf(t, st)
	stop, ok := sw.Stop()
	if !ok || stop.Level != 6 || stop.Runs != 2 || stop.SLOPass == nil || *stop.SLOPass {
		t.Fatalf("stop %+v, want 6 clients with the SLO failed over 2 runs", stop)
	}
	if len(stop.Reasons) != 1 || !strings.HasPrefix(stop.Reasons[0], "the SLO failed") {
		t.Errorf("reasons %q, want the SLO", stop.Reasons)
	}
	for _, v := range sw.Levels[:2] {
		if v.Saturated || v.SLOPass == nil || !*v.SLOPass {
			t.Errorf("level %g clients: %+v; want the SLO met at or below capacity", v.Level, v)
		}
	}
	if _, err := Resume(context.Background(), out.Dir, Options{}); !errors.Is(err, ErrNothingToResume) {
		t.Errorf("second resume: %v, want nothing to resume", err)
	}
}

// A sweep that never saturates ends at its cap, and then there is nothing
// to resume. SQLite runs inside Headroom's process, so the CPU
// rule does not apply to it, and the verdicts say so.
func TestSweepEndsAtItsCap(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, `
name: sweep-cap
target: {type: sqlite}
workload: {operations: {read: 1}, record_count: 10}
load: {model: open, rates: {from: 50, step: 50, until: saturated, max_levels: 2}}
phases: {warmup: 0s, measure: 1s}
interval: 250ms
output: out
`)
	out, st := start(t, s)
	if got := levelsRun(t, st); fmt.Sprint(got) != "[50 100]" {
		t.Fatalf("levels %v, want [50 100]", got)
	}
	sw := sweepOf(t, st)
	if _, ok := sw.Stop(); ok || len(sw.Levels) != 2 {
		t.Fatalf("verdicts %+v, want two levels, neither saturated", sw.Levels)
	}
	if n := strings.Join(sw.Levels[1].Notes, " "); !strings.Contains(n, "the CPU rule does not apply: the target runs inside the load generator's process") {
		t.Errorf("notes %q should say why the CPU rule does not apply", n)
	}
	if _, err := Resume(context.Background(), out.Dir, Options{}); !errors.Is(err, ErrNothingToResume) {
		t.Errorf("resume at the cap: %v, want nothing to resume", err)
	}
}

// Each treatment sweeps on its own: its verdicts carry its name, and a
// treatment whose sweep saturated runs no higher level while the other
// goes on to its cap. Treatment "strict" has an SLO no request can meet
// (1µs), so it saturates at its first level; "loose" never does.
func TestSweepPerTreatment(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, `
name: sweep-treatments
target: {type: sqlite}
workload: {operations: {read: 1}, record_count: 10}
load: {model: open, rates: {from: 50, step: 50, until: saturated, max_levels: 2}}
slo: {percentile: 99, threshold: 1s}
phases: {warmup: 0s, measure: 1s}
interval: 250ms
treatments:
  - name: loose
  - name: strict
    set: {slo.threshold: 1us}
output: out
`)
	out, st := start(t, s)
	if out.Runs != 3 || out.Completed != 3 {
		t.Errorf("outcome: %d runs planned, %d completed; want 3 (2 loose, 1 strict)", out.Runs, out.Completed)
	}
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	loose, _ := r.Sweep("loose")
	strict, _ := r.Sweep("strict")
	if loose == nil || strict == nil {
		t.Fatalf("sweeps %v %v", loose, strict)
	}
	if _, ok := loose.Stop(); ok || len(loose.Levels) != 2 {
		t.Errorf("loose: %+v, want 2 levels, none saturated", loose.Levels)
	}
	if stop, ok := strict.Stop(); !ok || stop.Level != 50 || len(strict.Levels) != 1 {
		t.Errorf("strict: %+v, want saturated at 50 req/s, its only level", strict.Levels)
	}
	if done, planned := r.Progress(); done != 3 || planned != 3 {
		t.Errorf("progress %d of %d, want 3 of 3", done, planned)
	}
	if _, err := Resume(context.Background(), out.Dir, Options{}); !errors.Is(err, ErrNothingToResume) {
		t.Errorf("resume: %v, want nothing to resume", err)
	}
}
