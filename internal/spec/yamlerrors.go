package spec

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxSpecBytes bounds the size of a spec file. A spec is a page or two of
// YAML; one of megabytes is generated and gone wrong, and its parse tree
// alone would take hundreds of bytes per key. Long inputs belong in the
// files a spec names (traces, SQL scripts), which are read as streams.
const MaxSpecBytes = 1 << 20

// readSpecFile reads at most MaxSpecBytes+1 bytes of path, enough for Parse
// to say that the file is too large without reading all of it.
func readSpecFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxSpecBytes+1))
}

// byteSize prints n in the largest binary unit that keeps it above 1.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

var unknownAnchorRE = regexp.MustCompile(`unknown anchor '([^']*)' referenced`)

// locateYAMLError finds the line of a YAML error that go-yaml reports
// without one, and a fix that fits it; it returns fix "" for other errors.
func locateYAMLError(msg string, data []byte) (line int, fix string) {
	switch {
	case strings.Contains(msg, "UTF-8"):
		return lineAt(data, firstInvalidUTF8(data)), "the file must be UTF-8 text; save it as UTF-8 or remove the bytes that are not"
	case strings.Contains(msg, "control characters are not allowed"):
		i := bytes.IndexFunc(data, isControl)
		fix = "remove the control character"
		if i >= 0 {
			fix = fmt.Sprintf("remove the control character (byte 0x%02x) from this line", data[i])
		}
		return lineAt(data, i), fix
	case strings.Contains(msg, "unknown anchor"):
		name := ""
		if m := unknownAnchorRE.FindStringSubmatch(msg); m != nil {
			name = m[1]
		}
		return lineAt(data, aliasUse(data, name)), fmt.Sprintf("an alias *%s must come after its anchor &%s; define the anchor first, or write the value out", truncate(name, 40), truncate(name, 40))
	case strings.Contains(msg, "unknown escape character"):
		return lineAt(data, badEscape(data)), `in double quotes a backslash starts an escape such as \n; write \\ for a backslash, or use single quotes`
	}
	return 0, ""
}

// lineAt is the 1-based line of byte offset i, or 0 when i < 0.
func lineAt(data []byte, i int) int {
	if i < 0 || i > len(data) {
		return 0
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}

func firstInvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return -1
}

// isControl matches what YAML forbids in a stream: C0 controls other than
// tab, line feed and carriage return, and DEL.
func isControl(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f
}

// aliasUse is the offset of the first "*name" that is a whole alias.
func aliasUse(data []byte, name string) int {
	tok := []byte("*" + name)
	for from := 0; ; {
		i := bytes.Index(data[from:], tok)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(tok)
		if end == len(data) || bytes.IndexByte([]byte(" \t\r\n,]}"), data[end]) >= 0 {
			return i
		}
		from = i + 1
	}
}

// badEscape is the offset of the first backslash followed by a character
// YAML does not accept as an escape in a double-quoted string.
func badEscape(data []byte) int {
	const valid = "0abt\tnvfre \"/\\N_LPxuU\r\n"
	for i := 0; i+1 < len(data); i++ {
		if data[i] == '\\' {
			if !strings.ContainsRune(valid, rune(data[i+1])) {
				return i
			}
			i++
		}
	}
	return -1
}
