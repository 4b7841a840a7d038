package workload

import (
	"math"
	"testing"
)

// drawRanks draws n ranks from z and counts them by rank (ranks >= cells go
// to the last cell).
func drawRanks(z *zipfian, seed uint64, n, cells int) []int64 {
	r := newRNG(seed)
	counts := make([]int64, cells)
	for range n {
		k := z.rank(r.float())
		if k >= uint64(cells) {
			k = uint64(cells - 1)
		}
		counts[k]++
	}
	return counts
}

// TestZipfianFitsGrayLaw checks the unscrambled zipfian against the exact
// distribution of Gray et al.'s method (grayCDF), which it implements.
func TestZipfianFitsGrayLaw(t *testing.T) {
	for _, c := range []struct {
		items int
		theta float64
	}{{1000, 0.99}, {1000, 0.5}, {50, 0.9}, {3, 0.99}} {
		zt := newZetaTable(c.theta)
		z := newZipfian(uint64(c.items), c.theta, zt.zeta(uint64(c.items)))
		counts := drawRanks(&z, 7, 500_000, c.items)
		checkFit(t, "zipfian vs Gray law", counts, grayPMF(&z, c.items))
	}
}

// TestZipfianAgainstZipfLaw compares the draws with the exact Zipf law
// P(rank i) = (i+1)^-theta / zeta(n, theta): ranks 0 and 1 (and so the rest
// taken together) must fit it exactly; beyond them Gray's method, like YCSB,
// deviates by design (see zipfian), so each rank is only held within 25% of
// the law and the total variation distance below 2%.
func TestZipfianAgainstZipfLaw(t *testing.T) {
	const items, theta, draws = 1000, 0.99, 1_000_000
	z := newZipfian(items, theta, newZetaTable(theta).zeta(items))
	counts := drawRanks(&z, 11, draws, items)
	exact := zipfPMF(items, theta)

	head := []int64{counts[0], counts[1], draws - counts[0] - counts[1]}
	checkFit(t, "ranks 0, 1, rest vs Zipf law", head, []float64{exact[0], exact[1], 1 - exact[0] - exact[1]})

	gray := grayPMF(&z, items)
	tv := 0.0
	for k := range items {
		tv += math.Abs(gray[k]-exact[k]) / 2
		if ratio := gray[k] / exact[k]; ratio < 0.8 || ratio > 1.25 {
			t.Errorf("rank %d: Gray probability %.3g is %.3f x the Zipf law's %.3g", k, gray[k], ratio, exact[k])
		}
	}
	if tv > 0.02 {
		t.Errorf("total variation distance from the Zipf law %.4f > 0.02", tv)
	}
	// Bucketed empirical check of the same bound: observed frequency of
	// ranks [2,10), [10,100), [100,1000) within 10% of the Zipf law.
	for _, b := range [][2]int{{2, 10}, {10, 100}, {100, 1000}} {
		var obs int64
		want := 0.0
		for k := b[0]; k < b[1]; k++ {
			obs += counts[k]
			want += exact[k]
		}
		if got := float64(obs) / draws; math.Abs(got/want-1) > 0.10 {
			t.Errorf("ranks [%d,%d): frequency %.4f, Zipf law %.4f", b[0], b[1], got, want)
		}
	}
	t.Logf("total variation distance Gray vs Zipf law, n=%d theta=%v: %.4f", items, theta, tv)
}

// TestZipfianHugeItemCount draws from the 10^10-rank zipfian under the
// scrambled distribution: ranks 0 and 1 have probabilities 1/26.469 and
// 0.5^0.99/26.469.
func TestZipfianHugeItemCount(t *testing.T) {
	s := newScrambledZipfian(1000, newZetaTable(0.99))
	z := &s.z
	const draws = 200_000
	counts := drawRanks(z, 3, draws, 3)
	p0, p1 := 1/ycsbZeta10G, math.Pow(0.5, 0.99)/ycsbZeta10G
	checkFit(t, "huge zipfian ranks 0, 1, rest", counts, []float64{p0, p1, 1 - p0 - p1})
	r := newRNG(5)
	for range 10_000 {
		if k := z.rank(r.float()); k >= scrambledItems {
			t.Fatalf("rank %d out of range", k)
		}
	}
}

// TestZipfianEdges checks rank at the ends of [0, 1) and tiny item counts.
func TestZipfianEdges(t *testing.T) {
	zt := newZetaTable(0.99)
	for _, items := range []uint64{1, 2, 3, 1000, scrambledItems} {
		z := newZipfian(items, 0.99, zt.zeta(items))
		for _, u := range []float64{0, 0.5, 1 - 0x1p-53, math.Nextafter(1, 0)} {
			if k := z.rank(u); k >= items {
				t.Errorf("items %d, u %v: rank %d", items, u, k)
			}
		}
		if k := z.rank(0); k != 0 {
			t.Errorf("items %d: rank(0) = %d", items, k)
		}
	}
}

// TestScrambledZipfian checks the scrambled zipfian over 1000 keys: the most
// frequent key is ycsbHash(0) mod n with frequency close to 1/26.469, and the
// whole distribution fits the law obtained by hashing the first 2^18 ranks
// exactly and spreading the remaining rank mass evenly over the keys.
func TestScrambledZipfian(t *testing.T) {
	const n, draws = 1000, 500_000
	c := Config{RecordCount: n, FieldCount: 1, FieldLength: 1, RequestDistribution: DistZipfian, ZipfianConstant: 0.99}
	c.Mix[Read] = 1
	g, err := New(c, 42)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int64, n)
	op := g.NewOp()
	for range draws {
		g.Next(op)
		counts[op.KeyNum]++
	}

	z := &g.scrambled.z
	const head = 1 << 18
	p := make([]float64, n)
	for r := uint64(0); r < head; r++ {
		p[ycsbHash(r)%n] += grayCDF(z, r+1) - grayCDF(z, r)
	}
	tail := 1 - grayCDF(z, head)
	for k := range p {
		p[k] += tail / n
	}
	checkFit(t, "scrambled zipfian keys", counts, p)

	top := 0
	for k := range counts {
		if counts[k] > counts[top] {
			top = k
		}
	}
	if want := ycsbHash(0) % n; uint64(top) != want {
		t.Errorf("most frequent key %d, want ycsbHash(0) mod n = %d", top, want)
	}
	freq := float64(counts[top]) / draws
	sd := math.Sqrt(p[top] * (1 - p[top]) / draws)
	if math.Abs(freq-p[top]) > 5*sd || math.Abs(freq-1/ycsbZeta10G) > 0.003 {
		t.Errorf("most frequent key has frequency %.5f; expected %.5f, 1/zeta(1e10) = %.5f", freq, p[top], 1/ycsbZeta10G)
	}
}
