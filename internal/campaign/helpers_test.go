package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
)

// parse reads yaml as the spec file dir/spec.yaml.
func parse(t *testing.T, dir, yaml string) *spec.Spec {
	t.Helper()
	path := filepath.Join(dir, "spec.yaml")
	s, err := spec.Parse(path, []byte(yaml))
	if err != nil {
		t.Fatalf("spec: %v", err)
	}
	s.File = path
	return s
}

func openStore(t *testing.T, out Outcome) *store.Store {
	t.Helper()
	st, err := store.Open(out.StorePath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// start runs the campaign of s to its end and opens its store; a campaign
// that ends with an error fails the test.
func start(t *testing.T, s *spec.Spec) (Outcome, *store.Store) {
	t.Helper()
	out, err := Start(context.Background(), s, Options{})
	if err != nil {
		logFailedRuns(t, out)
		t.Fatal(err)
	}
	return out, openStore(t, out)
}

// logFailedRuns logs why each failed run of out failed, when its store
// can be read: the results directory is gone with the test's.
func logFailedRuns(t *testing.T, out Outcome) {
	t.Helper()
	if out.StorePath == "" {
		return
	}
	st, err := store.Open(out.StorePath)
	if err != nil {
		return
	}
	defer st.Close()
	runs, _ := st.Runs()
	for _, r := range runs {
		if r.Status != "completed" {
			t.Logf("run %d (%s, level %g, repetition %d): %s: %s", r.ID, r.Treatment, r.Level, r.Repetition, r.Status, r.Message)
		}
	}
}

// storedRuns is the store's runs, which must number n.
func storedRuns(t *testing.T, st *store.Store, n int) []store.Run {
	t.Helper()
	runs, err := st.Runs()
	if err != nil || len(runs) != n {
		t.Fatalf("runs: %v, %d, want %d: %+v", err, len(runs), n, runs)
	}
	return runs
}

// runKey is what places a stored run in its campaign's plan.
type runKey struct {
	Treatment  string
	Slot       int
	Level      float64
	Repetition int
}

// completedRunKeys is the key of each of runs, in their order; a run that
// did not complete fails the test.
func completedRunKeys(t *testing.T, runs []store.Run) []runKey {
	t.Helper()
	var keys []runKey
	for _, r := range runs {
		keys = append(keys, runKey{r.Treatment, r.Slot, r.Level, r.Repetition})
		if r.Status != store.StatusCompleted {
			t.Errorf("run %d: %s %s", r.ID, r.Status, r.Message)
		}
	}
	return keys
}

// populatedTreatments is the treatment of each populated event, in the
// order the campaign loaded their data.
func populatedTreatments(t *testing.T, st *store.Store) []string {
	t.Helper()
	evs, err := st.Events(-1)
	if err != nil {
		t.Fatal(err)
	}
	var populated []string
	for _, e := range evs {
		if e.Kind == eventPopulated {
			var d populatedDetail
			if err := json.Unmarshal([]byte(e.Detail), &d); err != nil {
				t.Fatal(err)
			}
			populated = append(populated, d.Treatment)
		}
	}
	return populated
}

// resumeFindsNothingToDo resumes the finished campaign out, whose store is
// st: it must say there is nothing to resume, count all n runs completed,
// and add no run and no event (it opens no target).
func resumeFindsNothingToDo(t *testing.T, out Outcome, st *store.Store, n int) {
	t.Helper()
	evs, _ := st.Events(-1)
	again, err := Resume(context.Background(), out.Dir, Options{})
	if !errors.Is(err, ErrNothingToResume) || again.Completed != n || again.Runs != n {
		t.Errorf("resume: %+v %v", again, err)
	}
	if runs, _ := st.Runs(); len(runs) != n {
		t.Errorf("resume ran again: %d runs", len(runs))
	}
	if evs2, _ := st.Events(-1); len(evs2) != len(evs) {
		t.Errorf("resume added %d events", len(evs2)-len(evs))
	}
}
