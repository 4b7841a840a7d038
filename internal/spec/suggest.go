package spec

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// closest returns the candidate that got most likely misspells or
// abbreviates, else "". Names are compared in lower case without '_' and
// '-', so YCSB spellings ("recordcount") find their snake_case field.
func closest(got string, candidates []string) string {
	g := normName(got)
	if g == "" || utf8.RuneCountInString(g) > 64 {
		return ""
	}
	// A prefix is a likely abbreviation: "journal" for "journal_mode".
	if utf8.RuneCountInString(g) >= 3 {
		best := ""
		for _, c := range candidates {
			if n := normName(c); strings.HasPrefix(n, g) && (best == "" || len(n) < len(normName(best))) {
				best = c
			}
		}
		if best != "" {
			return best
		}
	}
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(g, normName(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > 1+utf8.RuneCountInString(g)/5 {
		return ""
	}
	return best
}

// nameSeparators are dropped when names are compared for suggestions; one
// Replacer serves every call (building one costs kilobytes).
var nameSeparators = strings.NewReplacer("_", "", "-", "", " ", "")

func normName(s string) string {
	return nameSeparators.Replace(strings.ToLower(s))
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and adjacent transpositions each cost 1, so
// "modle" is one edit from "model".
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rolling rows: two back (for transpositions), previous, current.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// orList renders names as "a, b or c" for messages.
func orList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ycsbHints answers YCSB property names that have no same-named field here.
var ycsbHints = map[string]string{
	"readproportion":            `YCSB's readproportion is written as operations: {read: 0.5, ...}`,
	"updateproportion":          `YCSB's updateproportion is written as operations: {update: 0.5, ...}`,
	"insertproportion":          `YCSB's insertproportion is written as operations: {insert: 0.05, ...}`,
	"scanproportion":            `YCSB's scanproportion is written as operations: {scan: 0.95, ...}`,
	"readmodifywriteproportion": `YCSB's readmodifywriteproportion is written as operations: {read_modify_write: 0.5, ...}`,
	"operationcount":            "runs last a time rather than a count of operations; set phases.measure instead",
	"threadcount":               "set the number of clients with load: {model: closed, clients: [...]}",
}

// unknownFieldMsg explains an unknown key of a struct and names one fix.
func unknownFieldMsg(t reflect.Type, key string, known []string) string {
	if t == reflect.TypeFor[Workload]() {
		if hint, ok := ycsbHints[normName(key)]; ok {
			return "unknown field; " + hint
		}
	}
	if s := closest(key, known); s != "" {
		return fmt.Sprintf("unknown field; did you mean %q?", s)
	}
	return "unknown field; remove it or use one of: " + strings.Join(known, ", ")
}
