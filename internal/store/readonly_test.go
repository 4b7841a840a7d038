package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A store opened read-only reads what was written and refuses to write,
// and leaves the database file byte for byte as it was.
func TestOpenReadOnlyRefusesWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	st, err := Create(path, Campaign{Name: "ro"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.StartRun(Run{Model: "open", Level: 10, Repetition: 1, Start: time.Unix(1, 0)}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := ro.Runs()
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	_, err = ro.StartRun(Run{Model: "open", Level: 20, Repetition: 1, Start: time.Unix(2, 0)})
	if err == nil || !strings.Contains(err.Error(), "read") {
		t.Errorf("a write through a read-only store gave %v", err)
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("reading through a read-only store changed the file")
	}
	if _, err := OpenReadOnly(filepath.Join(t.TempDir(), "none.db")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a missing file gave %v", err)
	}
}
