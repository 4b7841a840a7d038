package spec_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/spec"
	_ "github.com/headroom-dev/headroom/internal/target/null"
)

// hostileAllocLimit bounds what validating one hostile input may allocate
// in all: a spec is at most spec.MaxSpecBytes, and its parse tree a few
// hundred bytes per node.
const hostileAllocLimit = 256 << 20

// maxHostileLine bounds one printed error after its file name: a line
// number, a path and a message, each clipped (errors.go).
const maxHostileLine = 1200

// TestHostileCorpus runs validate's entry point (spec.LoadFile, as
// `headroom validate` does) on every input of testdata/hostile: malformed
// YAML, numbers beyond their bounds, bombs of aliases, invalid text, keys
// in bulk. Each must give a clear error, never a panic or a fatal error,
// within a bounded allocation. The first line of each file says what its
// error must contain: "# expect: TEXT" for exactly one error, "#
// expect-many: TEXT" for a list (at most 50 lines and a count) whose first
// line contains TEXT. A file without that line (one that is not text) must
// fail with one error, whatever it says.
//
// The counts go to standard output; `make test` runs this test again with
// -v so that they show in its output (go test hides a passing package's
// output otherwise).
func TestHostileCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/hostile/*.yaml")
	if err != nil || len(files) < 60 {
		t.Fatalf("the corpus has %d inputs (%v), want at least 60", len(files), err)
	}
	clear := 0
	for _, f := range files {
		if checkHostile(t, f) {
			clear++
		}
	}
	// Printed rather than logged: go test shows a passing test's log
	// only with -v, and then this line would show twice.
	fmt.Printf("hostile spec corpus: %d inputs, %d clear errors\n", len(files), clear)
	if clear != len(files) {
		t.Errorf("%d of %d inputs did not give a clear error", len(files)-clear, len(files))
	}
}

// checkHostile validates one file and reports whether its error is clear.
func checkHostile(t *testing.T, path string) (ok bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, many := expectation(data)
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: panic: %v", path, r)
			ok = false
		}
	}()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err := spec.LoadFile(path)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > hostileAllocLimit {
		t.Errorf("%s: validating allocated %d MiB, more than %d MiB", path, alloc>>20, hostileAllocLimit>>20)
		return false
	}
	if err == nil {
		t.Errorf("%s: accepted (%d runs); it should be refused", path, len(s.Plan()))
		return false
	}
	var es spec.Errors
	if !errors.As(err, &es) || len(es) == 0 {
		t.Errorf("%s: error %T is not a list of spec errors: %v", path, err, err)
		return false
	}
	ok = true
	for i, e := range es {
		line := e.Error()
		last := i == len(es)-1 && strings.HasPrefix(e.Msg, "... and ")
		switch {
		case strings.ContainsAny(line, "\r\n") || !strings.HasPrefix(line, path):
			t.Errorf("%s: error %q is not one line starting with the file name", path, line)
			ok = false
		case len(line)-len(path) > maxHostileLine:
			t.Errorf("%s: error of %d bytes, more than %d after the file name: %.200s...", path, len(line)-len(path), maxHostileLine, line)
			ok = false
		case e.Line == 0 && e.Path == "" && !last && !wholeFile(e.Msg):
			t.Errorf("%s: error %q names neither a line nor a field", path, line)
			ok = false
		}
	}
	switch {
	case !many && len(es) != 1:
		t.Errorf("%s: %d errors, want one:\n%v", path, len(es), err)
		ok = false
	case many && len(es) > 51:
		t.Errorf("%s: %d errors printed, want at most 50 and a count", path, len(es))
		ok = false
	case want != "" && !strings.Contains(es[0].Error(), want):
		t.Errorf("%s: first error %q does not contain %q", path, es[0].Error(), want)
		ok = false
	}
	return ok
}

// wholeFile reports whether msg is about the file as a whole (its size,
// that it is empty, that it is not a mapping), which has no line or field.
func wholeFile(msg string) bool {
	return strings.Contains(msg, "the spec is empty") || strings.Contains(msg, "the most a spec may be")
}

// expectation reads the "# expect: " or "# expect-many: " first line.
func expectation(data []byte) (want string, many bool) {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if w, ok := bytes.CutPrefix(first, []byte("# expect-many: ")); ok {
		return string(w), true
	}
	if w, ok := bytes.CutPrefix(first, []byte("# expect: ")); ok {
		return string(w), false
	}
	return "", false
}
