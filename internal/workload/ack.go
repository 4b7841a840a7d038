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
}

func (a *acknowledged) reset(limit uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.limit.Store(limit)
	for i := range a.done {
		a.done[i] = false
	}
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
