package storegen

import (
	"path/filepath"
	"testing"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// Results writes the store c describes into a temporary directory of tb
// and opens it read-only as the reports read it; tb closes it at the end.
func Results(tb testing.TB, c Config) *results.Results {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "results.db")
	if _, err := Write(path, c); err != nil {
		tb.Fatal(err)
	}
	st, err := store.OpenReadOnly(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	r, err := results.New(st)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}
