package load

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/testbusy"
	"github.com/headroom-dev/headroom/internal/workload"
)

// spin keeps the processor busy for d without giving it up.
func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// TestClientDelayMeasuresAKnownWait injects a known scheduler delay: on one
// processor, two goroutines hand a token back and forth, and each, right
// after waking the other, keeps the processor busy for inject before it
// blocks. Every wake-up therefore waits inject for the processor, and the
// measured p50 and p99 must be inject within the histogram's resolution.
func TestClientDelayMeasuresAKnownWait(t *testing.T) {
	const inject = 2 * time.Millisecond
	idle := testbusy.Start()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// Buffered, so that a hand-over wakes the other goroutine without
	// blocking the one that hands over: it keeps the processor for inject.
	a, b := make(chan struct{}, 1), make(chan struct{}, 1)
	const rounds = 400 // the runtime samples one wake-up in eight
	from := readSched()
	if from == nil {
		t.Fatal("the runtime gives no scheduling-latency histogram")
	}
	done := make(chan struct{}, 2)
	pingPong := func(mine, other chan struct{}) {
		defer func() { done <- struct{}{} }()
		for i := 0; i < rounds; i++ {
			<-mine
			other <- struct{}{}
			spin(inject)
		}
	}
	go pingPong(a, b)
	go pingPong(b, a)
	a <- struct{}{}
	<-done
	<-done
	d := delaySince(from, readSched())
	if d.Samples < rounds/8 {
		t.Fatalf("only %d wake-ups sampled over %d hand-overs", d.Samples, 2*rounds)
	}
	t.Logf("injected %v: measured p50 %v, p99 %v over %d sampled wake-ups", inject, d.P50, d.P99, d.Samples)
	var findings []string
	for name, got := range map[string]time.Duration{"p50": d.P50, "p99": d.P99} {
		if got < inject*75/100 || got > inject*125/100 {
			findings = append(findings, fmt.Sprintf("measured %s client-side delay %v, want %v ± 25%% (%d samples)", name, got, inject, d.Samples))
		}
	}
	idle.Judge(t, findings)
}

// TestClientDelayExcludesTheTarget: a target that takes a known time to
// answer (a sleep: its goroutine is parked, not waiting for a processor)
// adds to the latency, not to the client-side delay.
func TestClientDelayExcludesTheTarget(t *testing.T) {
	const service = 2 * time.Millisecond
	idle := testbusy.Start()
	res := runSleepy(t, service, 4)
	if res.Client.Delay.Samples == 0 {
		t.Fatal("no scheduler wake-up was sampled in the measured phase")
	}
	var findings []string
	if res.Client.Delay.P50 > service/4 {
		findings = append(findings, fmt.Sprintf("client-side delay p50 %v against a target that sleeps %v: the target's time was counted as the client's", res.Client.Delay.P50, service))
	}
	// Under -race the instrumented client really is slow (a CI run saw a
	// 1.2 ms p99 wake-up delay), so the note is then right to warn.
	if strings.Contains(res.Note, "client-side delay") && !raceDetector {
		findings = append(findings, fmt.Sprintf("note warns of client-side delay on an idle client: %q", res.Note))
	}
	idle.Judge(t, findings)
}

// TestDelayNoteWarnsWhenMaterial: the warning names the delay and its share
// of the judged percentile only when the share passes a tenth, and only
// when enough sampled wake-ups waited that long.
func TestDelayNoteWarnsWhenMaterial(t *testing.T) {
	lat := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	for i := 0; i < 1000; i++ {
		_ = lat.RecordValue(1000) // every request took 1 ms
	}
	f := ClientFacts{Latency: lat}
	us := time.Microsecond
	if n := delayNote(delayOf(t, 20*us, 90, 90*us, 10), f, 99); n != "" {
		t.Errorf("a 90 µs p99 delay against a 1 ms p99 is under a tenth, got note %q", n)
	}
	d := delayOf(t, 100*us, 80, 400*us, 20)
	n := delayNote(d, f, 99)
	for _, want := range []string{"p50 " + roundDelay(d.P50).String(), "p99 " + roundDelay(d.P99).String(), "of the measured p99 of 1ms"} {
		if !strings.Contains(n, want) {
			t.Errorf("note %q does not say %q", n, want)
		}
	}
	// Two slow wake-ups in a hundred: the p99 is the second slowest and
	// passes the tenth, but two wake-ups are not a busy client.
	d = delayOf(t, 10*us, 98, 400*us, 2)
	if d.P99 <= 100*us {
		t.Fatalf("the two slow wake-ups should be the p99: %+v", d)
	}
	if n := delayNote(d, f, 99); n != "" {
		t.Errorf("two slow wake-ups of a hundred warned: %q", n)
	}
	if got := d.Above(100 * us); got != 2 {
		t.Errorf("wake-ups above 100µs: %d, want 2", got)
	}
}

// delayOf is the client-side delay of n1 wake-ups that waited w1 and n2
// that waited w2, bucketed as the runtime buckets them.
func delayOf(t *testing.T, w1 time.Duration, n1 uint64, w2 time.Duration, n2 uint64) ClientDelay {
	t.Helper()
	from := readSched()
	if from == nil {
		t.Skip("this Go runtime has no scheduling-latency histogram")
	}
	to := &schedSnapshot{counts: append([]uint64(nil), from.counts...), buckets: from.buckets}
	for _, w := range []struct {
		d time.Duration
		n uint64
	}{{w1, n1}, {w2, n2}} {
		s := w.d.Seconds()
		for i := range to.counts {
			if from.buckets[i] <= s && s < from.buckets[i+1] {
				to.counts[i] += w.n
				break
			}
		}
	}
	return delaySince(from, to)
}

// sleepyFactory is a target whose clients sleep d per request.
type sleepyFactory struct{ d time.Duration }

func (sleepyFactory) Prepare(context.Context, workload.Config, bool) error { return nil }
func (f sleepyFactory) NewClient(context.Context) (target.Client, error) {
	return sleepyClient(f), nil
}
func (sleepyFactory) Close() error { return nil }

type sleepyClient struct{ d time.Duration }

func (s sleepyClient) Do(context.Context, *workload.Op) error { time.Sleep(s.d); return nil }
func (sleepyClient) Close() error                             { return nil }

// runSleepy runs a short closed loop of n clients against a target whose
// every request sleeps d.
func runSleepy(t *testing.T, d time.Duration, n int) Result {
	t.Helper()
	wl, err := workload.Preset("c")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := workload.New(wl, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Model: "closed", Clients: n, Timeout: time.Second, Warmup: 100 * time.Millisecond,
		Measure: 500 * time.Millisecond, Interval: 100 * time.Millisecond, Ops: wl.Ops()}
	res, err := Run(context.Background(), cfg, sleepyFactory{d}, gen, func(Tick) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return res
}
