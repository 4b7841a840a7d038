package page

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// File names Write uses.
const (
	HTMLFile = "report.html"
	JSONFile = "report.json"
)

// WriteJSON writes r as indented JSON with stable field names (the same
// structs the page draws).
func WriteJSON(w io.Writer, r *Report) error {
	if err := r.Validate(); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	return enc.Encode(r)
}

// Write writes report.html and report.json into dir. Each file is written
// beside its final name and renamed into place, so a reader never sees half
// a report.
func Write(dir string, r *Report) error {
	for _, f := range []struct {
		name  string
		write func(io.Writer, *Report) error
	}{{HTMLFile, WriteHTML}, {JSONFile, WriteJSON}} {
		var buf bytes.Buffer
		if err := f.write(&buf, r); err != nil {
			return fmt.Errorf("cannot write %s: %w", f.name, err)
		}
		path := filepath.Join(dir, f.name)
		tmp, err := os.CreateTemp(dir, "."+f.name+".*")
		if err != nil {
			return fmt.Errorf("cannot write %s: %w; pass a results directory you can write to", path, err)
		}
		_, err = tmp.Write(buf.Bytes())
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(tmp.Name(), 0o644)
		}
		if err == nil {
			err = os.Rename(tmp.Name(), path)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("cannot write %s: %w", path, err)
		}
	}
	return nil
}
