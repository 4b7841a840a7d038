// Package clockoffset estimates the offset between the load generator's
// clock and a server's, NTP-style, from round trips that ask the server
// for its time (seed-digest §5: staleness across hosts is only as good as
// their clocks, so the offset is measured and its uncertainty reported).
//
// One exchange: the load generator reads its clock (t0), asks the server
// for its time (s), and reads its clock again (t1). If the server read its
// clock at some moment within [t0, t1], then
//
//	offset = s - (t0 + t1)/2            (server clock minus ours)
//	|error| <= (t1 - t0)/2 + resolution (the server's clock step)
//
// The exchange with the smallest round trip bounds the error best, so it
// gives the estimate (Cristian's algorithm; NTP's clock filter keeps the
// same minimum-delay sample).
package clockoffset

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Exchange is one round trip: the load generator's clock before and after,
// and the server's time in between.
type Exchange struct {
	Sent, Received time.Time // load generator clock
	Server         time.Time // server clock
}

// RoundTrip is the exchange's duration on the load generator's clock.
func (e Exchange) RoundTrip() time.Duration { return e.Received.Sub(e.Sent) }

// Offset is the server's clock minus the load generator's at the
// exchange's midpoint.
func (e Exchange) Offset() time.Duration {
	mid := e.Sent.Add(e.RoundTrip() / 2)
	return e.Server.Sub(mid)
}

// Estimate is an offset and the bound on its error.
type Estimate struct {
	Offset      time.Duration // server clock - load generator clock
	Uncertainty time.Duration // |true offset - Offset| <= Uncertainty
	RoundTrip   time.Duration // of the exchange the estimate is from
	Exchanges   int
}

// FromExchanges estimates the offset from the exchange with the smallest
// round trip; resolution is the server clock's step. It fails on no
// exchanges or on one whose round trip is negative (a clock that jumped).
func FromExchanges(xs []Exchange, resolution time.Duration) (Estimate, error) {
	if len(xs) == 0 {
		return Estimate{}, errors.New("no clock exchanges to estimate an offset from")
	}
	best := -1
	for i, x := range xs {
		if x.RoundTrip() < 0 {
			return Estimate{}, fmt.Errorf("exchange %d has a negative round trip (%v): the load generator's clock went back", i, x.RoundTrip())
		}
		if best < 0 || x.RoundTrip() < xs[best].RoundTrip() {
			best = i
		}
	}
	b := xs[best]
	return Estimate{Offset: b.Offset(), Uncertainty: b.RoundTrip()/2 + resolution, RoundTrip: b.RoundTrip(), Exchanges: len(xs)}, nil
}

// Combine joins the estimates taken at a run's start and end into one for
// the run: their mean, uncertain by the larger of their uncertainties plus
// half their difference (the clocks' drift over the run, which a point in
// between may be anywhere within).
func Combine(start, end Estimate) Estimate {
	drift := end.Offset - start.Offset
	if drift < 0 {
		drift = -drift
	}
	return Estimate{
		Offset:      start.Offset + (end.Offset-start.Offset)/2,
		Uncertainty: max(start.Uncertainty, end.Uncertainty) + drift/2,
		RoundTrip:   min(start.RoundTrip, end.RoundTrip),
		Exchanges:   start.Exchanges + end.Exchanges,
	}
}

// Measure makes n exchanges through now (which asks the server its time)
// and estimates the offset from them. The load generator's clock is read
// with its wall reading (the monotonic reading is stripped), since the
// server's time is a wall time.
func Measure(ctx context.Context, n int, resolution time.Duration, now func(context.Context) (time.Time, error)) (Estimate, error) {
	xs := make([]Exchange, 0, n)
	for i := 0; i < n; i++ {
		sent := time.Now()
		s, err := now(ctx)
		received := time.Now()
		if err != nil {
			return Estimate{}, err
		}
		// A monotonic-clock difference is the true round trip; the wall
		// readings place the exchange against the server's wall clock.
		rt := received.Sub(sent)
		sent = sent.Round(0)
		xs = append(xs, Exchange{Sent: sent, Received: sent.Add(rt), Server: s})
	}
	return FromExchanges(xs, resolution)
}
