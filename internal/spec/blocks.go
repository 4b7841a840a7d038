package spec

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Block is a part of a campaign that runs in one session, with one target
// (and lab) brought up for it and removed after it: some planned runs of
// one treatment.
type Block struct {
	Treatment int // index into Spec.Treatments; 0 for a campaign without treatments
	// Repetition is the repetition all the block's runs share with
	// blocks: repetition; 0 when the block is the treatment's whole plan.
	Repetition int
	// Runs are in execution order. Slot is the slot in the treatment's
	// own plan (the campaign adds Treatment x SlotsPerTreatment); Seq
	// counts within the block.
	Runs []PlannedRun
	// Spec is the treatment's spec, whose Plan returns exactly Runs.
	Spec *Spec
}

// treatmentStream separates the random stream that orders treatments from
// the one that orders runs within a plan (plan.go), so that randomizing
// the treatments does not change any treatment's own run order.
const treatmentStream = 0x7ea7

// Blocks lists the campaign's sessions in the order they run.
//
// With blocks: treatment (the default) each treatment's whole plan is one
// block. With blocks: repetition each treatment's plan is cut into one
// block per repetition, and the blocks run in rounds: repetition 1 of
// every treatment, then repetition 2, and so on, so that every treatment
// is measured early and late in the campaign. treatment_order: randomized
// shuffles the treatments (in every round anew with blocks: repetition:
// a randomized complete block design whose blocks are the repetitions)
// with a generator seeded from order_seed (or seed), so that slow drift
// of the machine does not line up with the treatment, and the same spec
// always gives the same order.
func (s *Spec) Blocks() []Block {
	if len(s.Treatments) == 0 {
		return []Block{{Runs: s.Plan(), Spec: s}}
	}
	var shuffle func([]int)
	if s.TreatmentOrder == "randomized" {
		seed := s.Seed
		if s.OrderSeed != nil {
			seed = *s.OrderSeed
		}
		rng := rand.NewPCG(uint64(seed), treatmentStream)
		shuffle = func(idx []int) {
			for i := len(idx) - 1; i > 0; i-- { // Fisher-Yates
				j := boundedRand(rng, uint64(i)+1)
				idx[i], idx[j] = idx[j], idx[i]
			}
		}
	}
	order := func(idx []int) []int {
		if shuffle != nil {
			shuffle(idx)
		}
		return idx
	}

	var out []Block
	if s.Blocking != "repetition" {
		idx := make([]int, len(s.Treatments))
		for i := range idx {
			idx[i] = i
		}
		for _, i := range order(idx) {
			t := s.Treatments[i].Spec
			out = append(out, Block{Treatment: i, Runs: t.Plan(), Spec: t})
		}
		return out
	}
	plans := make([][]PlannedRun, len(s.Treatments))
	rounds := 0
	for i, t := range s.Treatments {
		plans[i] = t.Spec.Plan()
		rounds = max(rounds, t.Spec.Repetitions, 1)
	}
	for r := 1; r <= rounds; r++ {
		var idx []int
		for i, t := range s.Treatments {
			if max(t.Spec.Repetitions, 1) >= r {
				idx = append(idx, i)
			}
		}
		for _, i := range order(idx) {
			var runs []PlannedRun
			for _, p := range plans[i] {
				if p.Repetition == r {
					p.Seq = len(runs)
					runs = append(runs, p)
				}
			}
			if len(runs) == 0 {
				continue
			}
			c := *s.Treatments[i].Spec
			c.planRuns = runs
			out = append(out, Block{Treatment: i, Repetition: r, Runs: slices.Clone(runs), Spec: &c})
		}
	}
	return out
}

// checkTreatmentOrder checks treatment_order and blocks, and fills in their
// defaults when the campaign has treatments (without, they stay empty).
// none says that the campaign has no treatments (and no errors that would
// explain why), which makes either field a mistake.
func checkTreatmentOrder(file string, root *yaml.Node, s *Spec, none bool) Errors {
	var errs Errors
	for _, f := range []struct {
		key     string
		got     *string
		allowed []string
	}{
		{"treatment_order", &s.TreatmentOrder, []string{"sequential", "randomized"}},
		{"blocks", &s.Blocking, []string{"treatment", "repetition"}},
	} {
		line := keyLine(root, f.key)
		if *f.got == "" {
			if len(s.Treatments) > 0 {
				*f.got = f.allowed[0]
			}
			continue
		}
		switch {
		case !slices.Contains(f.allowed, *f.got):
			msg := fmt.Sprintf("unknown value %q; use %s", truncate(*f.got, 40), orList(f.allowed))
			if c := closest(*f.got, f.allowed); c != "" {
				msg = fmt.Sprintf("unknown value %q; did you mean %q?", *f.got, c)
			}
			errs = append(errs, &Error{File: file, Line: line, Path: f.key, Msg: msg})
		case none && line > 0:
			errs = append(errs, &Error{File: file, Line: line, Path: f.key, Msg: "orders treatments, and this campaign has none; add factors: or treatments:, or remove it"})
		}
	}
	return errs
}

// keyLine is the line of key in mapping root, or 0.
func keyLine(root *yaml.Node, key string) int {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			return root.Content[i].Line
		}
	}
	return 0
}
