package termtext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// The escapes the package promises, one input each, with the expected
// text written out by hand.
var cases = []struct{ in, want string }{
	{"db1", "db1"},
	{"line\nnext\tcol", "line\nnext\tcol"},
	{"héllo 日本 ✓", "héllo 日本 ✓"},
	{"\x1b]0;owned\x07", `\u001b]0;owned\u0007`},
	{"ok\rFAKE", `ok\u000dFAKE`},
	{"\x1b[2J\x1b[H", `\u001b[2J\u001b[H`},
	{"nul\x00del\x7f", `nul\u0000del\u007f`},
	{"c1 \u009b31m", `c1 \u009b31m`},
	{"nel\u0085", `nel\u0085`},
	{"bad \x9b31m", "bad \uFFFD31m"},
	{"cut \xe2\x82", "cut \uFFFD\uFFFD"},
	{"", ""},
}

func TestEscape(t *testing.T) {
	for _, c := range cases {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
		if Clean(c.in) != (c.in == c.want) {
			t.Errorf("Clean(%q) = %v", c.in, Clean(c.in))
		}
	}
}

// Whatever the input, the result has no control character but newline
// and tab, and is valid UTF-8.
func FuzzEscape(f *testing.F) {
	for _, c := range cases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		checkPrintable(t, out)
		var b bytes.Buffer
		w := NewWriter(&b)
		// Written in pieces of 1, 2 and 3 bytes, so that sequences are
		// split between writes; the result is the same as at once.
		for i, n := 0, 1; i < len(s); i, n = i+n, n%3+1 {
			if _, err := w.Write([]byte(s[i:min(i+n, len(s))])); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if b.String() != out {
			t.Fatalf("written in pieces %q, at once %q", b.String(), out)
		}
	})
}

func checkPrintable(t *testing.T, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("not UTF-8: %q", s)
	}
	for _, r := range s {
		if control(r) {
			t.Fatalf("control character %U left in %q", r, s)
		}
	}
}

func TestWriterJoinsSplitSequences(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	// "日" (e6 97 a5), then U+009B (c2 9b), each split across writes.
	for _, p := range []string{"a\xe6", "\x97", "\xa5b\xc2", "\x9b", "c\xe2\x82"} {
		n, err := w.Write([]byte(p))
		if err != nil || n != len(p) {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := "a日b\\u009bc\uFFFD\uFFFD"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// JSON written through the Writer stays JSON that decodes to the same
// strings: encoding/json escapes C0 controls itself, and a C1 control it
// leaves raw becomes \u00XX, a JSON escape of the same character.
func TestWriterKeepsJSONValid(t *testing.T) {
	in := map[string]string{"host": "db\x1b[31m1\u0085\u009b", "note": "tab\there"}
	var b bytes.Buffer
	w := NewWriter(&b)
	if err := json.NewEncoder(w).Encode(in); err != nil {
		t.Fatal(err)
	}
	checkPrintable(t, b.String())
	var out map[string]string
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatalf("%v: %s", err, b.String())
	}
	for k, v := range in {
		if out[k] != v {
			t.Errorf("%s: %q after the round trip, want %q", k, out[k], v)
		}
	}
	if strings.ContainsRune(b.String(), 0x85) {
		t.Errorf("a raw C1 control reached the output: %q", b.String())
	}
}
