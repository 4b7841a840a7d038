// Package resultstest holds the helpers the tests of the results model's
// readers share: copies of the committed schema-1 stores, and new stores
// in a test's temporary directory to write designed campaigns into.
package resultstest

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// v1Dir is internal/results/testdata/v1, found from this file so that a
// test of any package can reach it.
func v1Dir(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("resultstest: cannot locate internal/results/testdata/v1")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata", "v1")
}

// CopyV1 copies the committed schema-1 store name (treatments.db,
// closed.db or lab.db of internal/results/testdata/v1, written before the
// fact tables) into a new temporary directory and returns the copy's
// path, so that nothing a test does changes the committed file.
func CopyV1(t testing.TB, name string) string {
	t.Helper()
	in, err := os.Open(filepath.Join(v1Dir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(t.TempDir(), name)
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// OpenV1 opens a copy of a committed schema-1 store (see CopyV1), closed
// when the test ends.
func OpenV1(t testing.TB, name string) *results.Results {
	t.Helper()
	r, err := results.Open(CopyV1(t, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// Create creates the store results.db in dir (a new temporary directory
// when dir is ""), closed when the test ends.
func Create(t testing.TB, dir string, c store.Campaign) *store.Store {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	st, err := store.Create(filepath.Join(dir, "results.db"), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Must returns a check that ends the test at once on an error, for the
// many steps of writing a designed store.
func Must(t testing.TB) func(error) {
	return func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}
