package results

import "sync"

// memo holds values computed over a Results (Memo).
type memo struct {
	mu     sync.Mutex
	values map[string]any
}

// Memo returns the value computed for key over these results, calling
// compute only the first time key is asked for; an error is returned and
// not kept. Several outputs of one report ask for the same analysis of a
// treatment (its levels above all, which decode every interval of its
// runs), and a Results is a snapshot: its runs are read when it is made,
// and a completed run's intervals never change afterwards. The value is
// shared: callers must not change what it holds.
func (r *Results) Memo(key string, compute func() (any, error)) (any, error) {
	r.memo.mu.Lock()
	defer r.memo.mu.Unlock()
	if v, ok := r.memo.values[key]; ok {
		return v, nil
	}
	v, err := compute()
	if err != nil {
		return nil, err
	}
	if r.memo.values == nil {
		r.memo.values = map[string]any{}
	}
	r.memo.values[key] = v
	return v, nil
}
