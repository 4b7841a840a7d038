// Package termtext keeps text that came from outside Headroom (a host name
// from an imported file, a server's error message, a name in a results
// database) from acting on the terminal it is printed to. A control
// character in such text can move the cursor, rewrite a line already
// printed, set the window title or ring the bell; printed through this
// package it shows as its escape instead, \u001b for ESC, which reads the
// same to a person and stays a valid escape inside a JSON string.
//
// Kept as they are: newline and tab, which Headroom's own output lays out
// with, and every printable character of any script. Escaped: the C0
// controls (U+0000-U+001F, carriage return included), DEL and the C1
// controls (U+0080-U+009F, which some terminals take as the start of a
// command). Bytes that are not UTF-8 become U+FFFD, as a terminal in a
// UTF-8 locale would show them, so that a lone 0x9b (an 8-bit CSI) cannot
// start a command either.
package termtext

import (
	"io"
	"strings"
	"unicode/utf8"
)

// control reports whether r is escaped.
func control(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	}
	return false
}

const hexDigits = "0123456789abcdef"

// appendEscape appends r's escape, \u00XX (every escaped rune is below
// U+0100).
func appendEscape(b []byte, r rune) []byte {
	return append(b, '\\', 'u', '0', '0', hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// Clean reports whether s prints as it is.
func Clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			return cleanFrom(s[i:])
		}
	}
	return true
}

func cleanFrom(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || control(r) {
			// RuneError is also what a valid U+FFFD decodes to: escaping
			// it again changes nothing a reader sees.
			return false
		}
	}
	return true
}

// Escape returns s with its control characters escaped and its invalid
// bytes replaced; s itself when there is nothing to change.
func Escape(s string) string {
	if Clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	buf := make([]byte, 0, 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == utf8.RuneError:
			b.WriteRune(utf8.RuneError)
		case control(r):
			b.Write(appendEscape(buf[:0], r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Writer escapes what is written to it, as Escape does, before it reaches
// the writer under it. A UTF-8 sequence split between two writes is
// joined first; one left incomplete is replaced when Flush is called (a command calls it when it is done).
type Writer struct {
	w       io.Writer
	pending []byte // the start of a UTF-8 sequence the last write ended in
	joined  []byte // pending and the next write, together
	out     []byte // reused for what one write becomes
}

// NewWriter returns a Writer printing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Raw is the writer under the escaping, for output that is data, not text
// for a person (an export's CSV or Parquet written to standard output).
func (t *Writer) Raw() io.Writer { return t.w }

// Write escapes p and writes the result. It reports len(p) when all of it
// was written, or taken as the start of a sequence the next write ends.
func (t *Writer) Write(p []byte) (int, error) {
	in := p
	if len(t.pending) > 0 {
		t.joined = append(append(t.joined[:0], t.pending...), p...)
		in, t.pending = t.joined, t.pending[:0]
	}
	out := t.out[:0]
	for i := 0; i < len(in); {
		c := in[i]
		if c < utf8.RuneSelf {
			if control(rune(c)) {
				out = appendEscape(out, rune(c))
			} else {
				out = append(out, c)
			}
			i++
			continue
		}
		if !utf8.FullRune(in[i:]) {
			// The rest may be the start of a sequence the next write ends.
			t.pending = append(t.pending, in[i:]...)
			break
		}
		r, n := utf8.DecodeRune(in[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = utf8.AppendRune(out, utf8.RuneError)
		case control(r):
			out = appendEscape(out, r)
		default:
			out = append(out, in[i:i+n]...)
		}
		i += n
	}
	t.out = out
	if len(out) > 0 {
		if _, err := t.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what is pending of an incomplete UTF-8 sequence: a U+FFFD
// for each of its bytes, as Escape replaces them.
func (t *Writer) Flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	n := len(t.pending)
	t.pending = t.pending[:0]
	_, err := io.WriteString(t.w, strings.Repeat(string(utf8.RuneError), n))
	return err
}
