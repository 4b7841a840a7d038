package esl

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// DefaultBins is how many equal-width bins Build uses per (op size, mix,
// quality) when given 0.
const DefaultBins = 20

// BenchmarkRun is one benchmark of a service at one operation size and
// read/write mix: its per-second samples (seed-digest §4: the per-second
// samples of the run phase form the ESL distribution). Several runs with
// the same size and mix (repetitions, instances) are pooled.
type BenchmarkRun struct {
	OpSizeKiB float64
	ReadPct   float64   // share of reads, 0..100 (100 = R100, 75 = R75/W25)
	OpsPerS   []float64 // one value per second of the measured phase
	BytesPerS []float64 // likewise; either slice may be empty when not measured
}

// Entry is the distribution of one quality at one op size and mix.
type Entry struct {
	OpSizeKiB float64 `yaml:"op_size_kib" json:"op_size_kib"`
	ReadPct   float64 `yaml:"read_pct" json:"read_pct"`
	Quality   Quality `yaml:"quality" json:"quality"`
	Samples   int     `yaml:"samples" json:"samples"`               // positive per-second samples behind Levels
	Zero      int     `yaml:"zero,omitempty" json:"zero,omitempty"` // samples of 0 left out (an ESL level must be positive)
	Levels    []Level `yaml:"levels" json:"levels"`
}

// Empirical is a benchmark-based model: one distribution per (op size,
// mix, quality). ESL pools the mixes of an op size, since seed 000 §4.3
// saw no significant difference between them; ESLMix keeps them apart.
type Empirical struct {
	Name    string
	Bins    int     // bins used by Build (0 when the file did not say)
	Entries []Entry // sorted by op size, read share, quality

	sizes  []float64             // benchmarked op sizes, ascending
	pooled map[pooledKey]pooledE // by op size and quality, all mixes
}

type pooledKey struct {
	size float64
	q    Quality
}

type pooledE struct {
	esl     ESL
	samples int
}

type empiricalDoc struct {
	Kind    string  `yaml:"kind" json:"kind"`
	Name    string  `yaml:"name,omitempty" json:"name,omitempty"`
	Bins    int     `yaml:"bins,omitempty" json:"bins,omitempty"`
	Entries []Entry `yaml:"entries" json:"entries"`
}

// Build bins the per-second samples of the runs into one distribution per
// (op size, mix, quality). Each group's range [min, max] is cut into bins
// equal-width bins (DefaultBins when 0); every non-empty bin becomes one
// level whose frequency is its share of the samples and whose value is the
// harmonic mean of its samples. The harmonic mean keeps SLP exact: with it,
// sum_j f_j/s_j equals the mean of 1/s over all samples, so SLP(o) is the
// same as if every sample were its own level (seed-digest §4, SLP formula).
// Samples of 0 are left out and counted in Entry.Zero.
func Build(name string, runs []BenchmarkRun, bins int) (*Empirical, error) {
	if bins == 0 {
		bins = DefaultBins
	}
	if bins < 1 {
		return nil, fmt.Errorf("bins is %d; give a positive number of bins, or 0 for %d", bins, DefaultBins)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("no benchmark runs; give at least one run with per-second samples")
	}
	type key struct {
		size, read float64
		q          Quality
	}
	groups := map[key][]float64{}
	for i, r := range runs {
		if !(r.OpSizeKiB > 0) || math.IsInf(r.OpSizeKiB, 1) {
			return nil, fmt.Errorf("run %d: op size %v KiB must be a positive number", i+1, r.OpSizeKiB)
		}
		if !(r.ReadPct >= 0 && r.ReadPct <= 100) {
			return nil, fmt.Errorf("run %d: read share %v must be between 0 and 100 percent", i+1, r.ReadPct)
		}
		if len(r.OpsPerS) == 0 && len(r.BytesPerS) == 0 {
			return nil, fmt.Errorf("run %d (%g KiB, R%g): no samples; give per-second ops/s or bytes/s", i+1, r.OpSizeKiB, r.ReadPct)
		}
		for _, qs := range []struct {
			q  Quality
			xs []float64
		}{{OpsPerS, r.OpsPerS}, {BytesPerS, r.BytesPerS}} {
			for j, x := range qs.xs {
				if !(x >= 0) || math.IsInf(x, 1) {
					return nil, fmt.Errorf("run %d: %s sample %d is %v; samples must be non-negative numbers", i+1, qs.q, j+1, x)
				}
			}
			if len(qs.xs) > 0 {
				k := key{r.OpSizeKiB, r.ReadPct, qs.q}
				groups[k] = append(groups[k], qs.xs...)
			}
		}
	}
	doc := empiricalDoc{Kind: KindEmpirical, Name: name, Bins: bins}
	keys := make([]key, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	// In order, so that the error below names the same group every time.
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.size != b.size {
			return a.size < b.size
		}
		if a.read != b.read {
			return a.read > b.read
		}
		return a.q < b.q
	})
	for _, k := range keys {
		xs := groups[k]
		e := Entry{OpSizeKiB: k.size, ReadPct: k.read, Quality: k.q}
		pos := make([]float64, 0, len(xs))
		for _, x := range xs {
			if x == 0 {
				e.Zero++
				continue
			}
			pos = append(pos, x)
		}
		if len(pos) == 0 {
			return nil, fmt.Errorf("every %s sample at %g KiB, R%g is 0; the benchmark did not do any I/O", k.q, k.size, k.read)
		}
		e.Samples = len(pos)
		e.Levels = binLevels(pos, bins)
		doc.Entries = append(doc.Entries, e)
	}
	return newEmpirical(doc)
}

// binLevels cuts [min, max] into n equal-width bins; each non-empty bin
// becomes a level at the harmonic mean of its samples with frequency
// count/len(xs).
func binLevels(xs []float64, n int) []Level {
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	count := make([]int, n)
	invSum := make([]float64, n)
	width := (hi - lo) / float64(n)
	for _, x := range xs {
		b := 0
		if width > 0 {
			b = min(int((x-lo)/width), n-1) // the maximum belongs to the last bin
		}
		count[b]++
		invSum[b] += 1 / x
	}
	var out []Level
	for b := range n {
		if count[b] > 0 {
			out = append(out, Level{Value: float64(count[b]) / invSum[b], Freq: float64(count[b]) / float64(len(xs))})
		}
	}
	return out
}

func newEmpirical(d empiricalDoc) (*Empirical, error) {
	if len(d.Entries) == 0 {
		return nil, fmt.Errorf("entries is empty; an empirical model needs at least one entry (see docs/esl.md)")
	}
	if d.Bins < 0 {
		return nil, fmt.Errorf("bins is %d; it must not be negative", d.Bins)
	}
	m := &Empirical{Name: d.Name, Bins: d.Bins, pooled: map[pooledKey]pooledE{}}
	seen := map[[2]float64]map[Quality]bool{}
	for i, e := range d.Entries {
		where := fmt.Sprintf("entries[%d]", i)
		if !(e.OpSizeKiB > 0) || math.IsInf(e.OpSizeKiB, 1) {
			return nil, fmt.Errorf("%s.op_size_kib is %v; it must be a positive number", where, e.OpSizeKiB)
		}
		if !(e.ReadPct >= 0 && e.ReadPct <= 100) {
			return nil, fmt.Errorf("%s.read_pct is %v; it must be between 0 and 100", where, e.ReadPct)
		}
		if e.Quality == "" {
			return nil, fmt.Errorf("%s.quality is missing; name the quality, e.g. ops_per_s", where)
		}
		if e.Samples < 1 {
			return nil, fmt.Errorf("%s.samples is %d; give the number of positive samples behind the levels (at least 1)", where, e.Samples)
		}
		if e.Zero < 0 {
			return nil, fmt.Errorf("%s.zero is %d; give the number of samples of 0 left out (0 or more)", where, e.Zero)
		}
		mk := [2]float64{e.OpSizeKiB, e.ReadPct}
		if seen[mk] == nil {
			seen[mk] = map[Quality]bool{}
		}
		if seen[mk][e.Quality] {
			return nil, fmt.Errorf("%s repeats %s at %g KiB, read_pct %g; give each op size, mix and quality once", where, e.Quality, e.OpSizeKiB, e.ReadPct)
		}
		seen[mk][e.Quality] = true
		dist, err := NewDistribution(e.Levels)
		if err != nil {
			return nil, fmt.Errorf("%s.levels: %w", where, err)
		}
		e.Levels = dist.Levels
		m.Entries = append(m.Entries, e)
	}
	// Sorted before pooling: the pooled frequencies are float sums, and
	// Build hands the entries over in map order.
	sort.Slice(m.Entries, func(i, j int) bool {
		a, b := m.Entries[i], m.Entries[j]
		if a.OpSizeKiB != b.OpSizeKiB {
			return a.OpSizeKiB < b.OpSizeKiB
		}
		if a.ReadPct != b.ReadPct {
			return a.ReadPct > b.ReadPct // R100 first, as seed 000 lists the mixes
		}
		return a.Quality < b.Quality
	})
	parts := map[pooledKey][]ESL{}
	weights := map[pooledKey][]float64{}
	for _, e := range m.Entries {
		pk := pooledKey{e.OpSizeKiB, e.Quality}
		parts[pk] = append(parts[pk], ESL{Levels: e.Levels})
		weights[pk] = append(weights[pk], float64(e.Samples))
	}
	sizes := map[float64]bool{}
	for pk, ps := range parts {
		e, err := pool(ps, weights[pk])
		if err != nil {
			return nil, err
		}
		n := 0
		for _, w := range weights[pk] {
			n += int(w)
		}
		m.pooled[pk] = pooledE{esl: e, samples: n}
		if !sizes[pk.size] {
			sizes[pk.size] = true
			m.sizes = append(m.sizes, pk.size)
		}
	}
	sort.Float64s(m.sizes)
	return m, nil
}

// Kind implements Model.
func (*Empirical) Kind() string { return KindEmpirical }

// Qualities implements Model.
func (m *Empirical) Qualities() []Quality {
	set := map[Quality]bool{}
	for k := range m.pooled {
		set[k.q] = true
	}
	return sortedQualities(set)
}

// OpSizes lists the benchmarked op sizes in KiB, ascending.
func (m *Empirical) OpSizes() []float64 { return append([]float64(nil), m.sizes...) }

// Nearest is the benchmarked op size closest to opSizeKiB on a log scale
// (4 KiB is as far from 8 as 8 is from 16); ties go to the smaller size.
// NaN for a model without entries (one not made by Build or Parse).
func (m *Empirical) Nearest(opSizeKiB float64) float64 {
	if len(m.sizes) == 0 {
		return math.NaN()
	}
	best, bestDist := m.sizes[0], math.Inf(1)
	for _, s := range m.sizes {
		if d := math.Abs(math.Log(opSizeKiB / s)); d < bestDist-1e-12 {
			best, bestDist = s, d
		}
	}
	return best
}

// ESL implements Model: the distribution of q at the benchmarked op size
// nearest to opSizeKiB, all mixes pooled with weights by sample count.
// Source names the size used when it is not the one asked for.
func (m *Empirical) ESL(q Quality, opSizeKiB float64) (ESL, error) {
	if !(opSizeKiB > 0) || math.IsInf(opSizeKiB, 1) {
		return ESL{}, fmt.Errorf("operation size %v KiB must be a positive number", opSizeKiB)
	}
	if len(m.sizes) == 0 {
		return ESL{}, fmt.Errorf("the empirical model has no entries; make it with esl.Build or esl.Parse")
	}
	size := m.Nearest(opSizeKiB)
	p, ok := m.pooled[pooledKey{size, q}]
	if !ok {
		return ESL{}, fmt.Errorf("the empirical %s has no %s samples at %g KiB; benchmark that quality or use another model", label(m.Name), q, size)
	}
	e := p.esl
	e.Source = fmt.Sprintf("empirical %s at %g KiB, all mixes, %d samples", label(m.Name), size, p.samples)
	if size != opSizeKiB {
		e.Source = fmt.Sprintf("empirical %s at %g KiB (nearest benchmarked size to %.4g KiB), all mixes, %d samples", label(m.Name), size, opSizeKiB, p.samples)
	}
	return e, nil
}

// ESLMix is the distribution of q for exactly the benchmarked op size and
// read share.
func (m *Empirical) ESLMix(q Quality, opSizeKiB, readPct float64) (ESL, error) {
	for _, e := range m.Entries {
		if e.OpSizeKiB == opSizeKiB && e.ReadPct == readPct && e.Quality == q {
			d, err := NewDistribution(e.Levels)
			d.Source = fmt.Sprintf("empirical %s at %g KiB, R%g, %d samples", label(m.Name), opSizeKiB, readPct, e.Samples)
			return d, err
		}
	}
	return ESL{}, fmt.Errorf("the empirical %s has no %s entry at %g KiB, read_pct %g; use one of its entries or ESL for pooled mixes", label(m.Name), q, opSizeKiB, readPct)
}

func (m *Empirical) doc() empiricalDoc {
	return empiricalDoc{Kind: KindEmpirical, Name: m.Name, Bins: m.Bins, Entries: m.Entries}
}

// MarshalJSON writes the model document.
func (m *Empirical) MarshalJSON() ([]byte, error) { return json.Marshal(m.doc()) }

// MarshalYAML writes the model document.
func (m *Empirical) MarshalYAML() (any, error) { return m.doc(), nil }
