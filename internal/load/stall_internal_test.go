package load

import (
	"testing"
	"time"
)

// Three clients' silences, written by hand: the quiet periods are where all
// three are silent at once, clipped to the measured phase, with the clients
// that had a request in flight counted.
func TestQuietPeriodsIntersect(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	c1 := &clientWatch{started: true, prevEnd: ms(1000), log: []silence{
		{from: ms(10), start: ms(10), to: ms(60)},    // in flight throughout
		{from: ms(200), start: ms(290), to: ms(400)}, // thinking until 290
	}}
	c2 := &clientWatch{started: true, prevEnd: ms(1000), log: []silence{
		{from: ms(20), start: ms(20), to: ms(50)},
		{from: ms(250), start: ms(250), to: ms(380)},
	}}
	c3 := &clientWatch{started: true, prevEnd: ms(1000), log: []silence{
		{from: ms(0), start: ms(0), to: ms(55)},
		{from: ms(100), start: ms(100), to: ms(150)}, // alone: not quiet
		{from: ms(260), start: ms(270), to: ms(500)},
	}}
	got := quietPeriods([]*clientWatch{c1, c2, c3}, ms(15), ms(900))
	want := []Quiet{
		{Start: 20 * time.Millisecond, End: 50 * time.Millisecond, Waiting: 3},
		{Start: 260 * time.Millisecond, End: 380 * time.Millisecond, Waiting: 3},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("period %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// Clipped at the start of the measured phase; c1 was thinking for the
	// whole of (200, 250) in the second case below.
	got = quietPeriods([]*clientWatch{c1, c3}, ms(30), ms(280))
	if len(got) != 2 || got[0].Start != 30*time.Millisecond || got[0].End != 55*time.Millisecond ||
		got[1].Start != 260*time.Millisecond || got[1].End != 280*time.Millisecond || got[1].Waiting != 1 {
		t.Errorf("clipped: %+v", got)
	}
}

// A client's log keeps the long silences when it fills: the floor rises,
// shorter ones go, and every silence above the highest floor stays.
func TestClientWatchCompacts(t *testing.T) {
	// 100 µs requests; every 10th takes 10 to 70 ms (2,000 of them, more
	// than the log holds), every 1,000th 1 s.
	lat := func(i int) int64 {
		switch {
		case i%1000 == 999:
			return int64(time.Second)
		case i%10 == 0:
			return int64(i%7+1) * int64(10*time.Millisecond)
		}
		return int64(100 * time.Microsecond)
	}
	const n = 20_000
	c := &clientWatch{}
	now := int64(0)
	c.start(now)
	for i := range n {
		now += lat(i)
		c.done(now)
		c.start(now)
	}
	if len(c.log) > watchLogCap || c.maxFloor <= int64(400*time.Microsecond) || c.maxFloor >= int64(time.Second) {
		t.Fatalf("log holds %d silences (cap %d), highest floor %v", len(c.log), watchLogCap, time.Duration(c.maxFloor))
	}
	kept, above := 0, 0
	for _, s := range c.log {
		if s.to-s.from > c.maxFloor {
			kept++
		}
	}
	for i := range n {
		if lat(i) > c.maxFloor {
			above++
		}
	}
	if kept != above || above < 20 {
		t.Errorf("highest floor %v: kept %d of the %d silences above it", time.Duration(c.maxFloor), kept, above)
	}
}

// The latency buckets: every value from 8 ns on lies in its bucket's range,
// a quarter octave wide (below that, latencies are not measurable anyway).
func TestWatchBuckets(t *testing.T) {
	for _, x := range []int64{8, 9, 15, 16, 1000, 1023, 1024, 1_000_000, 1<<40 - 1, 1 << 40} {
		i := bucketOf(x)
		if lo, hi := bucketLow(i), bucketLow(i+1); x < lo || x >= hi {
			t.Errorf("%d in bucket %d [%d, %d)", x, i, lo, hi)
		}
	}
}

// BenchmarkClientWatch is the stall watch's cost per closed-loop request
// (start and done; docs/performance.md): a few nanoseconds, no allocation.
func BenchmarkClientWatch(b *testing.B) {
	c := &clientWatch{log: make([]silence, 0, 64)}
	now := int64(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.start(now)
		now += 1000 + int64(i&255)
		c.done(now)
	}
}
