package agent

import (
	"math/rand/v2"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/store"
)

// The merged histogram of three agents' histograms is the histogram of all
// their values: every bucket, every percentile, exactly.
func TestMergeEqualsOneHistogramOfAllValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	all := store.NewHistogram()
	var parts [][]Stat
	for a := range 3 {
		h := store.NewHistogram()
		// Different shapes per agent: a fast one, a slow one, one with a
		// long tail, so that the merged percentiles differ from each.
		for range 20000 + 7000*a {
			v := int64(50 + rng.ExpFloat64()*float64(200*(a+1)))
			if a == 2 && rng.IntN(100) == 0 {
				v = 1_000_000 + rng.Int64N(5_000_000)
			}
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
			_ = all.RecordValue(v)
		}
		// Through the wire encoding, as the coordinator receives it.
		enc, err := EncodeStat(Stat{Phase: "measure", Op: "read", Count: h.TotalCount(), Errors: int64(a), ErrorKinds: map[string]int64{"timeout": int64(a)}, Hist: h})
		if err != nil {
			t.Fatal(err)
		}
		st, err := DecodeStats([]OpStat{enc})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, st)
	}
	merged, err := Merge(parts...)
	if err != nil {
		t.Fatal(err)
	}
	if len(merged) != 1 {
		t.Fatalf("merged %d stats, want 1", len(merged))
	}
	m := merged[0]
	if m.Count != all.TotalCount() || m.Hist.TotalCount() != all.TotalCount() || m.Errors != 3 || m.ErrorKinds["timeout"] != 3 {
		t.Errorf("merged count %d (hist %d), errors %d %v; want %d and 3 timeouts", m.Count, m.Hist.TotalCount(), m.Errors, m.ErrorKinds, all.TotalCount())
	}
	for _, q := range []float64{0, 1, 10, 50, 90, 95, 99, 99.9, 99.99, 100} {
		if got, want := m.Hist.ValueAtQuantile(q), all.ValueAtQuantile(q); got != want {
			t.Errorf("p%v: merged %d, all values %d", q, got, want)
		}
	}
	if !m.Hist.Equals(all) {
		t.Error("the merged histogram's buckets differ from those of the histogram of all values")
	}
}

// A histogram of another range or precision has other buckets: it is
// refused with a sentence, not merged approximately.
func TestMergeRefusesAnotherGeometry(t *testing.T) {
	other := hdrhistogram.New(1, 3_600_000_000, 2)
	_ = other.RecordValue(123)
	enc, err := store.EncodeHistogram(other)
	if err != nil {
		t.Fatal(err)
	}
	_, err = DecodeStats([]OpStat{{Phase: "measure", Op: "read", Count: 1, Hist: enc}})
	if err == nil || !strings.Contains(err.Error(), "cannot be merged exactly") {
		t.Errorf("decoding a histogram of another geometry: %v", err)
	}
	_, err = Merge([]Stat{{Phase: "measure", Op: "read", Count: 1, Hist: other}})
	if err == nil || !strings.Contains(err.Error(), "1..3600000000 µs at 2 significant digits") {
		t.Errorf("merging a histogram of another geometry: %v", err)
	}
}
