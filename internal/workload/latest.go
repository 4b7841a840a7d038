package workload

// latestChooser is YCSB's "latest" distribution (seed-digest §1): recency-ranked
// zipfian over every key inserted so far,
//
//	key = last - rank,   rank ~ zipfian over [0, last],
//
// where last is the most recently inserted key number (RecordCount-1 before
// any run-phase insert). The most recent record is the most popular, the one
// before it next, and so on. As inserts raise last, the zipfian is
// re-normalised in O(1) with zetaTable.
//
// last is read from the insert counter shared by all forks when the key is
// drawn, so it may name a record whose insert another client has issued but
// not yet completed; YCSB waits for acknowledged inserts, this does not.
type latestChooser struct {
	z zipfian
	t *zetaTable
}

func newLatestChooser(last uint64, t *zetaTable) latestChooser {
	return latestChooser{z: newZipfian(last+1, t.theta, t.zeta(last+1)), t: t}
}

func (l *latestChooser) next(r *rng, last uint64) uint64 {
	if last+1 != l.z.items {
		l.z.resize(last+1, l.t.zeta(last+1))
	}
	return last - l.z.rank(r.float())
}
