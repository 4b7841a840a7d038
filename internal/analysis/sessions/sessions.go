// Package sessions counts violations of the session guarantees in a
// consistency run's operation history (internal/history; seed-digest §5,
// seed 002 §III-B, after Terry et al.'s session guarantees and Bermbach
// and Tai's measurements). The counters are exact: every operation of the
// history is looked at (seed 002 reports monotonic reads violated in
// 0.00057% of reads, which sampling would miss). Analyze is a pure
// function of the history; FromResults reads a results model's.
//
// A session is one history.Op.Process: it runs one operation at a time,
// so its operations are ordered by invocation. Only reads and writes with
// outcome ok count: a failed write did not happen and one of unknown
// outcome was not acknowledged, so neither is the session's "own write";
// a failed or unknown read observed nothing. Versions compare as integers
// (a not-found read, -1, is older than populate's version 0). Definitions
// (docs/consistency.md "Definitions"):
//
//   - Monotonic reads: a read of key k by session s returning version v
//     violates them when an earlier read of k by s returned a version > v.
//     Counted once per such read, at the read's level.
//   - Read your writes: a read of k by s returning v violates it when s's
//     last acknowledged write of k, earlier in the session, wrote a
//     version > v. Counted once per such read, at the read's level. A read
//     can violate both.
//   - Monotonic writes: two consecutive acknowledged writes of k by s,
//     version a then version b (a acknowledged before b was invoked),
//     were applied in reverse order when an observer saw b and afterwards
//     a: a read returning a invoked after an earlier read returning b had
//     completed, both by the same observer. The observer is the replica
//     that served both reads when the target names replicas
//     (history.Op.Replica), else the reading session; with unnamed
//     replicas a reader that switched replicas cannot be told from a
//     reordering, so such a reversal is also a monotonic-read violation of
//     that reader. Counted once per write pair, at the level of write b.
//
// Rates are per million ok reads of the level (of the session).
package sessions

import (
	"fmt"
	"math"
	"sort"

	"github.com/headroom-dev/headroom/internal/history"
)

// Guarantees, as Violation.Kind names them.
const (
	MonotonicRead  = "monotonic-read"
	ReadYourWrites = "read-your-writes"
	MonotonicWrite = "monotonic-write"
)

// Counts are exact counters of one level or one session.
type Counts struct {
	Reads          int `json:"reads"`       // ok reads
	WritePairs     int `json:"write_pairs"` // consecutive acknowledged writes of a key by one session
	MonotonicRead  int `json:"monotonic_read"`
	ReadYourWrites int `json:"read_your_writes"`
	MonotonicWrite int `json:"monotonic_write"`
}

// PerMillion returns n per million of c's reads (NaN without reads).
func (c Counts) PerMillion(n int) float64 {
	if c.Reads == 0 {
		return math.NaN()
	}
	return float64(n) * 1e6 / float64(c.Reads)
}

func (c *Counts) add(o Counts) {
	c.Reads += o.Reads
	c.WritePairs += o.WritePairs
	c.MonotonicRead += o.MonotonicRead
	c.ReadYourWrites += o.ReadYourWrites
	c.MonotonicWrite += o.MonotonicWrite
}

// LevelCounts are one consistency level's counters.
type LevelCounts struct {
	Level string `json:"level"`
	Counts
}

// SessionCounts are one session's counters.
type SessionCounts struct {
	Process int `json:"process"`
	Counts
}

// Violation is one counted violation: the operation that showed it (the
// read, or for a monotonic write the later write) and what it broke.
type Violation struct {
	Kind   string     `json:"kind"`
	Op     history.Op `json:"op"`
	Detail string     `json:"detail"`
}

// Result is a history's session-guarantee counters.
type Result struct {
	Total     Counts          `json:"total"`
	Levels    []LevelCounts   `json:"levels"`   // sorted by level
	Sessions  []SessionCounts `json:"sessions"` // sorted by process
	Examples  []Violation     `json:"examples"` // the first few of each kind, in time order
	Truncated bool            `json:"truncated,omitempty"`
}

// examplesPerKind bounds Result.Examples.
const examplesPerKind = 5

// Analyze counts the violations in ops (any order; one run's history).
func Analyze(ops []history.Op) Result {
	byLevel := map[string]*Counts{}
	bySession := map[int]*Counts{}
	at := func(level string, process int) (*Counts, *Counts) {
		if byLevel[level] == nil {
			byLevel[level] = &Counts{}
		}
		if bySession[process] == nil {
			bySession[process] = &Counts{}
		}
		return byLevel[level], bySession[process]
	}
	var ex []Violation
	sessionOrder := sortedOps(ops)
	for _, s := range sessions(sessionOrder) {
		maxRead := map[string]int64{}
		lastWrite := map[string]int64{}
		for _, o := range s {
			if o.Outcome != history.OK {
				continue
			}
			if o.Kind == history.Write {
				lastWrite[o.Key] = o.Value
				continue
			}
			lc, sc := at(o.Level, o.Process)
			lc.Reads++
			sc.Reads++
			if m, ok := maxRead[o.Key]; ok && o.Value < m {
				lc.MonotonicRead++
				sc.MonotonicRead++
				ex = append(ex, Violation{MonotonicRead, o, fmt.Sprintf("read %s after the same session read %d", version(o.Value), m)})
			}
			if w, ok := lastWrite[o.Key]; ok && o.Value < w {
				lc.ReadYourWrites++
				sc.ReadYourWrites++
				ex = append(ex, Violation{ReadYourWrites, o, fmt.Sprintf("read %s after the same session's acknowledged write of %d", version(o.Value), w)})
			}
			if m, ok := maxRead[o.Key]; !ok || o.Value > m {
				maxRead[o.Key] = o.Value
			}
		}
	}
	for _, v := range monotonicWrites(sessionOrder, func(b history.Op) {
		lc, sc := at(b.Level, b.Process)
		lc.WritePairs++
		sc.WritePairs++
	}) {
		lc, sc := at(v.Op.Level, v.Op.Process)
		lc.MonotonicWrite++
		sc.MonotonicWrite++
		ex = append(ex, v)
	}
	var res Result
	for l, c := range byLevel {
		res.Levels = append(res.Levels, LevelCounts{l, *c})
		res.Total.add(*c)
	}
	sort.Slice(res.Levels, func(i, j int) bool { return res.Levels[i].Level < res.Levels[j].Level })
	for p, c := range bySession {
		res.Sessions = append(res.Sessions, SessionCounts{p, *c})
	}
	sort.Slice(res.Sessions, func(i, j int) bool { return res.Sessions[i].Process < res.Sessions[j].Process })
	sort.SliceStable(ex, func(i, j int) bool { return ex[i].Op.InvokeNS < ex[j].Op.InvokeNS })
	kept := map[string]int{}
	for _, v := range ex {
		if kept[v.Kind] < examplesPerKind {
			kept[v.Kind]++
			res.Examples = append(res.Examples, v)
		} else {
			res.Truncated = true
		}
	}
	return res
}

// sortedOps returns ops by process, then invocation (then recorded order).
func sortedOps(ops []history.Op) []history.Op {
	s := append([]history.Op(nil), ops...)
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].Process != s[j].Process {
			return s[i].Process < s[j].Process
		}
		return s[i].InvokeNS < s[j].InvokeNS
	})
	return s
}

// sessions splits ops sorted by sortedOps into sessions.
func sessions(ops []history.Op) [][]history.Op {
	var out [][]history.Op
	for i := 0; i < len(ops); {
		j := i
		for j < len(ops) && ops[j].Process == ops[i].Process {
			j++
		}
		out = append(out, ops[i:j])
		i = j
	}
	return out
}

// observed is when one observer saw a version of a key: the earliest
// completion of a read returning it and the latest invocation of one.
type observed struct{ firstDone, lastInvoke int64 }

// monotonicWrites returns one violation per write pair seen reversed;
// pair is called for every write pair (its later write).
func monotonicWrites(ops []history.Op, pair func(b history.Op)) []Violation {
	type seen struct {
		key, observer string
		version       int64
	}
	obs := map[seen]observed{}
	observers := map[string][]string{} // key -> observers, in order of first read
	known := map[[2]string]bool{}      // (key, observer) pairs in observers
	for _, o := range ops {
		if o.Kind != history.Read || o.Outcome != history.OK {
			continue
		}
		who := "replica " + o.Replica
		if o.Replica == "" {
			who = fmt.Sprintf("session %d", o.Process)
		}
		k := seen{o.Key, who, o.Value}
		cur, ok := obs[k]
		if !ok {
			cur = observed{firstDone: math.MaxInt64, lastInvoke: math.MinInt64}
			if kw := [2]string{o.Key, who}; !known[kw] {
				known[kw] = true
				observers[o.Key] = append(observers[o.Key], who)
			}
		}
		cur.firstDone = min(cur.firstDone, o.CompleteNS)
		cur.lastInvoke = max(cur.lastInvoke, o.InvokeNS)
		obs[k] = cur
	}
	var out []Violation
	for _, s := range sessions(ops) {
		last := map[string]history.Op{}
		for _, b := range s {
			if b.Kind != history.Write || b.Outcome != history.OK {
				continue
			}
			a, ok := last[b.Key]
			last[b.Key] = b
			if !ok {
				continue
			}
			pair(b)
			for _, who := range observers[b.Key] {
				sb, okb := obs[seen{b.Key, who, b.Value}]
				sa, oka := obs[seen{b.Key, who, a.Value}]
				if okb && oka && sa.lastInvoke >= sb.firstDone {
					out = append(out, Violation{MonotonicWrite, b, fmt.Sprintf("the session wrote %d then %d, but %s returned %d after it had returned %d", a.Value, b.Value, who, a.Value, b.Value)})
					break
				}
			}
		}
	}
	return out
}

func version(v int64) string {
	if v == history.NoValue {
		return "not found"
	}
	return fmt.Sprintf("version %d", v)
}
