// Package staleness measures how stale a replicated store's reads are,
// from a consistency run's operation history (internal/history; seed-digest
// §5, seed 002 §III-B, after Bailis et al., "Probabilistically Bounded
// Staleness", VLDB 2012). Analyze is a pure function of the history;
// FromResults reads the histories of a results model.
//
// Definitions, per key (versions are integers, a higher version is newer;
// docs/consistency.md "Definitions"):
//
//   - Only acknowledged writes (outcome ok) of a version >= 1 start a
//     window; a write that failed did not happen, one of unknown outcome
//     (info) has no known completion, so neither starts one. Only reads
//     with outcome ok count; a failed or unknown read observed nothing.
//     A not-found read (-1) and a read of populate's version 0 are older
//     than every written version.
//   - t-visibility of the write of version u, completed at Tw, as seen at
//     read level L: the reads of L of the key invoked at or after Tw count
//     (a read invoked before Tw overlaps the write and may legitimately
//     return either version). A read among them is stale when it returns a
//     version < u. t-visibility = (invocation of the last stale read) - Tw,
//     0 when there is none: from Tw + t-visibility on, no read of L
//     returned an older version. The window is resolved when some read of
//     L was invoked after the last stale read (it returned >= u); when the
//     run ended first it is censored, and its figure is a lower bound. A
//     write with no read of L invoked after Tw is not observed at L.
//   - Fresh-read curve (PBS): for every counted read, the newest version
//     acknowledged before its invocation (version u, completed at Tw) and
//     t = invocation - Tw; the read is fresh when it returns >= u.
//     P(fresh | t) is estimated per bin of t.
//   - k-staleness of a read: how many acknowledged writes of the key,
//     completed before the read's invocation, wrote a version newer than
//     the one it returned (0 = fresh).
//
// A read joins the group (level of that newest acknowledged write, the
// read's level); a window the group (the write's level, L). Reads before
// any acknowledged write of their key count in neither the curve nor the
// k-staleness distribution.
//
// Clock uncertainty: every time in the history is on the load generator's
// clock, corrected by each host's measured offset, which is known only to
// within that host's uncertainty U. A window is the difference of a
// write's time and a read's, so it is uncertain by U(write) + U(read); a
// group's figures are reported ± the largest uncertainty of its windows.
package staleness

import (
	"math"
	"sort"

	"github.com/headroom-dev/headroom/internal/history"
)

// Clock is the uncertainty of the history's times, in ns, by the replica
// that served the operation (history.Op.Replica).
type Clock struct {
	// DefaultNS is the uncertainty of an operation whose replica has none
	// of its own (0: timed on the load generator itself).
	DefaultNS int64
	// ByReplica holds the uncertainty of each replica's (host's) times.
	ByReplica map[string]int64
}

// Of returns the uncertainty of an operation served by replica.
func (c Clock) Of(replica string) int64 {
	if u, ok := c.ByReplica[replica]; ok {
		return u
	}
	return c.DefaultNS
}

// Options are Analyze's inputs beside the history.
type Options struct {
	Clock Clock
	// Edges are the fresh-read curve's bin edges in ns since the write's
	// completion, ascending from 0; the last bin is open (DefaultEdges
	// when nil).
	Edges []int64
}

// DefaultEdges bin the fresh-read curve from 0.1 ms to 10 s, three bins a
// decade.
var DefaultEdges = []int64{0, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8, 2e8, 5e8, 1e9, 2e9, 5e9, 1e10}

// Group is a configuration of levels: the level the writes used and the
// level the reads used ("" where the target has one).
type Group struct {
	WriteLevel string `json:"write_level"`
	ReadLevel  string `json:"read_level"`
}

// Window is one acknowledged write's t-visibility at one read level.
type Window struct {
	Key       string `json:"key"`
	Version   int64  `json:"version"`
	WrittenNS int64  `json:"written_ns"` // Tw, the write's completion
	// VisibilityNS is the t-visibility; a lower bound when not Resolved.
	VisibilityNS int64 `json:"visibility_ns"`
	Resolved     bool  `json:"resolved"`
	// UncertaintyNS is the ± of VisibilityNS from the clocks.
	UncertaintyNS int64 `json:"uncertainty_ns"`
}

// Bin is one bin of the fresh-read curve: the reads invoked FromNS to
// ToNS (exclusive; math.MaxInt64 for the open last bin) after the newest
// acknowledged write of their key completed, and how many were fresh.
type Bin struct {
	FromNS int64 `json:"from_ns"`
	ToNS   int64 `json:"to_ns"`
	Reads  int   `json:"reads"`
	Fresh  int   `json:"fresh"`
}

// P returns the bin's fresh-read probability (NaN without reads).
func (b Bin) P() float64 {
	if b.Reads == 0 {
		return math.NaN()
	}
	return float64(b.Fresh) / float64(b.Reads)
}

// KCount is how many reads were K versions behind.
type KCount struct {
	K     int64 `json:"k"`
	Reads int   `json:"reads"`
}

// Level is one group's staleness.
type Level struct {
	Group
	// Windows are the group's writes in key, then version order.
	Windows []Window `json:"windows"`
	// Reads counts the reads of the curve and of KStale.
	Reads  int      `json:"reads"`
	Curve  []Bin    `json:"curve"`
	KStale []KCount `json:"k_stale"` // ascending K, only Ks that occurred
	// UncertaintyNS is the largest window uncertainty: the ± of every
	// t-visibility figure of the group.
	UncertaintyNS int64 `json:"uncertainty_ns"`
}

// Result is a history's staleness, one Level per group sorted by write
// level then read level.
type Result struct {
	Levels []Level `json:"levels"`
}

// Visibility returns the resolved windows' t-visibility, ascending.
func (l Level) Visibility() []int64 {
	var v []int64
	for _, w := range l.Windows {
		if w.Resolved {
			v = append(v, w.VisibilityNS)
		}
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	return v
}

// Censored counts the windows still open when the run ended.
func (l Level) Censored() int {
	n := 0
	for _, w := range l.Windows {
		if !w.Resolved {
			n++
		}
	}
	return n
}

// Quantile returns the q-quantile (0..1) of the resolved t-visibility, by
// the nearest-rank method; false when no window resolved.
func (l Level) Quantile(q float64) (int64, bool) {
	v := l.Visibility()
	if len(v) == 0 {
		return 0, false
	}
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[min(max(i, 0), len(v)-1)], true
}

// ShareWithin returns the share of all windows (censored ones included,
// as not within) whose t-visibility is at most d ns (NaN without
// windows): seed 002's "98% of writes under 40 ms inconsistency".
func (l Level) ShareWithin(d int64) float64 {
	if len(l.Windows) == 0 {
		return math.NaN()
	}
	n := 0
	for _, w := range l.Windows {
		if w.Resolved && w.VisibilityNS <= d {
			n++
		}
	}
	return float64(n) / float64(len(l.Windows))
}

// StaleShare returns the share of the group's reads that were stale (k >
// 0); NaN without reads.
func (l Level) StaleShare() float64 {
	if l.Reads == 0 {
		return math.NaN()
	}
	n := 0
	for _, k := range l.KStale {
		if k.K > 0 {
			n += k.Reads
		}
	}
	return float64(n) / float64(l.Reads)
}

// Analyze measures the staleness of ops (any order; one run's history).
func Analyze(ops []history.Op, opt Options) Result {
	edges := opt.Edges
	if len(edges) == 0 {
		edges = DefaultEdges
	}
	acc := map[Group]*Level{}
	level := func(g Group) *Level {
		l := acc[g]
		if l == nil {
			l = &Level{Group: g, Curve: newCurve(edges)}
			acc[g] = l
		}
		return l
	}
	kstale := map[Group]map[int64]int{}
	for _, k := range byKey(ops) {
		k.windows(opt.Clock, level)
		k.reads(func(g Group, t int64, fresh bool, behind int64) {
			l := level(g)
			l.Reads++
			b := &l.Curve[binOf(edges, t)]
			b.Reads++
			if fresh {
				b.Fresh++
			}
			if kstale[g] == nil {
				kstale[g] = map[int64]int{}
			}
			kstale[g][behind]++
		})
	}
	var res Result
	for g, l := range acc {
		for k, n := range kstale[g] {
			l.KStale = append(l.KStale, KCount{K: k, Reads: n})
		}
		sort.Slice(l.KStale, func(i, j int) bool { return l.KStale[i].K < l.KStale[j].K })
		sort.SliceStable(l.Windows, func(i, j int) bool {
			a, b := l.Windows[i], l.Windows[j]
			if a.Key != b.Key {
				return a.Key < b.Key
			}
			return a.Version < b.Version
		})
		for _, w := range l.Windows {
			l.UncertaintyNS = max(l.UncertaintyNS, w.UncertaintyNS)
		}
		res.Levels = append(res.Levels, *l)
	}
	sort.Slice(res.Levels, func(i, j int) bool {
		a, b := res.Levels[i].Group, res.Levels[j].Group
		if a.WriteLevel != b.WriteLevel {
			return a.WriteLevel < b.WriteLevel
		}
		return a.ReadLevel < b.ReadLevel
	})
	return res
}

func newCurve(edges []int64) []Bin {
	c := make([]Bin, len(edges))
	for i, e := range edges {
		c[i] = Bin{FromNS: e, ToNS: math.MaxInt64}
		if i+1 < len(edges) {
			c[i].ToNS = edges[i+1]
		}
	}
	return c
}

// binOf returns the bin of t (t >= 0 always: a read counts only after a
// write completed).
func binOf(edges []int64, t int64) int {
	return max(sort.Search(len(edges), func(i int) bool { return edges[i] > t })-1, 0)
}
