package spec

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// blockSpec is a campaign of 2 x 3 factor treatments with 2 levels and
// the given repetitions, ordered as extra says.
func blockSpec(t *testing.T, reps int, extra string) *Spec {
	t.Helper()
	s, err := Parse("t.yaml", []byte(fmt.Sprintf(`name: t
target: {type: noop}
workload: {ycsb: a}
load: {model: open, rates: [10, 20]}
repetitions: %d
factors:
  - {path: workload.ycsb, values: [a, c]}
  - {path: workload.record_count, name: records, values: [100, 200, 300]}
%s
`, reps, extra)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// blockNames lists blocks as treatment index and repetition ("3r2"; "3"
// for a whole plan).
func blockNames(bs []Block) string {
	var out []string
	for _, b := range bs {
		n := fmt.Sprint(b.Treatment)
		if b.Repetition > 0 {
			n += fmt.Sprintf("r%d", b.Repetition)
		}
		out = append(out, n)
	}
	return strings.Join(out, " ")
}

func TestBlocksSequentialAreTheTreatmentsWholePlans(t *testing.T) {
	s := blockSpec(t, 2, "")
	bs := s.Blocks()
	if got := blockNames(bs); got != "0 1 2 3 4 5" {
		t.Fatalf("blocks %s", got)
	}
	for _, b := range bs {
		tr := s.Treatments[b.Treatment]
		// The very plan the treatment had before blocks existed.
		if b.Spec != tr.Spec || !reflect.DeepEqual(b.Runs, tr.Spec.Plan()) || !reflect.DeepEqual(b.Spec.Plan(), b.Runs) {
			t.Errorf("block of %s: runs %v, plan %v", tr.Name, b.Runs, tr.Spec.Plan())
		}
	}
	// A campaign without treatments is one block of its own plan.
	plain, err := Parse("t.yaml", []byte("name: t\ntarget: {type: noop}\nworkload: {ycsb: a}\nload: {model: open, rates: [10, 20]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if bs := plain.Blocks(); len(bs) != 1 || bs[0].Spec != plain || len(bs[0].Runs) != 2 {
		t.Errorf("blocks of a plain campaign: %+v", bs)
	}
}

// blocks: repetition runs repetition 1 of every treatment, then
// repetition 2; each block holds its treatment's runs of that repetition
// (in the treatment's own run order), its spec plans only them, and
// together the blocks cover every run of every treatment once.
func TestBlocksInterleaveRepetitions(t *testing.T) {
	s := blockSpec(t, 2, "blocks: repetition\norder: randomized")
	bs := s.Blocks()
	if got, want := blockNames(bs), "0r1 1r1 2r1 3r1 4r1 5r1 0r2 1r2 2r2 3r2 4r2 5r2"; got != want {
		t.Fatalf("blocks %s, want %s", got, want)
	}
	covered := map[int]int{}
	for _, b := range bs {
		full := s.Treatments[b.Treatment].Spec.Plan()
		var want []PlannedRun
		for _, p := range full {
			if p.Repetition == b.Repetition {
				p.Seq = len(want)
				want = append(want, p)
			}
		}
		if !reflect.DeepEqual(b.Runs, want) || !reflect.DeepEqual(b.Spec.Plan(), want) {
			t.Errorf("block %dr%d runs %+v, want %+v", b.Treatment, b.Repetition, b.Runs, want)
		}
		for _, p := range b.Runs {
			covered[b.Treatment*SlotsPerTreatment+p.Slot]++
		}
		if b.Spec.Workload.RecordCount != s.Treatments[b.Treatment].Spec.Workload.RecordCount {
			t.Errorf("block spec is not its treatment's")
		}
	}
	if len(covered) != 6*4 {
		t.Errorf("blocks cover %d runs, want 24", len(covered))
	}
	for slot, n := range covered {
		if n != 1 {
			t.Errorf("slot %d runs %d times", slot, n)
		}
	}
	// The block's spec is a copy: the treatment still plans every run.
	if n := len(s.Treatments[0].Spec.Plan()); n != 4 {
		t.Errorf("treatment plan has %d runs after blocking, want 4", n)
	}
}

// Randomized treatment order is reproducible from the seed, changes with
// it, falls back from order_seed to seed, and with blocks: repetition
// shuffles each round on its own.
func TestBlocksRandomizedAreReproducible(t *testing.T) {
	rnd := func(seed string, extra string) string {
		return blockNames(blockSpec(t, 3, "treatment_order: randomized\n"+seed+extra).Blocks())
	}
	a := rnd("seed: 1\n", "")
	if again := rnd("seed: 1\n", ""); again != a {
		t.Errorf("same seed, different orders: %s / %s", a, again)
	}
	if b := rnd("seed: 2\n", ""); b == a {
		t.Errorf("seeds 1 and 2 gave the same order %s", a)
	}
	if o := rnd("seed: 5\norder_seed: 1\n", ""); o != a {
		t.Errorf("order_seed 1 should give seed 1's order: %s / %s", o, a)
	}
	// Golden: changing it reorders every stored randomized campaign on
	// resume, so it must only change on purpose.
	if a != "1 0 3 4 5 2" {
		t.Errorf("randomized treatment order for seed 1 = %s", a)
	}
	if rep := rnd("seed: 1\n", "blocks: repetition\n"); rep != "1r1 0r1 3r1 4r1 5r1 2r1 4r2 2r2 0r2 1r2 3r2 5r2 5r3 4r3 3r3 2r3 0r3 1r3" {
		t.Errorf("randomized blocks by repetition for seed 1 = %s", rep)
	}
	// Every treatment comes first for some seed: the shuffle is not stuck.
	first := map[int]bool{}
	for seed := 1; seed <= 60; seed++ {
		first[blockSpec(t, 1, fmt.Sprintf("treatment_order: randomized\nseed: %d", seed)).Blocks()[0].Treatment] = true
	}
	if len(first) != 6 {
		t.Errorf("over 60 seeds only treatments %v ran first", first)
	}
	// Randomizing treatments leaves each treatment's run order alone.
	s := blockSpec(t, 3, "treatment_order: randomized\norder: randomized")
	for _, b := range s.Blocks() {
		if !reflect.DeepEqual(b.Runs, s.Treatments[b.Treatment].Spec.Plan()) {
			t.Errorf("treatment %d runs in a different order inside its block", b.Treatment)
		}
	}
}

// A treatment with fewer repetitions than the others drops out of the
// later rounds.
func TestBlocksWithUnequalRepetitions(t *testing.T) {
	s := mustParse(t, smallSpec+`repetitions: 2
blocks: repetition
treatments:
  - name: two
  - name: three
    set: {repetitions: 3}
`)
	if got := blockNames(s.Blocks()); got != "0r1 1r1 0r2 1r2 1r3" {
		t.Errorf("blocks %s", got)
	}
}
