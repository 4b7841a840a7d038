package results

import "sync"

// memo holds values computed over a Results (Memo).
type memo struct {
	mu      sync.Mutex
	entries map[string]*memoEntry
}

// memoEntry is one key's value, ready when done is closed.
type memoEntry struct {
	done  chan struct{}
	value any
	err   error
}

// Memo returns the value computed for key over these results, calling
// compute only the first time key is asked for; an error is returned and
// not kept. Several outputs of one report ask for the same analysis of a
// treatment (its levels above all, which decode every interval of its
// runs), and a Results is a snapshot: its runs are read when it is made,
// and a completed run's intervals never change afterwards. The value is
// shared: callers must not change what it holds.
//
// compute may itself ask for other keys (the answer card asks for the
// levels); a caller asking for a key being computed waits for it.
func (r *Results) Memo(key string, compute func() (any, error)) (any, error) {
	r.memo.mu.Lock()
	if e, ok := r.memo.entries[key]; ok {
		r.memo.mu.Unlock()
		<-e.done
		return e.value, e.err
	}
	if r.memo.entries == nil {
		r.memo.entries = map[string]*memoEntry{}
	}
	e := &memoEntry{done: make(chan struct{})}
	r.memo.entries[key] = e
	r.memo.mu.Unlock()

	e.value, e.err = compute()
	if e.err != nil {
		r.memo.mu.Lock()
		delete(r.memo.entries, key)
		r.memo.mu.Unlock()
	}
	close(e.done)
	return e.value, e.err
}
