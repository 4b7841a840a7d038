package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
)

// jsonWalk reads a JSON document token by token, so that an array of a
// million reports is decoded one element at a time and never held whole.
// Its methods turn the decoder's errors into *Error with a line and a
// JSON path.
type jsonWalk struct {
	p    *pass
	dec  *json.Decoder
	base int64 // bytes skipped before the decoder's input (a byte order mark)
	want string
}

func newJSONWalk(p *pass, want string) (*jsonWalk, error) {
	br := bufio.NewReaderSize(p.r, 64<<10)
	w := &jsonWalk{p: p, want: want}
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte("\ufeff")) {
		br.Discard(3)
		w.base = 3
	}
	trimmed := bytes.TrimLeft(p.head, " \t\r\n\ufeff")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, p.fail(w.lineOf(p.head, len(p.head)-len(trimmed)), "", "expected %s, got %s", want, describe(p.head))
	}
	w.dec = json.NewDecoder(br)
	return w, nil
}

func (w *jsonWalk) lineOf(head []byte, off int) int {
	return bytes.Count(head[:off], []byte("\n")) + 1
}

func (w *jsonWalk) offset() int64 { return w.base + w.dec.InputOffset() }

// fail reports an error at the decoder's position.
func (w *jsonWalk) fail(path, format string, args ...any) error {
	return w.failAt(w.offset(), path, format, args...)
}

func (w *jsonWalk) failAt(off int64, path, format string, args ...any) error {
	return w.p.fail(w.p.lineAt(off), path, format, args...)
}

// readErr words a decoder error met reading the value that starts at
// offset start. Decode's offsets count from there (rel), Token's from the
// start of the input.
func (w *jsonWalk) readErr(err error, start int64, path string, rel bool) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return w.fail(path, "expected %s, got a file that ends before its JSON does (cut short?)", w.want)
	case errors.As(err, &syn):
		off := w.base + syn.Offset
		if rel {
			off = start + syn.Offset
		}
		return w.failAt(off, "", "expected %s, got malformed JSON (%s)", w.want, syn.Error())
	case errors.As(err, &typ):
		p := path
		if typ.Field != "" {
			p += "." + typ.Field
		}
		return w.failAt(start+typ.Offset, p, "expected %s here in %s, got a JSON %s", jsonKind(typ.Type), formatTitle(w.p.format), typ.Value)
	}
	return w.fail(path, "expected %s, got JSON that does not fit (%v)", w.want, err)
}

func (w *jsonWalk) token(path string) (json.Token, error) {
	start := w.offset()
	t, err := w.dec.Token()
	if err != nil {
		return nil, w.readErr(err, start, path, false)
	}
	return t, nil
}

// decode decodes the next value into v.
func (w *jsonWalk) decode(path string, v any) error {
	start := w.offset()
	if err := w.dec.Decode(v); err != nil {
		return w.readErr(err, start, path, true)
	}
	return nil
}

// object reads an object, calling field for each key; field must read
// the key's value (or skip it). A value of another kind is an error
// saying what was expected, in the words of what.
func (w *jsonWalk) object(path, what string, field func(key string) error) error {
	start := w.offset()
	t, err := w.token(path)
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return w.failAt(start, path, "expected %s (a JSON object), got %s", what, tokenKind(t))
	}
	for w.dec.More() {
		k, err := w.token(path)
		if err != nil {
			return err
		}
		key, _ := k.(string)
		if err := field(key); err != nil {
			return err
		}
		if w.p.err != nil {
			return w.p.err
		}
	}
	_, err = w.token(path) // '}'
	return err
}

// array reads an array, calling elem for each element, which must read it.
func (w *jsonWalk) array(path, what string, elem func(i int) error) error {
	start := w.offset()
	t, err := w.token(path)
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != '[' {
		return w.failAt(start, path, "expected %s (a JSON array), got %s", what, tokenKind(t))
	}
	for i := 0; w.dec.More(); i++ {
		if err := elem(i); err != nil {
			return err
		}
		if w.p.err != nil {
			return w.p.err
		}
	}
	_, err = w.token(path) // ']'
	return err
}

// skip reads one value of any kind without keeping it.
func (w *jsonWalk) skip(path string) error {
	depth := 0
	for {
		t, err := w.token(path)
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			default:
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// end checks that nothing but white space follows the document.
func (w *jsonWalk) end() error {
	if _, err := w.dec.Token(); !errors.Is(err, io.EOF) {
		return w.fail("", "expected %s, got more after its closing brace", w.want)
	}
	return nil
}

// missing words a document without its top-level key: another format's
// name when the input is one, else what the object lacks (describe would
// name this very format when the key appears deeper down).
func (w *jsonWalk) missing(key string) error {
	got := "JSON of another shape (an object without a top-level \"" + key + "\" key)"
	if f, ok := Detect(w.p.head); ok && f != w.p.format {
		got = describe(w.p.head)
	}
	return w.p.fail(1, "", "expected %s, got %s", w.want, got)
}

func tokenKind(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		if v == '{' {
			return "a JSON object"
		}
		return "a JSON array"
	case string:
		return fmt.Sprintf("the string %q", truncate(v, 40))
	case float64:
		return fmt.Sprintf("the number %v", v)
	case bool:
		return fmt.Sprintf("%v", v)
	case nil:
		return "null"
	}
	return "another value"
}

func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "a " + t.String()
}
