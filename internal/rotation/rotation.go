// Package rotation is a round-robin set whose members can leave while
// requests use them: the application servers the apptier target spreads
// its requests over, and the read replicas an application server spreads
// its reads over. Choosing a member takes no lock and allocates nothing:
// the set is an immutable slice behind an atomic pointer, replaced whole,
// and the turn is one atomic counter.
//
// A member leaves in three steps: Store a set without it, Retire it, then
// wait until InFlight is 0. Pick counts a request in flight before it
// looks at the retired mark, and Retire sets the mark before the waiter
// reads the count (all sequentially consistent atomics), so either Pick
// sees the mark and takes another member, or the waiter sees the request
// and waits for it: no request starts on a member once its wait is over.
package rotation

import "sync/atomic"

// Member is embedded in a set's elements.
type Member struct {
	inflight atomic.Int64
	retired  atomic.Bool
}

func (m *Member) member() *Member { return m }

// Release ends a request that Pick gave this member.
func (m *Member) Release() { m.inflight.Add(-1) }

// Retire marks the member as out of its set; call it after storing a set
// without it, and before waiting for InFlight to reach 0.
func (m *Member) Retire() { m.retired.Store(true) }

// Retired says whether Retire was called.
func (m *Member) Retired() bool { return m.retired.Load() }

// InFlight counts the requests Pick gave this member that are not
// released.
func (m *Member) InFlight() int64 { return m.inflight.Load() }

// Elem is a set's element type: a pointer to a struct that embeds Member.
type Elem interface{ member() *Member }

// Set is the rotation. Its zero value is an empty set.
type Set[T Elem] struct {
	members atomic.Pointer[[]T]
	turn    atomic.Uint64
}

// Load is the set's members now (nil when empty); the slice must not be
// changed.
func (s *Set[T]) Load() []T {
	if p := s.members.Load(); p != nil {
		return *p
	}
	return nil
}

// Store makes ms the set; the caller gives up ms.
func (s *Set[T]) Store(ms []T) { s.members.Store(&ms) }

// Swap makes ms the set and returns the members it had.
func (s *Set[T]) Swap(ms []T) []T {
	if p := s.members.Swap(&ms); p != nil {
		return *p
	}
	return nil
}

// Pick is the next member in turn with the request counted in flight
// (the caller must Release it), or ok false when the set is empty.
func (s *Set[T]) Pick() (m T, ok bool) {
	for {
		p := s.members.Load()
		if p == nil || len(*p) == 0 {
			return m, false
		}
		set := *p
		m = set[(s.turn.Add(1)-1)%uint64(len(set))]
		mm := m.member()
		mm.inflight.Add(1)
		if !mm.retired.Load() {
			return m, true
		}
		// The set was replaced before the mark was set: the next load
		// sees the new one.
		mm.inflight.Add(-1)
	}
}
