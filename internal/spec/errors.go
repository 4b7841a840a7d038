package spec

import (
	"sort"
	"strconv"
	"strings"
)

// Error is one problem in a spec: where it is (file, line, field path) and
// what to do about it, in one sentence.
type Error struct {
	File string // as given to Parse or Load
	Line int    // 1-based; 0 when the problem has no line (a missing section)
	Path string // full field path, e.g. "load.rates[2]"; "" for the document
	Msg  string // the problem and one fix
}

// Error formats the problem as "file:line: path: message".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		if e.File == "" {
			b.WriteString("line ")
		} else {
			b.WriteByte(':')
		}
		b.WriteString(strconv.Itoa(e.Line))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one spec, so that a user can fix them all
// in one go. It prints one problem per line.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// sortByLine orders errors as they appear in the file; errors without a
// line (missing sections) come first. The sort is stable so that several
// errors on one line keep the order they were found in.
func (es Errors) sortByLine() {
	sort.SliceStable(es, func(i, j int) bool { return es[i].Line < es[j].Line })
}

// under reports whether path is p itself or a field or element inside p.
func under(path, p string) bool {
	if p == "" || path == p {
		return true
	}
	return strings.HasPrefix(path, p) && (path[len(p)] == '.' || path[len(p)] == '[')
}

// oneLine keeps a message on a single line whatever text it quotes from
// elsewhere (a target's Validate error, for example).
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
