package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// LoadFile reads and parses the spec file at path. (It is not called Load
// because that name is the load section's type.) Errors in the spec are
// returned as Errors; a file that cannot be read gives one sentence that
// wraps the underlying error.
func LoadFile(path string) (*Spec, error) {
	data, err := readSpecFile(path)
	if err != nil {
		return nil, readError(path, err)
	}
	s, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	if err := s.checkScripts(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return s, nil
}

// checkScripts makes sure the SQL scripts a dataset names can be read, so
// that a typo fails at validation rather than after the target started.
func (s *Spec) checkScripts(dir string) error {
	d := s.Workload.Dataset
	if d == nil {
		return nil
	}
	var errs Errors
	for _, f := range []struct{ field, path string }{{"workload.dataset.schema", d.Schema}, {"workload.dataset.populate", d.Populate}} {
		if f.path == "" {
			continue
		}
		p := f.path
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if _, err := os.ReadFile(p); err != nil {
			errs = append(errs, &Error{File: s.File, Path: f.field, Msg: fmt.Sprintf("cannot read %s (%v); the path is relative to the spec file", p, errors.Unwrap(err))})
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

func readError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &fileError{path + ": spec file not found; check the path", err}
	case errors.Is(err, fs.ErrPermission):
		return &fileError{path + ": spec file is not readable; check its permissions", err}
	}
	reason := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		reason = pe.Err.Error() // the path is already in the message
	}
	return &fileError{fmt.Sprintf("%s: cannot read the spec file (%s); give the path of a YAML file", path, reason), err}
}

// fileError prints one sentence but still unwraps to the operating system's
// error, for errors.Is(err, fs.ErrNotExist).
type fileError struct {
	msg string
	err error
}

func (e *fileError) Error() string { return e.msg }
func (e *fileError) Unwrap() error { return e.err }

// Parse reads a spec from data; file names it in errors ("" is allowed).
// It decodes strictly, fills defaults, checks every rule and returns all
// problems found as Errors, sorted by line.
func Parse(file string, data []byte) (*Spec, error) {
	root, err := readDocument(file, data)
	if err != nil {
		return nil, err
	}
	base, tnode := withoutKey(root, "treatments")
	base, fnode := withoutKey(base, "factors")
	s, errs := parseRoot(file, base)
	errs = append(errs, parseVariants(file, root, base, tnode, fnode, s)...)
	if s != nil && len(errs) == 0 {
		// Names in analysis settings refer to treatments, known only now.
		errs = append(errs, CheckVariabilityNames(file, s)...)
	}
	if s != nil && len(errs) == 0 {
		// Only now is the plan of every treatment known.
		errs = append(errs, checkBudget(file, root, s)...)
	}
	if len(errs) > 0 {
		return nil, errs.capped(file)
	}
	s.File = file
	s.Source = bytes.Clone(data)
	for i := range s.Treatments {
		s.Treatments[i].Spec.File, s.Treatments[i].Spec.Source = file, s.Source
	}
	return s, nil
}

// parseRoot decodes, checks and completes the spec of one root mapping.
func parseRoot(file string, root *yaml.Node) (*Spec, Errors) {
	s := defaults()
	d := newDecoder(file)
	d.value(root, root.Line, "", reflect.ValueOf(s).Elem())
	// A missing top-level field has no line; without this it would get the
	// first line of the file.
	delete(d.lines, "")
	s.Workload.YCSB = strings.ToLower(s.Workload.YCSB)

	errs := d.errs
	for _, e := range check(s, file, d.lines) {
		if !coveredBy(e, d.errs) {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	finish(s)
	return s, nil
}

// coveredBy reports whether a rule's error is about a value that already
// failed to decode, where it would only repeat the first error.
func coveredBy(e *Error, decodeErrs Errors) bool {
	for _, de := range decodeErrs {
		if de.Path != "" && under(e.Path, de.Path) {
			return true
		}
	}
	return false
}

// readDocument parses data into the root mapping of its only document.
func readDocument(file string, data []byte) (root *yaml.Node, err error) {
	if len(data) > MaxSpecBytes {
		return nil, Errors{{File: file, Msg: fmt.Sprintf("the file is larger than %s, the most a spec may be; keep long inputs (rates over time, SQL) in the trace or SQL files a spec names", byteSize(MaxSpecBytes))}}
	}
	// The YAML library should not panic, but a spec parser must not take
	// the whole program down if it does.
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, Errors{{File: file, Msg: oneLine(fmt.Sprintf("the YAML parser failed (%v); check the file's syntax", r))}}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Errors{emptyFile(file)}
		}
		return nil, Errors{yamlError(file, data, err)}
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, Errors{{File: file, Line: extra.Line, Msg: "a spec file holds one YAML document; remove the second document that starts here"}}
	case !errors.Is(err, io.EOF):
		return nil, Errors{yamlError(file, data, err)}
	}
	if len(doc.Content) == 0 {
		return nil, Errors{emptyFile(file)}
	}
	root = resolve(doc.Content[0])
	if root == nil || isNull(root) {
		return nil, Errors{emptyFile(file)}
	}
	if root.Kind != yaml.MappingNode {
		return nil, Errors{{File: file, Line: root.Line, Msg: fmt.Sprintf("expected a mapping of sections (name: ..., target: ..., workload: ..., load: ...), got %s", describe(root))}}
	}
	// Before anything walks the values with their aliases expanded.
	if e := checkExpansion(file, root); e != nil {
		return nil, Errors{e}
	}
	return root, nil
}

func emptyFile(file string) *Error {
	return &Error{File: file, Msg: "the spec is empty; it needs at least name, target, workload and load"}
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlError turns a YAML syntax error into an Error with its line.
func yamlError(file string, data []byte, err error) *Error {
	msg := oneLine(err.Error())
	line := 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		// go-yaml numbers the lines of parser errors (as opposed to
		// scanner errors) from 0; they all start with these words.
		if strings.HasPrefix(msg, "did not find expected") || strings.HasPrefix(msg, "found undefined tag") {
			line++
		}
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	fix := "check the indentation and quoting"
	if strings.Contains(msg, "cannot start any token") {
		fix = "indent with spaces rather than tabs, and quote values that start with @ or `"
		if l := firstTabIndent(data); line == 0 && l > 0 {
			line = l
		}
	}
	if l, f := locateYAMLError(msg, data); f != "" {
		fix = f
		if line == 0 {
			line = l
		}
	}
	return &Error{File: file, Line: line, Msg: fmt.Sprintf("invalid YAML (%s); %s", msg, fix)}
}

// firstTabIndent returns the first line indented with a tab, or 0; go-yaml
// does not say where the tab it rejects is.
func firstTabIndent(data []byte) int {
	for i, l := range bytes.Split(data, []byte("\n")) {
		indent := l[:len(l)-len(bytes.TrimLeft(l, " \t"))]
		if bytes.IndexByte(indent, '\t') >= 0 {
			return i + 1
		}
	}
	return 0
}
