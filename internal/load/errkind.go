package load

import (
	"context"
	"errors"
	"os"
	"sync"

	"github.com/headroom-dev/headroom/internal/target"
)

// maxKinds bounds the number of distinct error kinds a run tracks; kinds
// beyond it are counted as "other" so that a target returning a new message
// per error cannot grow memory without bound.
const maxKinds = 32

// kindTable interns error kind names to small indexes so a worker records an
// error without allocating. Index 0 means success.
type kindTable struct {
	mu    sync.RWMutex
	names []string
	index map[string]uint8
}

func newKindTable() *kindTable {
	return &kindTable{names: []string{"", "other"}, index: map[string]uint8{"other": 1}}
}

func (t *kindTable) id(name string) uint8 {
	t.mu.RLock()
	i, ok := t.index[name]
	t.mu.RUnlock()
	if ok {
		return i
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.index[name]; ok {
		return i
	}
	if len(t.names) >= maxKinds {
		return 1
	}
	i = uint8(len(t.names))
	t.names = append(t.names, name)
	t.index[name] = i
	return i
}

func (t *kindTable) name(i uint8) string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if int(i) < len(t.names) {
		return t.names[i]
	}
	return "other"
}

// classify names the kind of a request error: the target's own kind when it
// gives one, otherwise timeout, not_found or error.
func classify(err error) string {
	var k target.Kinder
	switch {
	case errors.As(err, &k):
		return k.Kind()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.Is(err, target.ErrNotFound):
		return "not_found"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}
