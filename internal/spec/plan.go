package spec

import (
	"math/bits"
	"math/rand/v2"
	"slices"
)

// Levels returns the load levels of the campaign: request rates for the
// open model, client counts for the closed model.
func (s *Spec) Levels() []float64 {
	if s.Load.Model == "open" && s.Load.Schedule != nil {
		return []float64{s.scheduleLevel()} // arrivals.go
	}
	l := s.Load.Rates
	if s.Load.Model == "closed" || (s.Load.Model != "open" && l == nil) {
		l = s.Load.Clients
	}
	if l == nil {
		return nil
	}
	return slices.Clone(l.Values)
}

// Plan expands the campaign into its runs, one per level and repetition, in
// execution order. Sequential order runs each level's repetitions together,
// lowest level index first; randomized order shuffles all runs with a
// generator seeded from order_seed (or seed), so that slow drift in the
// system under test does not line up with the level, and the same spec
// always gives the same order.
//
// The spec of a Block plans only that block's runs.
func (s *Spec) Plan() []PlannedRun {
	if s.planRuns != nil {
		return slices.Clone(s.planRuns)
	}
	levels := s.Levels()
	reps := max(s.Repetitions, 1)
	runs := make([]PlannedRun, 0, len(levels)*reps)
	for i, level := range levels {
		for r := 1; r <= reps; r++ {
			runs = append(runs, PlannedRun{Slot: i*reps + r - 1, LevelIndex: i, Level: level, Repetition: r})
		}
	}
	if s.Order == "randomized" {
		seed := s.Seed
		if s.OrderSeed != nil {
			seed = *s.OrderSeed
		}
		rng := rand.NewPCG(uint64(seed), 0x5eed)
		// Fisher-Yates.
		for i := len(runs) - 1; i > 0; i-- {
			j := boundedRand(rng, uint64(i)+1)
			runs[i], runs[j] = runs[j], runs[i]
		}
	}
	for i := range runs {
		runs[i].Seq = i
	}
	return runs
}

// runCount is len(s.Plan()) without making the plan.
func (s *Spec) runCount() int {
	if s.planRuns != nil {
		return len(s.planRuns)
	}
	return satMul(len(s.Levels()), max(s.Repetitions, 1))
}

// boundedRand returns a uniform integer in [0, n) from PCG's raw output by
// Lemire's multiply-and-reject method. It is written out here, rather than
// calling rand.Rand.IntN, so that a plan's order depends only on PCG, whose
// output is fixed by its specification, and never on how a future Go
// release maps random bits to a range.
func boundedRand(src *rand.PCG, n uint64) int {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		threshold := -n % n
		for lo < threshold {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return int(hi)
}
