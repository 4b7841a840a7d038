package spec

import (
	"fmt"
	"time"
)

// Consistency is workload.consistency: the consistency workload of seed 002
// §III-B (seed-digest §5). Writers write versions 1, 2, 3... of a sample of
// keys of their own, one key per tick, round robin; readers read the same
// keys, each reader on one read path or consistency level (the levels
// split over the readers in turn), one key per tick, round robin. Every
// operation goes into the run's history (internal/history), from which
// the staleness and session-guarantee analyses are computed. Every field
// is optional; zero values take the defaults below (seed 002's setup).
type Consistency struct {
	Writers       int      `yaml:"writers"`        // default 1
	WriteInterval Duration `yaml:"write_interval"` // default 10s, per writer
	Readers       int      `yaml:"readers"`        // default 12
	ReadInterval  Duration `yaml:"read_interval"`  // default 1ms, per reader
	Keys          int      `yaml:"keys"`           // keys written and read; default 10
	// ReadLevels are the read paths (PostgreSQL and Redis: primary,
	// replica1, ...) or consistency levels (Cassandra: ONE, QUORUM, ALL)
	// the readers split over; default every one the target offers.
	ReadLevels []string `yaml:"read_levels"`
	// With is "beside" (default: the YCSB mix runs as well, and the run's
	// intervals are its) or "only" (no YCSB mix: the intervals record the
	// consistency workload's reads and writes).
	With string `yaml:"with"`
}

// Defaults of workload.consistency (seed 002 §III-B: 1 writer every 10 s,
// 12 readers every 1 ms).
const (
	DefaultConsistencyWriters       = 1
	DefaultConsistencyWriteInterval = 10 * time.Second
	DefaultConsistencyReaders       = 12
	DefaultConsistencyReadInterval  = time.Millisecond
	DefaultConsistencyKeys          = 10
	ConsistencyBeside               = "beside"
	ConsistencyOnly                 = "only"
)

// Bounds of workload.consistency: every session holds connections of its
// own, and every operation is one history record.
const (
	maxConsistencyWriters  = 100
	maxConsistencyReaders  = 1000
	maxConsistencyKeys     = 100_000
	minConsistencyInterval = 100 * time.Microsecond
	maxConsistencyReadRate = 200_000 // reads/s over all readers
)

// Filled returns c with its defaults in place of zero values.
func (c Consistency) Filled() Consistency {
	if c.Writers == 0 {
		c.Writers = DefaultConsistencyWriters
	}
	if c.WriteInterval.Duration == 0 {
		c.WriteInterval.Duration = DefaultConsistencyWriteInterval
	}
	if c.Readers == 0 {
		c.Readers = DefaultConsistencyReaders
	}
	if c.ReadInterval.Duration == 0 {
		c.ReadInterval.Duration = DefaultConsistencyReadInterval
	}
	if c.Keys == 0 {
		c.Keys = DefaultConsistencyKeys
	}
	if c.With == "" {
		c.With = ConsistencyBeside
	}
	return c
}

// ConsistencyOnly reports whether the consistency workload replaces the
// YCSB mix.
func (w *Workload) ConsistencyOnly() bool {
	return w.Consistency != nil && w.Consistency.With == ConsistencyOnly
}

// consistency checks workload.consistency.
func (c *checker) consistency(w *Workload) {
	cs := w.Consistency
	if cs == nil {
		return
	}
	const p = "workload.consistency"
	c.countIn(p+".writers", cs.Writers, maxConsistencyWriters)
	c.countIn(p+".readers", cs.Readers, maxConsistencyReaders)
	c.countIn(p+".keys", cs.Keys, maxConsistencyKeys)
	c.consistencyInterval(p+".write_interval", cs.WriteInterval)
	c.consistencyInterval(p+".read_interval", cs.ReadInterval)
	f := cs.Filled()
	if f.Keys < f.Writers && c.has(p+".keys") {
		c.fail(p+".keys", "%d keys cannot be shared by %d writers (each writes keys of its own); give at least as many keys as writers", f.Keys, f.Writers)
	}
	if f.ReadInterval.Duration >= minConsistencyInterval && f.Readers >= 1 && f.Readers <= maxConsistencyReaders {
		if rate := float64(f.Readers) / f.ReadInterval.Seconds(); rate > maxConsistencyReadRate {
			c.fail(p+".readers", "%d readers every %s read %.0f times a second, more than the %d allowed; use fewer readers or a longer read_interval", f.Readers, shortDuration(f.ReadInterval.Duration), rate, maxConsistencyReadRate)
		}
	}
	seen := map[string]int{}
	for i, l := range cs.ReadLevels {
		at := fmt.Sprintf("%s.read_levels[%d]", p, i)
		if l == "" {
			c.fail(at, "is empty; name a read path (primary, replica1, ...) or a consistency level (ONE, QUORUM, ALL)")
			continue
		}
		if j, dup := seen[l]; dup {
			c.fail(at, "%q is already read_levels[%d]; name each level once", truncate(l, 40), j)
		}
		seen[l] = i
	}
	if cs.With != "" {
		c.oneOf(p+".with", cs.With, ConsistencyBeside, ConsistencyOnly)
	}
}

// countIn checks a count that, when written, is 1 to limit.
func (c *checker) countIn(path string, n, limit int) {
	switch {
	case !c.has(path) && n == 0:
	case n < 1:
		c.fail(path, "must be 1 or more, got %d", n)
	case n > limit:
		c.fail(path, "%d is more than the %d allowed; use fewer", n, limit)
	}
}

// consistencyInterval checks a session's pacing interval.
func (c *checker) consistencyInterval(path string, d Duration) {
	switch {
	case !c.has(path) && d.Duration == 0:
	case d.Duration < minConsistencyInterval:
		c.fail(path, "%v is shorter than the %s a session can keep to; use %s or more", d.Duration, shortDuration(minConsistencyInterval), shortDuration(minConsistencyInterval))
	case d.Duration > maxPhase:
		c.fail(path, "%s is longer than the %s allowed; use %s or less", shortDuration(d.Duration), shortDuration(maxPhase), shortDuration(maxPhase))
	}
}
