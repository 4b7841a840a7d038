package clockoffset

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// Synthetic exchanges with a known offset: the server reads its clock at a
// random moment inside each round trip, and the round trips vary. The
// estimate must lie within its own uncertainty of the truth, and the
// shortest round trip is the one used.
func TestEstimateFindsAKnownOffset(t *testing.T) {
	const offset = 3*time.Millisecond + 250*time.Microsecond
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for trial := 0; trial < 200; trial++ {
		var xs []Exchange
		shortest := time.Hour
		for i := 0; i < 8; i++ {
			sent := base.Add(time.Duration(i) * time.Second)
			rt := time.Duration(50+rng.IntN(2000)) * time.Microsecond
			shortest = min(shortest, rt)
			at := sent.Add(time.Duration(rng.Int64N(int64(rt) + 1))) // the server's read, on our clock
			server := at.Add(offset).Truncate(time.Microsecond)      // its clock's microsecond step
			xs = append(xs, Exchange{Sent: sent, Received: sent.Add(rt), Server: server})
		}
		e, err := FromExchanges(xs, time.Microsecond)
		if err != nil {
			t.Fatal(err)
		}
		if e.RoundTrip != shortest || e.Uncertainty != shortest/2+time.Microsecond {
			t.Fatalf("estimate from round trip %v (uncertainty %v), want the shortest, %v", e.RoundTrip, e.Uncertainty, shortest)
		}
		if d := (e.Offset - offset).Abs(); d > e.Uncertainty {
			t.Fatalf("offset %v is %v from the true %v, beyond its uncertainty %v", e.Offset, d, offset, e.Uncertainty)
		}
	}
}

// A symmetric exchange gives the offset exactly; a server ahead by 1 s
// and one behind by 1 s get opposite signs.
func TestOffsetSign(t *testing.T) {
	sent := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, want := range []time.Duration{time.Second, -time.Second, 0} {
		x := Exchange{Sent: sent, Received: sent.Add(2 * time.Millisecond), Server: sent.Add(time.Millisecond + want)}
		if got := x.Offset(); got != want {
			t.Errorf("offset = %v, want %v", got, want)
		}
	}
}

// The run's estimate is the mean of its start and end, and its bound
// covers both plus the drift between them.
func TestCombine(t *testing.T) {
	s := Estimate{Offset: 1 * time.Millisecond, Uncertainty: 100 * time.Microsecond, RoundTrip: 200 * time.Microsecond, Exchanges: 5}
	e := Estimate{Offset: 3 * time.Millisecond, Uncertainty: 50 * time.Microsecond, RoundTrip: 100 * time.Microsecond, Exchanges: 5}
	c := Combine(s, e)
	if c.Offset != 2*time.Millisecond || c.Uncertainty != 1100*time.Microsecond || c.RoundTrip != 100*time.Microsecond || c.Exchanges != 10 {
		t.Errorf("Combine = %+v", c)
	}
}

func TestBadExchanges(t *testing.T) {
	if _, err := FromExchanges(nil, 0); err == nil {
		t.Error("no exchanges gave an estimate")
	}
	now := time.Now()
	if _, err := FromExchanges([]Exchange{{Sent: now, Received: now.Add(-time.Millisecond)}}, 0); err == nil {
		t.Error("a negative round trip gave an estimate")
	}
}

// Measure against this machine's own clock: the offset is within the
// uncertainty of zero.
func TestMeasureOwnClock(t *testing.T) {
	e, err := Measure(context.Background(), 5, 0, func(context.Context) (time.Time, error) { return time.Now(), nil })
	if err != nil {
		t.Fatal(err)
	}
	if e.Offset.Abs() > e.Uncertainty+time.Microsecond || e.Exchanges != 5 {
		t.Errorf("own clock: %+v", e)
	}
}
