package spec

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RunOnNull, when set (fuzz_run_test.go sets it), runs the first second of
// an accepted spec's first run on the null target; it fails t when the
// workload cannot be built or the run fails. It is a variable because the
// null target imports this package, so only the external test package can
// use it.
var RunOnNull func(t *testing.T, s *Spec)

// FuzzParse checks that no input makes Parse panic, that every failure is a
// non-empty Errors with at most 50 single-line errors and a count, each
// naming the file, and that every accepted spec plans consistently and
// runs: its first run's first second on the null target ends without a
// crash. The hostile corpus (testdata/hostile) seeds it.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		fullSpec,
		base,
		base + "slo: {percentile: 99, threshold: 5ms}\n",
		"name: c\ntarget: {type: noop}\nworkload: {operations: {scan: 1}}\nload: {model: closed, clients: {from: 1, to: 9, step: 2}}\nrepetitions: 3\norder: randomized\n",
		"name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: &a [*a]}\n",
		base + "repetitions: 2\nblocks: repetition\ntreatment_order: randomized\nfactors:\n  - {path: workload.ycsb, values: [a, c]}\n  - {path: load.rates, name: r, labels: [lo, hi], values: [[1], [2, 3]]}\n",
		"- 1\n",
		"a: [\n",
		"---\n---\n",
		"name: &n t\n<<: {seed: 1}\n\"k\\n\": *n\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	hostile, _ := filepath.Glob("testdata/hostile/*.yaml")
	for _, path := range hostile {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f.yaml", data)
		if err != nil {
			if s != nil {
				t.Fatalf("Parse returned both a spec and an error")
			}
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 || len(es) > maxPrinted+1 {
				t.Fatalf("error %T is not a non-empty Errors of at most %d: %v", err, maxPrinted+1, err)
			}
			for _, e := range es {
				msg := e.Error()
				if strings.ContainsAny(msg, "\r\n") || !strings.HasPrefix(msg, "f.yaml") || e.Msg == "" {
					t.Fatalf("malformed error %q", msg)
				}
			}
			return
		}
		if !bytes.Equal(s.Source, data) || s.File != "f.yaml" || s.OrderSeed == nil {
			t.Fatalf("accepted spec lost its file, source or order seed")
		}
		runs := s.Plan()
		if len(runs) != len(s.Levels())*s.Repetitions || len(runs) == 0 {
			t.Fatalf("%d runs for %d levels x %d repetitions", len(runs), len(s.Levels()), s.Repetitions)
		}
		seen := make(map[int]bool, len(runs))
		for i, r := range runs {
			if r.Seq != i || seen[r.Slot] || r.Slot < 0 || r.Slot >= len(runs) {
				t.Fatalf("bad run %d: %+v", i, r)
			}
			seen[r.Slot] = true
		}
		// The blocks run every run of every treatment once.
		planned := map[int]bool{}
		for _, b := range s.Blocks() {
			for _, r := range b.Runs {
				key := b.Treatment*SlotsPerTreatment + r.Slot
				if planned[key] {
					t.Fatalf("slot %d is in two blocks", key)
				}
				planned[key] = true
			}
		}
		want := len(runs)
		if len(s.Treatments) > 0 {
			want = 0
			for _, tr := range s.Treatments {
				want += len(tr.Spec.Plan())
			}
		}
		if len(planned) != want {
			t.Fatalf("blocks plan %d runs, the treatments %d", len(planned), want)
		}
		if RunOnNull != nil {
			RunOnNull(t, s)
		}
	})
}
