package results_test

import (
	"errors"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// Memo computes a key's value once per Results, keeps keys apart, and
// does not keep a failure: the next caller computes again.
func TestMemoComputesOncePerKey(t *testing.T) {
	st := resultstest.Create(t, "", store.Campaign{Name: "m"})
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	get := func(key string, fail bool) (any, error) {
		return r.Memo(key, func() (any, error) {
			calls[key]++
			if fail {
				return nil, errors.New("unreadable")
			}
			return key + "!", nil
		})
	}
	for range 3 {
		if v, err := get("a", false); err != nil || v != "a!" {
			t.Fatalf("a: %v, %v", v, err)
		}
	}
	if v, _ := get("b", false); v != "b!" {
		t.Fatalf("b: %v", v)
	}
	if _, err := get("c", true); err == nil {
		t.Fatal("a failing computation returned no error")
	}
	if v, err := get("c", false); err != nil || v != "c!" {
		t.Fatalf("c after a failure: %v, %v", v, err)
	}
	if calls["a"] != 1 || calls["b"] != 1 || calls["c"] != 2 {
		t.Errorf("computations %v, want a and b once, c twice (its failure not kept)", calls)
	}
	// Another Results over the same store computes afresh.
	r2, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Memo("a", func() (any, error) { calls["a"]++; return 1, nil }); err != nil || calls["a"] != 2 {
		t.Errorf("a second Results reused the first one's value (calls %d, %v)", calls["a"], err)
	}
}

// A computation may ask for other keys (the answer card asks for the
// levels of each treatment) without waiting on itself.
func TestMemoComputationsNest(t *testing.T) {
	st := resultstest.Create(t, "", store.Campaign{Name: "m"})
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	v, err := r.Memo("outer", func() (any, error) {
		inner, err := r.Memo("inner", func() (any, error) { return 2, nil })
		if err != nil {
			return nil, err
		}
		return inner.(int) + 1, nil
	})
	if err != nil || v != 3 {
		t.Fatalf("outer = %v, %v; want 3", v, err)
	}
	if v, _ := r.Memo("inner", func() (any, error) { return 0, nil }); v != 2 {
		t.Errorf("inner = %v, want the 2 computed inside outer", v)
	}
}

// A treatment's designed faults are named with their hosts and times;
// limit changes, cluster changes and the absence of events are not.
func TestTreatmentDisturbances(t *testing.T) {
	tr := results.Treatment{Events: []results.ScheduledEvent{
		{At: 10 * time.Second, Action: "kill", Host: "db1"},
		{At: 2 * time.Second, Action: "set_cpu", Host: "db1"},
		{At: 5 * time.Second, Action: "add_node"},
		{At: 20 * time.Second, Action: "partition", Host: "db2"},
	}}
	if got, want := tr.Disturbances(), "kill of db1 at 10s, partition of db2 at 20s"; got != want {
		t.Errorf("Disturbances() = %q, want %q", got, want)
	}
	if got := (results.Treatment{}).Disturbances(); got != "" {
		t.Errorf("no events: %q", got)
	}
}
