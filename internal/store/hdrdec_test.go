package store

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The reusing decoder reads back exactly what the library's own decoder
// (hdrhistogram.Decode, the reference) reads, histogram after histogram
// into the same buffer: latency-like ones, ones spread over the whole
// range, an empty one, and one of another layout (decoded by the library).
func TestHdrDecoderAgreesWithTheLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var hs []*hdrhistogram.Histogram
	for i := range 40 {
		h := NewHistogram()
		switch i % 4 {
		case 0: // latency-like: a body and a tail
			for range 1 + rng.IntN(5000) {
				_ = h.RecordValue(int64(200 + rng.ExpFloat64()*800))
			}
		case 1: // anywhere in the range, with large counts
			for range 1 + rng.IntN(50) {
				_ = h.RecordValues(1+rng.Int64N(HistHighestMicros), 1+rng.Int64N(1<<40))
			}
		case 2: // a few values at the range's ends
			_ = h.RecordValue(HistLowestMicros)
			_ = h.RecordValue(HistHighestMicros)
		case 3: // empty
		}
		hs = append(hs, h)
	}
	other := hdrhistogram.New(1, 1000, 2)
	_ = other.RecordValues(17, 3)
	hs = append(hs, other)

	d := newHdrDecoder()
	for i, h := range hs {
		s, err := encodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		want, err := hdrhistogram.Decode([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.decode(s)
		if err != nil {
			t.Fatalf("histogram %d: %v", i, err)
		}
		if got.TotalCount() != want.TotalCount() || got.Max() != want.Max() || got.Min() != want.Min() ||
			!slices.Equal(got.Distribution(), want.Distribution()) {
			t.Fatalf("histogram %d: decoded %d values (min %d, max %d), the library %d (min %d, max %d)",
				i, got.TotalCount(), got.Min(), got.Max(), want.TotalCount(), want.Min(), want.Max())
		}
		for _, q := range []float64{50, 99, 99.9} {
			if got.ValueAtQuantile(q) != want.ValueAtQuantile(q) {
				t.Fatalf("histogram %d: p%v %d, the library's %d", i, q, got.ValueAtQuantile(q), want.ValueAtQuantile(q))
			}
		}
	}
}

func TestHdrDecoderRefusesDamage(t *testing.T) {
	h := NewHistogram()
	_ = h.RecordValues(500, 10)
	s, err := encodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	d := newHdrDecoder()
	for _, bad := range []string{"!!!", s[:len(s)/2], "AAAA"} {
		if _, err := d.decode(bad); err == nil {
			t.Errorf("%q decoded without an error", bad)
		}
	}
	// The decoder still works after a failure.
	if got, err := d.decode(s); err != nil || got.TotalCount() != 10 {
		t.Fatalf("after damage: %v, %v", got, err)
	}
}

func BenchmarkDecodeHist(b *testing.B) {
	h := NewHistogram()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		_ = h.RecordValue(int64(200 + rng.ExpFloat64()*800))
	}
	s, _ := encodeHist(h)
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := hdrhistogram.Decode([]byte(s)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reusing", func(b *testing.B) {
		d := newHdrDecoder()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.decode(s); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// An interval's MergeInto merges exactly as the library's Merge does:
// from the decoder's buckets for intervals EachInterval reads, from the
// histogram itself for others, and into a narrower histogram that drops
// what it cannot hold.
func TestMergeIntoAgreesWithTheLibrary(t *testing.T) {
	st, id, ivs := randomIntervals(t, 5, 30, 3000, 5000)
	mine, lib, narrow, narrowLib := NewHistogram(), NewHistogram(), hdrhistogram.New(1, 1000, 3), hdrhistogram.New(1, 1000, 3)
	walked := 0
	if err := st.EachInterval(id, "measure", func(iv *Interval) error {
		if iv.sparse == nil && iv.Hist.TotalCount() > 0 {
			t.Errorf("interval %d: EachInterval left no buckets for MergeInto", walked)
		}
		if d1, d2 := iv.MergeInto(mine), lib.Merge(iv.Hist); d1 != d2 || d1 != 0 {
			t.Errorf("interval %d: dropped %d, the library %d", walked, d1, d2)
		}
		if d1, d2 := iv.MergeInto(narrow), narrowLib.Merge(iv.Hist); d1 != d2 {
			t.Errorf("interval %d into 1 ms at most: dropped %d, the library %d", walked, d1, d2)
		}
		walked++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if walked != 30 || !slices.Equal(mine.Distribution(), lib.Distribution()) || mine.TotalCount() != lib.TotalCount() ||
		!slices.Equal(narrow.Distribution(), narrowLib.Distribution()) {
		t.Fatalf("merged %d values, the library %d (%d intervals walked)", mine.TotalCount(), lib.TotalCount(), walked)
	}
	// An interval built in memory merges through the library.
	if d := ivs[0].MergeInto(NewHistogram()); d != 0 {
		t.Errorf("in-memory interval: dropped %d", d)
	}
}

// CountAtMost counts what a walk over the histogram's buckets counts as
// wholly at or below a limit, from the decoder's buckets for intervals
// EachInterval reads: at limits on, just below and just above bucket
// edges, and at the extremes.
func TestCountAtMostAgreesWithTheBuckets(t *testing.T) {
	st, id, ivs := randomIntervals(t, 7, 20, 2000, 20000)
	walk := func(dist []hdrhistogram.Bar, limit int64) (n int64) {
		for _, b := range dist {
			if b.Count > 0 && b.To <= limit {
				n += b.Count
			}
		}
		return n
	}
	checked := 0
	if err := st.EachInterval(id, "measure", func(iv *Interval) error {
		limits := []int64{0, 1, 1 << 40}
		dist := iv.Hist.Distribution()
		for _, b := range dist {
			if b.Count > 0 {
				limits = append(limits, b.From-1, b.From, b.To-1, b.To, b.To+1)
			}
		}
		for _, l := range limits {
			if got, want := iv.CountAtMost(l), walk(dist, l); got != want {
				t.Fatalf("interval at %v, limit %d µs: %d within, the buckets say %d", iv.Start, l, got, want)
			}
			checked++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if checked < 1000 {
		t.Fatalf("only %d limits checked", checked)
	}
	// An interval built in memory counts through its histogram.
	if got, want := ivs[3].CountAtMost(5000), walk(ivs[3].Hist.Distribution(), 5000); got != want {
		t.Errorf("in-memory interval: %d within 5 ms, the buckets say %d", got, want)
	}
}

// randomIntervals stores n one-second intervals of one run in a new store
// (closed at the end of the test), each with up to most latencies drawn
// from an exponential distribution of mean µs (seeded by seed).
func randomIntervals(t *testing.T, seed uint64, n, most int, mean float64) (*Store, int64, []Interval) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed+1))
	st, err := Create(t.TempDir()+"/results.db", Campaign{Name: "m", SpecYAML: "name: m"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	id, err := st.StartRun(Run{Model: "open", Level: 1, Repetition: 1, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	var ivs []Interval
	for i := range n {
		h := NewHistogram()
		for range rng.IntN(most) {
			_ = h.RecordValue(1 + int64(rng.ExpFloat64()*mean))
		}
		ivs = append(ivs, Interval{RunID: id, Phase: "measure", Op: "read", Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second, Count: h.TotalCount(), Hist: h})
	}
	if err := st.AddIntervals(ivs); err != nil {
		t.Fatal(err)
	}
	return st, id, ivs
}

// EachAgentInterval yields the rows AgentIntervals returns, in its order,
// with equal histograms (decoded into one reused histogram, and merged
// from their non-zero buckets as the library would merge them), and only
// the phase asked for.
func TestEachAgentIntervalMatchesAgentIntervals(t *testing.T) {
	st, id, ivs := randomIntervals(t, 5, 40, 300, 2000)
	for i, agent := range []string{"a1", "a2"} {
		rows := make([]Interval, len(ivs))
		for k, iv := range ivs {
			rows[k] = iv
			if k < 3 {
				rows[k].Phase = "warmup"
			}
			rows[k].Start = iv.Start.Add(time.Duration(i) * time.Millisecond)
		}
		if err := st.AddAgentIntervals(agent, rows); err != nil {
			t.Fatal(err)
		}
	}
	all, err := st.AgentIntervals(id, "")
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	mergedLib, mergedSparse := NewHistogram(), NewHistogram()
	err = st.EachAgentInterval(id, "", func(a *AgentInterval) error {
		w := all[k]
		k++
		if a.Agent != w.Agent || a.Phase != w.Phase || a.Op != w.Op || !a.Start.Equal(w.Start) || a.Count != w.Count || !a.Hist.Equals(w.Hist) {
			t.Fatalf("row %d: %s %s %v %d, AgentIntervals' %s %s %v %d", k, a.Agent, a.Phase, a.Start, a.Count, w.Agent, w.Phase, w.Start, w.Count)
		}
		mergedLib.Merge(w.Hist)
		a.MergeInto(mergedSparse)
		return nil
	})
	if err != nil || k != len(all) || k != 80 {
		t.Fatalf("%d of %d rows (%v)", k, len(all), err)
	}
	if !mergedSparse.Equals(mergedLib) {
		t.Error("merging the streamed rows differs from the library's merge")
	}
	n := 0
	if err := st.EachAgentInterval(id, "measure", func(a *AgentInterval) error {
		if a.Phase != "measure" {
			t.Errorf("phase %s in a read of measured rows", a.Phase)
		}
		n++
		return nil
	}); err != nil || n != 74 {
		t.Errorf("%d measured rows (%v); want 74", n, err)
	}
}
