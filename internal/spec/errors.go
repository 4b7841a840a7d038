package spec

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is one problem in a spec: where it is (file, line, field path) and
// what to do about it, in one sentence.
type Error struct {
	File string // as given to Parse or Load
	Line int    // 1-based; 0 when the problem has no line (a missing section)
	Path string // full field path, e.g. "load.rates[2]"; "" for the document
	Msg  string // the problem and one fix

	// omitted > 0 marks a placeholder that only counts problems found
	// after the list was full (see add); capped replaces it by a summary.
	omitted int
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

// The number of problems kept and printed are bounded so that a file with
// millions of mistakes (a generated spec gone wrong) gives a readable answer
// in bounded memory: each decoder or checker keeps its first maxKept and
// counts the rest, and Parse returns the first maxPrinted (in line order)
// followed by one line counting the others.
const (
	maxKept    = 200
	maxPrinted = 50
)

// Each printed error is at most about this long (in characters): the
// longest message Headroom writes, a list of fields with a treatment's
// name, is under 500.
const (
	maxMsgRunes  = 800
	maxPathRunes = 200
)

// clipMiddle shortens s to at most max characters by replacing its middle
// with " ... ", keeping the end, where a message says what to do.
func clipMiddle(s string, max int) string {
	if len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	head := max / 4
	tail := max - head - len(" ... ")
	return string(r[:head]) + " ... " + string(r[len(r)-tail:])
}

// add appends e to *es unless *es already holds maxKept problems; then it
// only counts e in a trailing placeholder.
func add(es *Errors, e *Error) {
	n := len(*es)
	switch {
	case n > 0 && (*es)[n-1].omitted > 0:
		(*es)[n-1].omitted++
	case n >= maxKept:
		*es = append(*es, &Error{File: e.File, Line: math.MaxInt, omitted: 1})
	default:
		*es = append(*es, e)
	}
}

// addAll adds each of more with add.
func addAll(es *Errors, more Errors) {
	for _, e := range more {
		add(es, e)
	}
}

// capped sorts es by line and, when there are more than maxPrinted problems
// (counting those only counted by add), keeps the first maxPrinted and adds
// one line saying how many more there are.
func (es Errors) capped(file string) Errors {
	kept, omitted := make(Errors, 0, len(es)), 0
	for _, e := range es {
		if e.omitted > 0 {
			omitted += e.omitted
			continue
		}
		kept = append(kept, e)
	}
	kept.sortByLine()
	for _, e := range kept {
		// Messages quote values and paths name keys; a spec can make them
		// as long as a page, and an alias can repeat one in every error.
		e.Path = clipMiddle(e.Path, maxPathRunes)
		e.Msg = clipMiddle(e.Msg, maxMsgRunes)
	}
	if len(kept)+omitted <= maxPrinted {
		return kept
	}
	more := len(kept) + omitted - maxPrinted
	return append(kept[:maxPrinted:maxPrinted], &Error{File: file,
		Msg: fmt.Sprintf("... and %d more problems (%d in all); fix the ones above and validate again", more, maxPrinted+more)})
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
