package load

import (
	"math/bits"
	"slices"
	"sync"
	"time"
)

// A closed loop hides a stalled target: while every client waits for its
// answer none sends anything, so the stall costs each client one slow
// request instead of the many requests it would have sent at its pace
// (coordinated omission, seed-digest §1). The engine therefore records, per
// closed-loop client, its long silences (the time between two of its
// completions), and at the end of the run intersects them: a period in
// which every client was silent is a period in which no request completed.
// The engine only measures these quiet periods; judging which are stalls
// (a threshold from the run's pace) and correcting the percentiles is the
// analysis's job (internal/analysis/stall), so that it can be re-run on
// stored results.

// Quiet is one period of a closed-loop run in which no request completed
// (successfully or not), within the measured phase.
type Quiet struct {
	Start, End time.Duration // since Result.Start
	// Waiting counts the clients that had a request in flight at some
	// moment of the period (the others were thinking): the requests that
	// waited through it.
	Waiting int
}

// QuietWatch is what the closed loop's stall watch found over the measured
// phase. Periods shorter than Floor may be missing (each client logs only
// its silences longer than a multiple of its own pace, see clientWatch), so
// none shorter than Floor is listed.
type QuietWatch struct {
	Clients int           // clients watched
	Left    int           // clients whose logs were read (the others had not returned at the end)
	Floor   time.Duration // periods at least this long are all listed
	Periods []Quiet
}

const (
	// watchLogCap bounds one client's log of silences (24 B each). When it
	// fills, the client raises its floor and keeps only the longer ones.
	watchLogCap = 1024
	// watchFloorPaces: a client logs silences longer than this many times
	// its running pace (median latency + mean think time). The analysis
	// calls a stall a period of at least 10 of its paces, the mean interval
	// between requests (internal/analysis/stall), which is at least the
	// median for the right-skewed latencies of real targets; so the log is
	// complete for stalls with a margin for the estimate's coarseness (a
	// quarter octave, 19%) and for a pace that drifts during the run.
	watchFloorPaces = 4
	// watchRefresh: the running pace is re-estimated every this many
	// completions (a scan of the latency buckets; amortised, well under a
	// nanosecond per request).
	watchRefresh = 256
	// latency buckets: 4 per octave of nanoseconds.
	watchSubBits = 2
	watchBuckets = 65 << watchSubBits
)

// silence is one client's time between two of its completions: from the
// previous completion, through the start of its next request (later than
// from by the think time), to that request's completion.
type silence struct{ from, start, to int64 }

// clientWatch is one closed-loop client's stall watch. Only its own
// goroutine touches it until it leaves (stallSet.leave), so the hot path
// takes no lock and allocates nothing once the log has grown.
type clientWatch struct {
	started  bool
	prevEnd  int64 // last completion (ns since run start); the first start before one
	reqStart int64
	n        int64 // completions
	buckets  [watchBuckets]uint32
	thinkSum int64
	thinks   int64
	floor    int64 // log silences longer than this
	maxFloor int64 // the highest floor used: the log is complete above it
	log      []silence
}

// start notes the start of a request at now.
func (c *clientWatch) start(now int64) {
	if !c.started {
		c.started, c.prevEnd = true, now
	}
	c.reqStart = now
}

// done notes the completion of the request started last, at now.
func (c *clientWatch) done(now int64) {
	if !c.started {
		return
	}
	if lat := now - c.reqStart; lat > 0 {
		c.buckets[bucketOf(lat)]++
	}
	if gap := now - c.prevEnd; gap > c.floor {
		if len(c.log) == watchLogCap {
			c.compact()
		}
		if gap > c.floor {
			c.log = append(c.log, silence{from: c.prevEnd, start: c.reqStart, to: now})
		}
	}
	c.prevEnd = now
	c.n++
	if c.n%watchRefresh == 0 {
		c.refresh()
	}
}

// thought notes a think time between two requests.
func (c *clientWatch) thought(d time.Duration) {
	c.thinkSum += int64(d)
	c.thinks++
}

// refresh re-estimates the client's pace, a low estimate of its median
// latency (the lower edge of the median's bucket) plus its mean think time,
// and sets the floor of its log from it. The floor may fall as well as
// rise: the log is complete above the highest floor ever used.
func (c *clientWatch) refresh() {
	var seen uint64
	half := uint64(c.n+1) / 2
	var med int64
	for i, k := range c.buckets {
		seen += uint64(k)
		if seen >= half {
			med = bucketLow(i)
			break
		}
	}
	pace := med
	if c.thinks > 0 {
		pace += c.thinkSum / c.thinks
	}
	c.setFloor(max(c.floor/2, watchFloorPaces*pace)) // a full log's raised floor decays, not drops
}

func (c *clientWatch) setFloor(f int64) {
	c.floor = f
	c.maxFloor = max(c.maxFloor, f)
}

// compact makes room in a full log: it doubles the floor until at most
// half of the logged silences are longer, and keeps those.
func (c *clientWatch) compact() {
	f := max(2*c.floor, int64(time.Microsecond))
	for {
		n := 0
		for _, s := range c.log {
			if s.to-s.from > f {
				n++
			}
		}
		if n <= watchLogCap/2 {
			break
		}
		f *= 2
	}
	c.setFloor(f)
	c.log = slices.DeleteFunc(c.log, func(s silence) bool { return s.to-s.from <= f })
}

// bucketOf is x's latency bucket: its octave and the two bits below the
// leading one.
func bucketOf(x int64) int {
	o := bits.Len64(uint64(x))
	if o <= watchSubBits {
		return o << watchSubBits
	}
	sub := int(uint64(x)>>(o-1-watchSubBits)) & (1<<watchSubBits - 1)
	return o<<watchSubBits | sub
}

// bucketLow is the lowest value of bucket i.
func bucketLow(i int) int64 {
	o, sub := i>>watchSubBits, i&(1<<watchSubBits-1)
	if o <= watchSubBits {
		if o == 0 {
			return 0
		}
		return 1 << (o - 1)
	}
	return int64(1<<watchSubBits|sub) << (o - 1 - watchSubBits)
}

// stallSet collects a closed-loop run's client watches. Its zero value is
// ready to use.
type stallSet struct {
	mu     sync.Mutex
	joined int
	left   []*clientWatch
}

// join gives a client its watch (allocated here, before the client's
// first request, never on the hot path).
func (s *stallSet) join() *clientWatch {
	s.mu.Lock()
	s.joined++
	s.mu.Unlock()
	return &clientWatch{log: make([]silence, 0, 64)}
}

// leave hands a client's watch back when the client stops.
func (s *stallSet) leave(c *clientWatch) {
	s.mu.Lock()
	s.left = append(s.left, c)
	s.mu.Unlock()
}

// fill sets res.Quiet from the watches of the clients that have left: the
// periods of the measured phase in which every one of them was silent.
func (s *stallSet) fill(res *Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.joined == 0 {
		return
	}
	q := &QuietWatch{Clients: s.joined, Left: len(s.left)}
	res.Quiet = q
	if len(s.left) == 0 {
		return
	}
	var floor int64
	for _, c := range s.left {
		floor = max(floor, c.maxFloor)
	}
	q.Floor = time.Duration(floor)
	lo, hi := int64(res.MeasureStart), int64(res.MeasureEnd)
	for _, p := range quietPeriods(s.left, lo, hi) {
		if p.End-p.Start >= q.Floor && p.End > p.Start {
			q.Periods = append(q.Periods, p)
		}
	}
}

// quietPeriods intersects the clients' silences and clips the result to
// [lo, hi). A client that never completed anything (its log is empty and
// it was never started) does not constrain the result.
func quietPeriods(cs []*clientWatch, lo, hi int64) []Quiet {
	type span struct{ a, b int64 }
	cur := []span{{lo, hi}}
	var next []span
	for _, c := range cs {
		if !c.started {
			continue
		}
		// The client's silence since its last completion (a client that
		// left normally has none within the run; one stopped by an
		// interrupt may).
		tail := silence{from: c.prevEnd, start: c.prevEnd, to: hi}
		logs := c.log
		if c.prevEnd < hi {
			logs = append(logs[:len(logs):len(logs)], tail)
		}
		next = next[:0]
		i, j := 0, 0
		for i < len(cur) && j < len(logs) {
			a, b := max(cur[i].a, logs[j].from), min(cur[i].b, logs[j].to)
			if a < b {
				next = append(next, span{a, b})
			}
			if cur[i].b < logs[j].to {
				i++
			} else {
				j++
			}
		}
		cur, next = next, cur
		if len(cur) == 0 {
			return nil
		}
	}
	out := make([]Quiet, 0, len(cur))
	for _, p := range cur {
		q := Quiet{Start: time.Duration(p.a), End: time.Duration(p.b)}
		for _, c := range cs {
			if c.started && c.waited(p.a, p.b) {
				q.Waiting++
			}
		}
		out = append(out, q)
	}
	return out
}

// waited reports whether the client had a request in flight at some
// moment of (a, b): the silence that contains the period started its
// request before b.
func (c *clientWatch) waited(a, b int64) bool {
	i, _ := slices.BinarySearchFunc(c.log, a, func(s silence, t int64) int {
		if s.to <= t {
			return -1
		}
		return 1
	})
	if i < len(c.log) && c.log[i].from <= a && c.log[i].to >= b {
		return c.log[i].start < b
	}
	return false // in the silence after its last completion: the client had stopped
}
