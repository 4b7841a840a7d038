package regularfile

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "trace.csv")
	if err := os.WriteFile(file, []byte("0,10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil || string(b) != "0,10\n" {
		t.Errorf("read %q, %v", b, err)
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// A FIFO without a writer: opening it for reading would wait for one.
	for path, want := range map[string]string{
		fifo:        "is a FIFO (named pipe), not a regular file; give a file",
		dir:         "is a directory, not a regular file",
		"/dev/null": "is a device, not a regular file",
	} {
		f, err := Open(path)
		if err == nil {
			f.Close()
			t.Errorf("%s: opened", path)
			continue
		}
		if !strings.Contains(err.Error(), path+" "+want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); err == nil || !os.IsNotExist(err) {
		t.Errorf("a missing file: %v", err)
	}
}
