package esl

import (
	"math/rand/v2"
	"testing"
)

// referenceRuns synthesizes benchmark runs whose mean ops/s at each op
// size are the averages seed 000 §4.3 reports (seed-digest §4), with ±2%
// uniform noise, 5 mixes, 120 s each. Sizes the seed gives no figure for
// are left out.
func referenceRuns(seed uint64, meanOps map[float64]float64) []BenchmarkRun {
	r := rand.New(rand.NewPCG(seed, 5))
	var runs []BenchmarkRun
	for _, size := range []float64{4, 32, 64, 256, 1024} {
		mean, ok := meanOps[size]
		if !ok {
			continue
		}
		for _, read := range []float64{100, 75, 50, 25, 0} {
			run := BenchmarkRun{OpSizeKiB: size, ReadPct: read}
			for range 120 {
				o := mean * (1 + 0.04*(r.Float64()-0.5))
				run.OpsPerS = append(run.OpsPerS, o)
				run.BytesPerS = append(run.BytesPerS, o*size*1024)
			}
			runs = append(runs, run)
		}
	}
	return runs
}

func TestCompareFlagsLargeOpsAndHighPIOPS(t *testing.T) {
	for _, c := range []struct {
		name    string
		vol     ProvisionedIOPSVolume
		meanOps map[float64]float64
		flagged map[float64]bool // by op size, for both qualities
	}{
		// 300 PIOPS: ~300 ops/s up to 64 KiB; 60 MiB/s at 256 KiB
		// (seed 000 §4.4) = 240 ops/s; 60 ops/s at 1024 KiB.
		{"300 not optimized", ProvisionedIOPSVolume{SizeGiB: 100, ProvisionedIOPS: 300},
			map[float64]float64{4: 300, 32: 300, 64: 300, 256: 240, 1024: 60},
			map[float64]bool{256: true, 1024: true}},
		// The same measurements agree with a 62.5 MiB/s connection cap:
		// 250 and 62.5 ops/s expected, 4% off.
		{"300 with 62.5 MiB/s connection", ProvisionedIOPSVolume{SizeGiB: 100, ProvisionedIOPS: 300, InstanceCapMiBPerS: 62.5},
			map[float64]float64{4: 300, 32: 300, 64: 300, 256: 240, 1024: 60},
			map[float64]bool{}},
		// 900 PIOPS: 916 and 871 ops/s at 4 and 32 KiB; 139 MiB/s at 1 MiB.
		{"900", ProvisionedIOPSVolume{SizeGiB: 100, ProvisionedIOPS: 900},
			map[float64]float64{4: 916, 32: 871, 1024: 139},
			map[float64]bool{1024: true}},
		// 1800 PIOPS: 1788 ops/s at 4 KiB, 64 at 1 MiB.
		{"1800", ProvisionedIOPSVolume{SizeGiB: 100, ProvisionedIOPS: 1800},
			map[float64]float64{4: 1788, 1024: 64},
			map[float64]bool{1024: true}},
	} {
		emp, err := Build(c.name, referenceRuns(1, c.meanOps), 0)
		if err != nil {
			t.Fatal(err)
		}
		a, err := NewAnalytical("", c.vol)
		if err != nil {
			t.Fatal(err)
		}
		diffs, err := Compare(a, emp, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(diffs) != 2*len(c.meanOps) {
			t.Fatalf("%s: %d rows", c.name, len(diffs))
		}
		for _, d := range diffs {
			x, _ := c.vol.Evaluate(d.OpSizeKiB)
			want := (c.meanOps[d.OpSizeKiB] - x.OpsPerS) / x.OpsPerS
			// The noise is symmetric and small: the pooled mean is within
			// 0.2% of the design.
			if !near(d.Rel, want, 0.002) || d.Disagree != c.flagged[d.OpSizeKiB] || d.Limit != x.Limit {
				t.Fatalf("%s: %+v, want rel %.4f, flagged %v", c.name, d, want, c.flagged[d.OpSizeKiB])
			}
			if !(d.P1 <= d.Empirical && d.Empirical <= d.P99) {
				t.Fatalf("%s: percentiles %v..%v around %v", c.name, d.P1, d.P99, d.Empirical)
			}
		}
	}
	// At 1800 PIOPS and 1 MiB the documented 320 ops/s (volume cap) is 5x
	// the 64 measured: rel = 64/320 - 1 = -0.8.
	emp, _ := Build("", referenceRuns(2, map[float64]float64{1024: 64}), 0)
	a, _ := NewAnalytical("", ProvisionedIOPSVolume{SizeGiB: 100, ProvisionedIOPS: 1800})
	d, _ := Compare(a, emp, 0.5)
	if !near(d[0].Rel, -0.8, 0.002) || !d[0].Disagree || d[0].Limit != "volume_bandwidth" {
		t.Fatalf("1800 at 1 MiB: %+v", d[0])
	}
	if _, err := Compare(a, emp, -1); err == nil {
		t.Fatal("negative threshold must fail")
	}
}
