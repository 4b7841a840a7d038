package workload

import (
	"sync"
	"sync/atomic"
)

// ackWindowSize bounds how far inserts may run ahead of the oldest insert
// still outstanding (issued but neither done nor given up).
const ackWindowSize = 1 << 16

// acknowledged tracks which run-phase inserts have finished, so that the
// "latest" distribution only picks records that can exist: those below the
// highest key number under which every insert has finished. YCSB keeps the
// same bound (its acknowledged counter) for the same reason: an insert that
// is still queued or in flight must not be read yet, or the read fails with
// "not found" through no fault of the target.
type acknowledged struct {
	limit atomic.Uint64 // every insert with a key number below limit has finished

	mu   sync.Mutex
	done []bool // done[k % ackWindowSize] for limit <= k < limit + ackWindowSize

	// holes are finished inserts that did not store their record (dropped
	// before they were sent, or failed), so "latest" must not read them.
	// nholes lets the chooser skip the lock while there are none.
	nholes atomic.Int64
	holes  map[uint64]struct{}
}

// maxHoles bounds the hole set; beyond it the oldest holes are forgotten
// (reads of them then fail with not_found, as in YCSB, which has no such
// set at all).
const maxHoles = 4096

// hole records that the insert of key k finished without storing a record.
func (a *acknowledged) hole(k uint64) {
	a.mu.Lock()
	if a.holes == nil {
		a.holes = map[uint64]struct{}{}
	}
	if len(a.holes) >= maxHoles {
		var oldest uint64 = ^uint64(0)
		for h := range a.holes {
			oldest = min(oldest, h)
		}
		delete(a.holes, oldest)
	}
	a.holes[k] = struct{}{}
	a.nholes.Store(int64(len(a.holes)))
	a.mu.Unlock()
	a.ack(k)
}

// isHole reports whether k's insert finished without storing a record.
func (a *acknowledged) isHole(k uint64) bool {
	if a.nholes.Load() == 0 {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.holes[k]
	return ok
}

func (a *acknowledged) reset(limit uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.limit.Store(limit)
	for i := range a.done {
		a.done[i] = false
	}
	a.holes = nil
	a.nholes.Store(0)
}

// ack records that the insert of key k finished (successfully or not).
func (a *acknowledged) ack(k uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done == nil {
		a.done = make([]bool, ackWindowSize)
	}
	limit := a.limit.Load()
	if k < limit {
		return
	}
	if k-limit >= ackWindowSize {
		// Far more inserts outstanding than the window holds: give up on
		// the oldest ones rather than grow without bound.
		for limit+ackWindowSize <= k {
			a.done[limit%ackWindowSize] = false
			limit++
		}
	}
	a.done[k%ackWindowSize] = true
	for a.done[limit%ackWindowSize] {
		a.done[limit%ackWindowSize] = false
		limit++
	}
	a.limit.Store(limit)
}

// holeList returns the recorded holes.
func (a *acknowledged) holeList() []uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]uint64, 0, len(a.holes))
	for k := range a.holes {
		out = append(out, k)
	}
	return out
}

// addHoles records holes known from an earlier run (their inserts are long
// finished, so only the hole set changes).
func (a *acknowledged) addHoles(ks []uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.holes == nil {
		a.holes = map[uint64]struct{}{}
	}
	for _, k := range ks {
		if len(a.holes) >= maxHoles {
			break
		}
		a.holes[k] = struct{}{}
	}
	a.nholes.Store(int64(len(a.holes)))
}
