package load_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/target"
	httptarget "github.com/headroom-dev/headroom/internal/target/http"
	"github.com/headroom-dev/headroom/internal/testnet"
	"github.com/headroom-dev/headroom/internal/workload"
)

func httpTarget(t *testing.T, addr string) target.Target {
	t.Helper()
	// timeout 0: only the load section's timeout applies, as in a spec
	// that leaves the http target's own at its default of 10 s.
	tgt, err := httptarget.Open(httptarget.Options{BaseURL: "http://" + addr, Read: &httptarget.Request{Path: "/kv/{key}"}, Success: []string{"2xx"}, KeepAlive: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	return tgt
}

// A target that accepts connections and never answers: each request is a
// timeout in the interval in which its timeout expired, the arrivals that
// found every slot held are dropped in the intervals they were due in, the
// run ends on time, and the result says what happened instead of advising
// more slots.
func TestSilentTargetTimesOutWhereDue(t *testing.T) {
	gen := readGenerator(t)
	cfg := openRun(&load.Constant{Rate: 100}, 0, 2*time.Second, 500*time.Millisecond, gen)
	cfg.MaxInFlight = 8
	cfg.Timeout = 300 * time.Millisecond
	res, ticks, took := timedRun(t, cfg, httpTarget(t, testnet.SilentListener(t)), gen)
	checkLength(t, cfg, ticks, took, 300*time.Millisecond)
	m := res.Measured
	if m.Completed != 0 || m.Errors == 0 {
		t.Fatalf("completed %d, errors %d: want nothing completed and timeouts", m.Completed, m.Errors)
	}
	var timeouts int64
	for _, k := range ticks {
		timeouts += k.timeouts
		// The first 8 arrivals (0 to 70 ms) expire at 300 to 370 ms: the
		// first interval already has timeouts; every interval has drops.
		if k.timeouts == 0 || k.dropped == 0 {
			t.Errorf("interval %d: %d timeouts, %d dropped; want both", k.index, k.timeouts, k.dropped)
		}
	}
	if timeouts != m.Errors {
		t.Errorf("%d of %d errors are timeouts; want all", timeouts, m.Errors)
	}
	if got := m.Sent() + m.Dropped + res.Unfinished; got != 200 {
		t.Errorf("sent %d + dropped %d + unfinished %d = %d, want the 200 arrivals", m.Sent(), m.Dropped, res.Unfinished, got)
	}
	checkSilent(t, res)
}

func checkSilent(t *testing.T, res load.Result) {
	t.Helper()
	if strings.Contains(res.Note, "max_in_flight") || res.ClientLimited {
		t.Errorf("note %q (client limited %v): a silent target is not a reason for more slots", res.Note, res.ClientLimited)
	}
	if f := res.Failure(); !strings.Contains(f, "accepted connections but answered none within the timeout") {
		t.Errorf("failure %q; want it to say that the target answered none", f)
	}
}

// With a timeout longer than the run, a silent target still cannot stretch
// it: the requests in flight at the end are counted unfinished, and the
// measured arrivals are dropped in the intervals they were due in rather
// than in one interval after the run (review of issue 15: the run lasted
// the 10 s timeout instead of its 2 s).
func TestSilentTargetLongTimeoutEndsOnTime(t *testing.T) {
	gen := readGenerator(t)
	cfg := openRun(&load.Constant{Rate: 100}, 500*time.Millisecond, 1500*time.Millisecond, 500*time.Millisecond, gen)
	cfg.MaxInFlight = 8
	cfg.Timeout = 10 * time.Second
	res, ticks, took := timedRun(t, cfg, httpTarget(t, testnet.SilentListener(t)), gen)
	checkLength(t, cfg, ticks, took, 300*time.Millisecond)
	for _, k := range ticks[1:] {
		if k.dropped < 40 {
			t.Errorf("interval %d dropped %d of the 50 due in it", k.index, k.dropped)
		}
	}
	if res.Unfinished != 8 || res.Measured.Completed != 0 {
		t.Errorf("unfinished %d, completed %d: want the 8 requests holding the slots unfinished", res.Unfinished, res.Measured.Completed)
	}
	if got := res.Warmup.Sent() + res.Warmup.Dropped + res.Measured.Sent() + res.Measured.Dropped + res.Unfinished; got != 200 {
		t.Errorf("%d arrivals accounted for, want 200", got)
	}
	checkSilent(t, res)
}

// A target nobody listens for: every request fails to connect, the run
// ends on time and says that the target never answered, with the first
// socket error.
func TestRefusingTargetSaysSo(t *testing.T) {
	gen := readGenerator(t)
	cfg := openRun(&load.Constant{Rate: 200}, 0, time.Second, 500*time.Millisecond, gen)
	res, ticks, took := timedRun(t, cfg, httpTarget(t, testnet.RefusedAddress(t)), gen)
	checkLength(t, cfg, ticks, took, 300*time.Millisecond)
	if m := res.Measured; m.Completed != 0 || m.Errors < 190 {
		t.Fatalf("completed %d, errors %d: want every request refused", m.Completed, m.Errors)
	}
	f := res.Failure()
	if !strings.Contains(f, "never answered") || !strings.Contains(f, "connection refused") {
		t.Errorf("failure %q; want it to say the target never answered and give the socket error", f)
	}
}

// deafTarget's requests never return until the test ends, whatever their
// context says: a client that ignores cancellation.
type deafTarget struct{ gone chan struct{} }

func (d *deafTarget) Prepare(context.Context, workload.Config, bool) error { return nil }
func (d *deafTarget) NewClient(context.Context) (target.Client, error)     { return d, nil }
func (d *deafTarget) Close() error                                         { return nil }
func (d *deafTarget) Do(context.Context, *workload.Op) error               { <-d.gone; return nil }

// A client that ignores cancellation cannot stretch the run either: its
// requests are counted as timeouts when their timeout expires (their late
// answers are ignored), and the run ends on time.
func TestTargetIgnoringCancellationEndsOnTime(t *testing.T) {
	d := &deafTarget{gone: make(chan struct{})}
	defer close(d.gone)
	gen := readGenerator(t)
	cfg := openRun(&load.Constant{Rate: 100}, 0, time.Second, 500*time.Millisecond, gen)
	cfg.MaxInFlight = 4
	cfg.Timeout = 200 * time.Millisecond
	res, ticks, took := timedRun(t, cfg, d, gen)
	checkLength(t, cfg, ticks, took, 300*time.Millisecond)
	// The 4 requests sent at 0 to 30 ms time out at 200 to 230 ms; their
	// slots stay held by the deaf client, so everything after is dropped.
	if ticks[0].timeouts != 4 || ticks[1].timeouts != 0 || res.Measured.Errors != 4 {
		t.Errorf("timeouts per interval %d, %d (errors %d); want the 4 in the first", ticks[0].timeouts, ticks[1].timeouts, res.Measured.Errors)
	}
	if res.Measured.Dropped != 96 {
		t.Errorf("dropped %d, want the other 96 arrivals", res.Measured.Dropped)
	}
	checkSilent(t, res)
}
