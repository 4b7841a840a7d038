package spec

import (
	"reflect"
	"testing"
)

func planSpec(order string, reps int, seed int64, orderSeed *int64) *Spec {
	return &Spec{
		Seed:        seed,
		OrderSeed:   orderSeed,
		Order:       order,
		Repetitions: reps,
		Load:        Load{Model: "open", Rates: &Levels{Values: []float64{10, 20, 30}}},
	}
}

func TestPlanSequential(t *testing.T) {
	got := planSpec("sequential", 2, 1, nil).Plan()
	want := []PlannedRun{
		{Seq: 0, Slot: 0, LevelIndex: 0, Level: 10, Repetition: 1},
		{Seq: 1, Slot: 1, LevelIndex: 0, Level: 10, Repetition: 2},
		{Seq: 2, Slot: 2, LevelIndex: 1, Level: 20, Repetition: 1},
		{Seq: 3, Slot: 3, LevelIndex: 1, Level: 20, Repetition: 2},
		{Seq: 4, Slot: 4, LevelIndex: 2, Level: 30, Repetition: 1},
		{Seq: 5, Slot: 5, LevelIndex: 2, Level: 30, Repetition: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Plan() =\n%v\nwant\n%v", got, want)
	}
}

func slots(runs []PlannedRun) []int {
	out := make([]int, len(runs))
	for i, r := range runs {
		out[i] = r.Slot
	}
	return out
}

func TestPlanRandomized(t *testing.T) {
	s := planSpec("randomized", 4, 1, nil)
	runs := s.Plan()
	if len(runs) != 12 {
		t.Fatalf("%d runs, want 12", len(runs))
	}
	seen := map[int]bool{}
	for i, r := range runs {
		if r.Seq != i {
			t.Errorf("run %d has Seq %d", i, r.Seq)
		}
		if r.Slot != r.LevelIndex*4+r.Repetition-1 || r.Level != []float64{10, 20, 30}[r.LevelIndex] {
			t.Errorf("run %+v is inconsistent", r)
		}
		seen[r.Slot] = true
	}
	if len(seen) != 12 {
		t.Errorf("slots %v are not a permutation of 0..11", slots(runs))
	}

	// Deterministic: the same seed gives the same order, also on a fresh
	// spec value, and order_seed defaults to seed.
	if again := planSpec("randomized", 4, 1, nil).Plan(); !reflect.DeepEqual(runs, again) {
		t.Errorf("same seed, different plans:\n%v\n%v", slots(runs), slots(again))
	}
	one := int64(1)
	if withOrderSeed := planSpec("randomized", 4, 99, &one).Plan(); !reflect.DeepEqual(slots(runs), slots(withOrderSeed)) {
		t.Errorf("order_seed 1 should give the order of seed 1 regardless of seed:\n%v\n%v", slots(runs), slots(withOrderSeed))
	}
	if other := planSpec("randomized", 4, 2, nil).Plan(); reflect.DeepEqual(slots(runs), slots(other)) {
		t.Errorf("seeds 1 and 2 gave the same order %v", slots(runs))
	}
	if reflect.DeepEqual(slots(runs), slots(planSpec("sequential", 4, 1, nil).Plan())) {
		t.Errorf("randomized order is the sequential order")
	}

	// Golden order: changing it reorders every stored randomized campaign on
	// resume, so it must only change on purpose.
	golden := []int{8, 2, 0, 4, 6, 10, 9, 5, 1, 7, 11, 3}
	if got := slots(runs); !reflect.DeepEqual(got, golden) {
		t.Errorf("randomized slots for seed 1 = %v, want %v", got, golden)
	}
}

func TestPlanClosedAndEdgeCases(t *testing.T) {
	s := &Spec{Repetitions: 0, Load: Load{Model: "closed", Clients: &Levels{Values: []float64{1, 2}}, Rates: &Levels{Values: []float64{5}}}}
	runs := s.Plan()
	if len(runs) != 2 || runs[0].Level != 1 || runs[1].Level != 2 || runs[1].Repetition != 1 {
		t.Errorf("closed plan with repetitions 0 = %+v, want clients 1 and 2 once each", runs)
	}
	if got := (&Spec{}).Plan(); len(got) != 0 {
		t.Errorf("empty spec plans %v", got)
	}
	// Levels returns a copy.
	s.Levels()[0] = 99
	if s.Load.Clients.Values[0] != 1 {
		t.Errorf("Levels() aliases the spec's values")
	}
}

func TestBoundedRandIsUniformEnough(t *testing.T) {
	s := planSpec("randomized", 1, 0, nil)
	first := map[int]int{}
	for seed := int64(0); seed < 3000; seed++ {
		s.Seed = seed
		first[s.Plan()[0].Slot]++
	}
	for slot := 0; slot < 3; slot++ {
		if n := first[slot]; n < 850 || n > 1150 {
			t.Errorf("slot %d ran first %d times in 3000 seeds, want about 1000", slot, n)
		}
	}
}
