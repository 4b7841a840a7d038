package esl

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// discreteSamples returns counts[i] copies of values[i], shuffled with a
// fixed seed: per-second samples whose distribution is known exactly.
func discreteSamples(seed uint64, values []float64, counts []int) []float64 {
	var xs []float64
	for i, v := range values {
		for range counts[i] {
			xs = append(xs, v)
		}
	}
	r := rand.New(rand.NewPCG(seed, 1))
	r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	return xs
}

func TestBuildRecoversKnownDistribution(t *testing.T) {
	// 120 seconds at 290, 300 and 310 ops/s in shares 1/6, 2/3, 1/6, and
	// the matching bandwidth of 4 KiB ops. 20 bins over [290, 310] are 1
	// wide, so each value is its own level.
	ops := discreteSamples(7, []float64{290, 300, 310}, []int{20, 80, 20})
	bytes := make([]float64, len(ops))
	for i, o := range ops {
		bytes[i] = o * 4096
	}
	m, err := Build("synthetic", []BenchmarkRun{{OpSizeKiB: 4, ReadPct: 100, OpsPerS: ops, BytesPerS: bytes}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.Bins != DefaultBins {
		t.Fatalf("bins = %d", m.Bins)
	}
	e, err := m.ESL(OpsPerS, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []Level{{290, 1.0 / 6}, {300, 2.0 / 3}, {310, 1.0 / 6}}
	if len(e.Levels) != 3 {
		t.Fatalf("levels = %+v", e.Levels)
	}
	for i, l := range want {
		if !near(e.Levels[i].Value, l.Value, 1e-9) || !near(e.Levels[i].Freq, l.Freq, 1e-12) {
			t.Fatalf("level %d = %+v, want %+v", i, e.Levels[i], l)
		}
	}
	b, _ := m.ESL(BytesPerS, 4)
	if !near(b.Mean(), 300*4096, 1e-6) {
		t.Fatalf("bandwidth mean = %v", b.Mean())
	}
}

// With continuous samples the harmonic-mean levels keep sum_j f_j/s_j equal
// to the mean of 1/s over the samples, whatever the bin count, so SLP is
// exact. The mean moves little: at one bin the level is the harmonic mean
// of all samples, lower than their mean by about var/mean = 25/300.
func TestBuildKeepsMeanInverse(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	var xs []float64
	var inv, sum float64
	for range 600 {
		x := 300 + 5*r.NormFloat64()
		xs = append(xs, x)
		inv += 1 / x
		sum += x
	}
	inv /= float64(len(xs))
	for _, bins := range []int{1, 5, 20, 200} {
		m, err := Build("", []BenchmarkRun{{OpSizeKiB: 4, ReadPct: 50, OpsPerS: xs}}, bins)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := m.ESL(OpsPerS, 4)
		var got float64
		for _, l := range e.Levels {
			got += l.Freq / l.Value
		}
		if !near(got, inv, 1e-15) {
			t.Fatalf("bins %d: sum f/s = %v, want %v", bins, got, inv)
		}
		if len(e.Levels) > bins || !near(e.Mean(), sum/600, 0.1) {
			t.Fatalf("bins %d: %d levels, mean %v vs %v", bins, len(e.Levels), e.Mean(), sum/600)
		}
	}
}

func TestBuildPoolsMixesAndCountsZeros(t *testing.T) {
	runs := []BenchmarkRun{
		{OpSizeKiB: 4, ReadPct: 100, OpsPerS: []float64{300, 300, 0}},
		{OpSizeKiB: 4, ReadPct: 100, OpsPerS: []float64{300}}, // a repetition
		{OpSizeKiB: 4, ReadPct: 0, OpsPerS: []float64{200, 200, 200, 200}},
	}
	m, err := Build("", runs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Entries) != 2 || m.Entries[0].ReadPct != 100 || m.Entries[0].Samples != 3 || m.Entries[0].Zero != 1 {
		t.Fatalf("entries = %+v", m.Entries)
	}
	// Pooled by sample count: 3 at 300, 4 at 200.
	e, _ := m.ESL(OpsPerS, 4)
	if len(e.Levels) != 2 || !near(e.Levels[0].Freq, 4.0/7, 1e-12) || !near(e.Mean(), (3*300+4*200)/7.0, 1e-9) {
		t.Fatalf("pooled = %+v", e.Levels)
	}
	if !strings.Contains(e.Source, "7 samples") {
		t.Fatalf("source = %q", e.Source)
	}
	// The built model survives JSON.
	js, _ := json.Marshal(m)
	back, err := Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	if e2, _ := back.ESL(OpsPerS, 4); e2.Mean() != e.Mean() {
		t.Fatalf("round trip mean %v != %v", e2.Mean(), e.Mean())
	}

	for _, c := range []struct {
		runs []BenchmarkRun
		want string
	}{
		{nil, "no benchmark runs"},
		{[]BenchmarkRun{{OpSizeKiB: 0, OpsPerS: []float64{1}}}, "op size 0 KiB"},
		{[]BenchmarkRun{{OpSizeKiB: 4, ReadPct: 101, OpsPerS: []float64{1}}}, "read share 101"},
		{[]BenchmarkRun{{OpSizeKiB: 4}}, "no samples"},
		{[]BenchmarkRun{{OpSizeKiB: 4, OpsPerS: []float64{-1}}}, "sample 1 is -1"},
		{[]BenchmarkRun{{OpSizeKiB: 4, OpsPerS: []float64{0, 0}}}, "every ops_per_s sample"},
	} {
		if _, err := Build("", c.runs, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%+v: err = %v, want %q", c.runs, err, c.want)
		}
	}
	if _, err := Build("", runs, -1); err == nil {
		t.Fatal("negative bins must fail")
	}
	if math.IsNaN(m.Nearest(3)) {
		t.Fatal("nearest")
	}
}

func TestZeroEmpiricalDoesNotPanic(t *testing.T) {
	var m Empirical
	if _, err := m.ESL(OpsPerS, 4); err == nil || !math.IsNaN(m.Nearest(4)) {
		t.Fatal("an empty model must give an error and NaN")
	}
}

// The pooled ESL of an op size must not depend on the order of the
// entries (Build collects them from a map): the same entries in any order
// give bit-identical levels, so an SLP exactly at a threshold cannot flip
// from one run of the command to the next.
func TestPoolingIsOrderIndependent(t *testing.T) {
	entries := []Entry{
		{OpSizeKiB: 4, ReadPct: 100, Quality: OpsPerS, Samples: 7, Levels: []Level{{290, 0.1}, {300, 0.7}, {310, 0.2}}},
		{OpSizeKiB: 4, ReadPct: 75, Quality: OpsPerS, Samples: 11, Levels: []Level{{291, 0.3}, {300, 0.3}, {309, 0.4}}},
		{OpSizeKiB: 4, ReadPct: 50, Quality: OpsPerS, Samples: 13, Levels: []Level{{290, 1.0 / 3}, {300, 1.0 / 3}, {311, 1.0 / 3}}},
		{OpSizeKiB: 4, ReadPct: 25, Quality: OpsPerS, Samples: 3, Levels: []Level{{300, 0.6}, {305, 0.4}}},
		{OpSizeKiB: 4, ReadPct: 0, Quality: OpsPerS, Samples: 17, Levels: []Level{{289, 0.15}, {300, 0.35}, {312, 0.5}}},
	}
	var ref ESL
	perm := rand.New(rand.NewPCG(3, 4))
	for i := range 50 {
		es := append([]Entry(nil), entries...)
		perm.Shuffle(len(es), func(a, b int) { es[a], es[b] = es[b], es[a] })
		m, err := newEmpirical(empiricalDoc{Kind: KindEmpirical, Entries: es})
		if err != nil {
			t.Fatal(err)
		}
		e, err := m.ESL(OpsPerS, 4)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			ref = e
			continue
		}
		if len(e.Levels) != len(ref.Levels) {
			t.Fatalf("order %d: %d levels, want %d", i, len(e.Levels), len(ref.Levels))
		}
		for j := range e.Levels {
			if e.Levels[j] != ref.Levels[j] {
				t.Fatalf("order %d: level %d = %+v, want %+v (bit for bit)", i, j, e.Levels[j], ref.Levels[j])
			}
		}
	}
}
