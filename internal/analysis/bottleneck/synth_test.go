package bottleneck

import (
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// Generators of runs whose bottleneck class is known by design. Every
// generator is deterministic for its seed.

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// synth builds 1 s series over n intervals from gen, which returns every
// resource's utilisation in interval c.
func synth(seed uint64, n int, gen func(c int, rng *rand.Rand) map[string]float64) []Series {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	byID := map[string]*Series{}
	for c := range n {
		u := gen(c, rng)
		ids := make([]string, 0, len(u))
		for id := range u {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			s := byID[id]
			if s == nil {
				s = &Series{Resource: id}
				byID[id] = s
			}
			s.Points = append(s.Points, Point{Start: t0.Add(time.Duration(c) * time.Second), Period: time.Second, Util: u[id]})
		}
	}
	out := make([]Series, 0, len(byID))
	for _, s := range byID {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out
}

// saturated is a utilisation above the default alpha (96..100).
func saturated(rng *rand.Rand) float64 { return 96 + 4*rng.Float64() }

// busy is a utilisation around mean, never above 90.
func busy(rng *rand.Rand, mean float64) float64 {
	return math.Max(0, math.Min(90, mean+10*rng.NormFloat64()))
}

// genSingle: db1/cpu saturated in about 97% of the intervals, everything
// else well below.
func genSingle(c int, rng *rand.Rand) map[string]float64 {
	cpu := saturated(rng)
	if rng.Float64() < 0.03 {
		cpu = busy(rng, 80)
	}
	return map[string]float64{"db1/cpu": cpu, "db1/disk:vda": busy(rng, 30), "app1/cpu": busy(rng, 40)}
}

// genConcurrent: app1/cpu and db1/net:eth0 saturate independently, with
// probabilities 0.4 and 0.5 (joint about 0.2, well above epsilon).
func genConcurrent(c int, rng *rand.Rand) map[string]float64 {
	u := map[string]float64{"app1/cpu": busy(rng, 50), "db1/net:eth0": busy(rng, 50), "db1/cpu": busy(rng, 30)}
	if rng.Float64() < 0.4 {
		u["app1/cpu"] = saturated(rng)
	}
	if rng.Float64() < 0.5 {
		u["db1/net:eth0"] = saturated(rng)
	}
	return u
}

// genOscillatory: the disks of db1..db3 saturate in turn: in 85% of the
// intervals exactly one of them (chosen at random) is saturated, never
// two; the CPUs stay below.
func genOscillatory(c int, rng *rand.Rand) map[string]float64 {
	u := map[string]float64{"db1/disk:vda": busy(rng, 40), "db2/disk:vda": busy(rng, 40), "db3/disk:vda": busy(rng, 40), "db1/cpu": busy(rng, 30)}
	if rng.Float64() < 0.85 {
		u[[]string{"db1/disk:vda", "db2/disk:vda", "db3/disk:vda"}[rng.IntN(3)]] = saturated(rng)
	}
	return u
}

// genSimultaneous: app1/cpu and db1/disk:vda saturated nearly always, each
// dipping independently in about 2% of the intervals.
func genSimultaneous(c int, rng *rand.Rand) map[string]float64 {
	u := map[string]float64{"app1/cpu": saturated(rng), "db1/disk:vda": saturated(rng), "db1/cpu": busy(rng, 30)}
	if rng.Float64() < 0.02 {
		u["app1/cpu"] = busy(rng, 80)
	}
	if rng.Float64() < 0.02 {
		u["db1/disk:vda"] = busy(rng, 80)
	}
	return u
}

// genNearAlpha: two resources hovering around the threshold, 95 ± 0.5
// uniform, independently: each is above 95 about half the time.
func genNearAlpha(c int, rng *rand.Rand) map[string]float64 {
	return map[string]float64{"db1/cpu": 95 + rng.Float64() - 0.5, "db2/cpu": 95 + rng.Float64() - 0.5}
}

// genSweep is a generated workload sweep with one designed cause: the
// application CPU grows linearly and saturates at 100% from about
// level 140; SLO satisfaction holds at about 99% below and falls above.
// Every other metric grows linearly over the whole sweep.
func genSweep(seed uint64, reps int) []Trial {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []Trial
	for w := 10.0; w <= 250; w += 10 {
		for r := 1; r <= reps; r++ {
			s := 99 + 0.5*rng.NormFloat64()
			if w > 140 {
				s = 99 - 1.2*(w-140) + 2*rng.NormFloat64()
			}
			s = math.Max(0, math.Min(100, s))
			// At saturation the CPU hovers just under 100%.
			appCPU := math.Min(100, 0.7*w+1.5*rng.NormFloat64()) - math.Abs(0.5*rng.NormFloat64())
			out = append(out, Trial{Level: w, Repetition: r, Satisfaction: s, Metrics: map[string]float64{
				"app1/cpu util_pct":            appCPU,
				"db1/cpu util_pct":             0.3*w + 1.5*rng.NormFloat64(),
				"web1/cpu util_pct":            0.38*w + 1.5*rng.NormFloat64(),
				"db1/memory cached_bytes":      1e9 + 2e6*w + 2e6*rng.NormFloat64(),
				"web1/net:eth0 tx_bytes_per_s": 5000*w + 5000*rng.NormFloat64(),
			}})
		}
	}
	return out
}
