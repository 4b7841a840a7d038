package slp

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
)

// clientObs synthesizes n seconds of client-side volume observations with
// random ops/s in [50, 250) and op sizes drawn from sizes (KiB), with a
// fixed seed.
func clientObs(seed uint64, n int, sizes []float64) []VolumeSecond {
	r := rand.New(rand.NewPCG(seed, 9))
	out := make([]VolumeSecond, n)
	for i := range out {
		ops := 50 + 200*r.Float64()
		d := sizes[r.IntN(len(sizes))]
		out[i] = VolumeSecond{Start: at(float64(i)), Period: time.Second, Ops: ops, Bytes: ops * d * 1024}
	}
	return out
}

// providerSeries is what a provider counting unitKiB normalized ops would
// report per minute for obs: the mean of ops x ceil(d/unit), times factor.
func providerSeries(obs []VolumeSecond, unitKiB, factor float64) Series {
	var out Series
	for i := 0; i+60 <= len(obs); i += 60 {
		var sum float64
		for _, o := range obs[i : i+60] {
			sum += o.Ops * esl.NormalizedOps(o.OpSizeKiB(), unitKiB)
		}
		out = append(out, Point{Start: obs[i].Start, Period: time.Minute, Value: factor * sum / 60})
	}
	return out
}

func TestRenormalize(t *testing.T) {
	for _, c := range []struct{ no, d, from, to, want float64 }{
		{16, 256, 16, 256, 1}, // the seed's case: 16 units of 16 KiB are one of 256
		{1, 4, 16, 256, 1},    // small ops count 1 in any unit
		{4, 64, 16, 256, 1},
		{2, 512, 256, 16, 32},
	} {
		if got := Renormalize(c.no, c.d, c.from, c.to); got != c.want {
			t.Fatalf("Renormalize(%v, %v KiB, %v -> %v) = %v, want %v", c.no, c.d, c.from, c.to, got, c.want)
		}
	}
}

// Seed 000 §5.3: with 256 KiB operations a provider counting 16 KiB units
// reports 16 times the client's normalized ops at 256 KiB.
func TestFitFactorRecoversSixteen(t *testing.T) {
	obs := clientObs(1, 600, []float64{256})
	client, err := NormalizedSeries(obs, 256)
	if err != nil {
		t.Fatal(err)
	}
	f, err := FitFactor(providerSeries(obs, 16, 1), client)
	if err != nil {
		t.Fatal(err)
	}
	if !near(f.Factor, 16, 1e-9) || f.Points != 10 || f.RelRMS > 1e-9 {
		t.Fatalf("fit = %+v, want factor 16 over 10 minutes", f)
	}

	// ±5% uniform noise on an hour of provider minutes (sd of the mean
	// 2.9%/sqrt(60) = 0.4%) moves the factor by less than 1%.
	long := clientObs(5, 3600, []float64{256})
	longClient, _ := NormalizedSeries(long, 256)
	r := rand.New(rand.NewPCG(2, 2))
	noisy := providerSeries(long, 16, 1)
	for i := range noisy {
		noisy[i].Value *= 1 + 0.1*(r.Float64()-0.5)
	}
	f, _ = FitFactor(noisy, longClient)
	if !near(f.Factor, 16, 0.16) || f.RelRMS > 0.05 {
		t.Fatalf("noisy fit = %+v", f)
	}

	// The last provider minute is kept when the client covers 54 s of it
	// (MinCoverage = 90%) and left out when it covers 30 s.
	pairs, err := Align(providerSeries(obs, 16, 1), client[:594])
	if err != nil || len(pairs) != 10 {
		t.Fatalf("align over 594 s: %d pairs, %v", len(pairs), err)
	}
	pairs, _ = Align(providerSeries(obs, 16, 1), client[:570])
	if len(pairs) != 9 {
		t.Fatalf("align over 570 s: %d pairs, want 9 (the last minute is 50%% covered)", len(pairs))
	}
}

func TestBestUnitFindsProviderUnit(t *testing.T) {
	// Mixed op sizes: only the provider's own unit reproduces its counts.
	obs := clientObs(3, 900, []float64{4, 64, 128, 256, 1024})
	best, all, err := BestUnit(providerSeries(obs, 16, 1), obs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if best.UnitKiB != 16 || best.RelRMS > 1e-9 || !near(best.Fit.Factor, 1, 1e-9) || len(all) != len(DefaultUnitsKiB) {
		t.Fatalf("best = %+v of %+v", best, all)
	}
	for _, u := range all {
		if u.UnitKiB != 16 && u.RelRMS < 0.05 {
			t.Fatalf("unit %v fits too well: %+v", u.UnitKiB, u)
		}
	}

	// Converting the provider's 16 KiB counts back to 256 KiB gives the
	// client's normalized ops when each minute has one op size.
	obs = clientObs(4, 300, []float64{512})
	back, err := RenormalizeSeries(providerSeries(obs, 16, 1), obs, 16, 256)
	if err != nil {
		t.Fatal(err)
	}
	want := providerSeries(obs, 256, 1)
	if len(back) != len(want) {
		t.Fatalf("%d points, want %d", len(back), len(want))
	}
	for i := range want {
		if !near(back[i].Value, want[i].Value, 1e-9) {
			t.Fatalf("minute %d: %v, want %v", i, back[i].Value, want[i].Value)
		}
	}
}

// An idle provider series (all 0) has no factor and no unit: no k = 0
// with a NaN relative RMS, and no 4 KiB unit "found" at an infinite one.
func TestFitIdleProvider(t *testing.T) {
	obs := clientObs(1, 600, []float64{256})
	client, _ := NormalizedSeries(obs, 256)
	idle := providerSeries(obs, 16, 1)
	for i := range idle {
		idle[i].Value = 0
	}
	if f, err := FitFactor(idle, client); err == nil || !strings.Contains(err.Error(), "provider series is 0") {
		t.Fatalf("idle provider: fit %+v, err %v", f, err)
	}
	if best, _, err := BestUnit(idle, obs, nil); err == nil || !strings.Contains(err.Error(), "provider series is 0") {
		t.Fatalf("idle provider: unit %+v, err %v", best, err)
	}
}
