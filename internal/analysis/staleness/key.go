package staleness

import (
	"sort"

	"github.com/headroom-dev/headroom/internal/history"
)

// keyHistory is what the analysis uses of one key's history: its
// acknowledged writes of a version >= 1 by completion, and its ok reads
// by invocation, per read level.
type keyHistory struct {
	key     string
	writes  []history.Op
	byLevel map[string]*levelReads
	levels  []string // sorted
}

// levelReads are one read level's reads of a key with a min-tree over the
// versions they returned, to find the last stale read after a write in
// O(log n).
type levelReads struct {
	ops  []history.Op
	tree []int64 // tree[1] = min of all; children of i are 2i, 2i+1
	size int
}

func byKey(ops []history.Op) []*keyHistory {
	m := map[string]*keyHistory{}
	for _, o := range ops {
		if o.Outcome != history.OK {
			continue
		}
		k := m[o.Key]
		if k == nil {
			k = &keyHistory{key: o.Key, byLevel: map[string]*levelReads{}}
			m[o.Key] = k
		}
		switch {
		case o.Kind == history.Write && o.Value >= 1:
			k.writes = append(k.writes, o)
		case o.Kind == history.Read:
			lr := k.byLevel[o.Level]
			if lr == nil {
				lr = &levelReads{}
				k.byLevel[o.Level] = lr
				k.levels = append(k.levels, o.Level)
			}
			lr.ops = append(lr.ops, o)
		}
	}
	out := make([]*keyHistory, 0, len(m))
	for _, k := range m {
		sort.SliceStable(k.writes, func(i, j int) bool {
			a, b := k.writes[i], k.writes[j]
			if a.CompleteNS != b.CompleteNS {
				return a.CompleteNS < b.CompleteNS
			}
			return a.Value < b.Value
		})
		sort.Strings(k.levels)
		for _, lr := range k.byLevel {
			sort.SliceStable(lr.ops, func(i, j int) bool { return lr.ops[i].InvokeNS < lr.ops[j].InvokeNS })
			lr.build()
		}
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// windows adds the key's windows to their groups.
func (k *keyHistory) windows(clock Clock, level func(Group) *Level) {
	for _, w := range k.writes {
		for _, name := range k.levels {
			lr := k.byLevel[name]
			s := sort.Search(len(lr.ops), func(i int) bool { return lr.ops[i].InvokeNS >= w.CompleteNS })
			if s == len(lr.ops) {
				continue // no read of this level after the write: not observed
			}
			win := Window{Key: k.key, Version: w.Value, WrittenNS: w.CompleteNS, Resolved: true}
			det := lr.ops[s] // the read that decides the window
			if j := lr.lastBelow(1, 0, lr.size-1, s, w.Value); j >= 0 {
				det = lr.ops[j]
				win.VisibilityNS = det.InvokeNS - w.CompleteNS
				win.Resolved = j < len(lr.ops)-1
			}
			win.UncertaintyNS = clock.Of(w.Replica) + clock.Of(det.Replica)
			l := level(Group{WriteLevel: w.Level, ReadLevel: name})
			l.Windows = append(l.Windows, win)
		}
	}
}

// reads calls f for every read invoked after an acknowledged write of the
// key: its group, the time since the newest acknowledged write completed,
// whether it returned that version or a newer one, and how many
// acknowledged versions newer than its value there were.
func (k *keyHistory) reads(f func(g Group, t int64, fresh bool, behind int64)) {
	var all []history.Op
	for _, name := range k.levels {
		all = append(all, k.byLevel[name].ops...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].InvokeNS < all[j].InvokeNS })
	var done []int64 // versions acknowledged so far, ascending
	var newest history.Op
	next := 0
	for _, r := range all {
		for ; next < len(k.writes) && k.writes[next].CompleteNS <= r.InvokeNS; next++ {
			w := k.writes[next]
			i := sort.Search(len(done), func(i int) bool { return done[i] >= w.Value })
			done = append(done, 0)
			copy(done[i+1:], done[i:])
			done[i] = w.Value
			if len(done) == 1 || w.Value >= newest.Value {
				newest = w
			}
		}
		if len(done) == 0 {
			continue
		}
		newer := len(done) - sort.Search(len(done), func(i int) bool { return done[i] > r.Value })
		f(Group{WriteLevel: newest.Level, ReadLevel: r.Level}, r.InvokeNS-newest.CompleteNS, r.Value >= newest.Value, int64(newer))
	}
}

func (lr *levelReads) build() {
	lr.size = max(len(lr.ops), 1)
	lr.tree = make([]int64, 4*lr.size)
	var fill func(node, lo, hi int)
	fill = func(node, lo, hi int) {
		if lo == hi {
			if lo < len(lr.ops) {
				lr.tree[node] = lr.ops[lo].Value
			}
			return
		}
		mid := (lo + hi) / 2
		fill(2*node, lo, mid)
		fill(2*node+1, mid+1, hi)
		lr.tree[node] = min(lr.tree[2*node], lr.tree[2*node+1])
	}
	fill(1, 0, lr.size-1)
}

// lastBelow returns the last index >= s in [lo, hi] (the span of node)
// whose read returned a version < u, or -1.
func (lr *levelReads) lastBelow(node, lo, hi, s int, u int64) int {
	if hi < s || lr.tree[node] >= u {
		return -1
	}
	if lo == hi {
		return lo
	}
	mid := (lo + hi) / 2
	if j := lr.lastBelow(2*node+1, mid+1, hi, s, u); j >= 0 {
		return j
	}
	return lr.lastBelow(2*node, lo, mid, s, u)
}
