package results

import "github.com/headroom-dev/headroom/internal/store"

// OpenReadOnly is Open on a store opened read-only (store.OpenReadOnly):
// for readers that must leave the file as they found it.
func OpenReadOnly(path string) (*Results, error) {
	st, err := store.OpenReadOnly(path)
	if err != nil {
		return nil, err
	}
	r, err := New(st)
	if err != nil {
		st.Close()
		return nil, err
	}
	return r, nil
}
