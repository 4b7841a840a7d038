package rotation

import (
	"sync"
	"sync/atomic"
	"testing"
)

type server struct {
	Member
	name  string
	given atomic.Int64
}

func TestPickGoesRoundRobin(t *testing.T) {
	var s Set[*server]
	if _, ok := s.Pick(); ok {
		t.Fatal("an empty set gave a member")
	}
	a, b, c := &server{name: "a"}, &server{name: "b"}, &server{name: "c"}
	s.Store([]*server{a, b, c})
	var got string
	for i := 0; i < 6; i++ {
		m, ok := s.Pick()
		if !ok {
			t.Fatal("no member")
		}
		got += m.name
	}
	if got != "abcabc" {
		t.Errorf("picks %q, want abcabc", got)
	}
	if a.InFlight() != 2 || b.InFlight() != 2 {
		t.Errorf("in flight a %d b %d, want 2 each", a.InFlight(), b.InFlight())
	}
	a.Release()
	if a.InFlight() != 1 {
		t.Errorf("a in flight %d after a release, want 1", a.InFlight())
	}
	if old := s.Swap(nil); len(old) != 3 || s.Load() != nil {
		t.Errorf("swap returned %d members and left %v", len(old), s.Load())
	}
}

// A member that leaves while many goroutines pick: once the set without
// it is stored, it is retired and its requests have drained, no request
// starts on it any more, and the others take them all.
func TestNoRequestStartsOnAMemberThatLeft(t *testing.T) {
	var s Set[*server]
	a, b := &server{name: "a"}, &server{name: "b"}
	s.Store([]*server{a, b})
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				m, _ := s.Pick()
				m.given.Add(1) // before the release: a drained member's count is final
				m.Release()
			}
		}()
	}
	for a.given.Load() < 1000 {
	}
	s.Store([]*server{b})
	a.Retire()
	for a.InFlight() > 0 {
	}
	before := a.given.Load()
	for b.given.Load() < before+10000 {
	}
	stop.Store(true)
	wg.Wait()
	if a.given.Load() != before {
		t.Errorf("%d requests started on a after it drained", a.given.Load()-before)
	}
}

func TestPickAllocatesNothing(t *testing.T) {
	var s Set[*server]
	s.Store([]*server{{name: "a"}, {name: "b"}})
	if n := testing.AllocsPerRun(1000, func() {
		m, _ := s.Pick()
		m.Release()
	}); n != 0 {
		t.Errorf("%v allocations per pick, want 0", n)
	}
}
