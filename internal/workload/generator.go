package workload

import (
	"sync/atomic"
)

// Generator produces the operations of one workload (seed-digest §1): the
// operation type by the Mix weights, the key by the request distribution,
// the field and the field values, and scan lengths.
//
// The same Config and seed give the same sequence of operations (on one
// architecture: float rounding in math may differ between them). A Generator
// is not safe for concurrent use, except Populate and Fork; give each
// goroutine its own Fork. Forks draw from independent random streams but share
// the key space: the counter that numbers inserted records (so run-phase
// inserts never collide and "latest" sees every client's inserts) and the
// position of the "sequential" distribution.
type Generator struct {
	*plan         // immutable after New, shared by all forks
	key    uint64 // selects this generator's random stream
	r      rng
	latest latestChooser // caches the zipfian normaliser for the current last key
}

// plan is what New derives from a Config and seed; forks share it.
type plan struct {
	cfg    Config
	popKey uint64 // selects the per-record streams of Populate
	shared *shared
	n      uint64 // RecordCount

	// Operation mix: types[i] is chosen when u < cum[i] (and is not chosen
	// by an earlier i); cum[ntypes-1] is above any u.
	types  [NumOpTypes]OpType
	cum    [NumOpTypes]float64
	ntypes int

	dist      distribution
	zeta      *zetaTable // nil unless a zipfian is used
	scrambled scrambledZipfian
	hot       hotspot

	scanZipf    bool
	scanLengths zipfian

	stmts *stmtPlan // statement workloads only
}

// shared is the key space state of a Generator and all its forks.
type shared struct {
	nextInsert atomic.Uint64 // key number of the next run-phase insert
	_          [56]byte      // keep the two counters on separate cache lines
	nextSeq    atomic.Uint64 // position of the sequential distribution
	acked      acknowledged  // which run-phase inserts have finished
}

type distribution uint8

const (
	distUniform distribution = iota
	distZipfian
	distLatest
	distHotspot
	distSequential
)

// New returns a Generator for c, whose operations are a function of c and
// seed only. It validates c. Set-up costs O(1) in RecordCount (see zetaTable).
func New(c Config, seed uint64) (*Generator, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	g := &Generator{
		plan: &plan{
			cfg:    c,
			popKey: mix64(seed ^ 0xd1b54a32d192ed03),
			shared: new(shared),
			n:      uint64(c.RecordCount),
		},
		key: seed,
		r:   newRNG(seed),
	}
	g.shared.nextInsert.Store(g.n)
	g.shared.acked.reset(g.n)
	if c.IsStatements() {
		g.stmts = newStmtPlan(c)
		return g, nil
	}

	total := 0.0
	for _, w := range c.Mix {
		total += w
	}
	acc := 0.0
	for t, w := range c.Mix {
		if w > 0 {
			acc += w
			g.types[g.ntypes] = OpType(t)
			g.cum[g.ntypes] = acc / total
			g.ntypes++
		}
	}
	g.cum[g.ntypes-1] = 2 // above every u in [0, 1), whatever the rounding

	if c.usesZipfian() {
		g.zeta = newZetaTable(c.ZipfianConstant)
	}
	switch c.RequestDistribution {
	case DistUniform:
		g.dist = distUniform
	case DistZipfian:
		g.dist = distZipfian
		g.scrambled = newScrambledZipfian(g.n, g.zeta)
	case DistLatest:
		g.dist = distLatest
		g.latest = newLatestChooser(g.n-1, g.zeta)
	case DistHotspot:
		g.dist = distHotspot
		g.hot = newHotspot(g.n, c.HotspotDataFraction, c.HotspotOpnFraction)
	case DistSequential:
		g.dist = distSequential
	}
	if c.Mix[Scan] > 0 && c.ScanLengthDistribution == DistZipfian {
		g.scanZipf = true
		m := uint64(c.MaxScanLength)
		g.scanLengths = newZipfian(m, g.zeta.theta, g.zeta.zeta(m))
	}
	return g, nil
}

// Config returns the configuration g was built from.
func (g *Generator) Config() Config { return g.cfg }

// Fork returns a Generator with the same Config and its own random stream,
// selected by stream and g's stream, sharing g's key space (see Generator).
// Forks of equal generators with equal stream numbers are equal; a fork's
// sequence does not depend on how far g has advanced. Each closed-loop client
// takes its own fork. Fork is safe to call concurrently with g's other methods.
func (g *Generator) Fork(stream uint64) *Generator {
	f := &Generator{plan: g.plan, key: mix64(g.key ^ mix64(stream^0x94d049bb133111eb))}
	f.r = newRNG(f.key)
	if f.dist == distLatest {
		f.latest = newLatestChooser(f.n-1, f.zeta)
	}
	return f
}

// NewOp returns an Op whose buffers fit g's records: a key buffer of capacity
// 32 and FieldCount values of FieldLength bytes each in one allocation. Next
// and Populate allocate nothing when given such an Op.
func (g *Generator) NewOp() *Op {
	op := &Op{Key: make([]byte, 0, 32), Field: -1}
	op.Values = make([][]byte, g.cfg.FieldCount)
	l := g.cfg.FieldLength
	buf := make([]byte, g.cfg.FieldCount*l)
	for i := range op.Values {
		op.Values[i] = buf[i*l : (i+1)*l : (i+1)*l]
	}
	return op
}

// Next fills op with the next operation: Type by the Mix weights; KeyNum by
// the request distribution, except for Insert, which takes the next key
// number of the shared insert counter; Key = KeyName(KeyNum); then
//
//	Read, Scan:             Field = -1 if ReadAllFields, else a uniform field
//	Scan:                   ScanLength uniform in [1, MaxScanLength], or 1 + zipfian rank
//	Update, ReadModifyWrite: WriteAllFields: Field = -1 and every value filled;
//	                        else Field uniform and only Values[Field] filled
//	Insert:                 Field = -1 and every value filled
//
// ScanLength is 0 for other types. Values that are not filled keep stale
// contents. Next allocates nothing when op came from NewOp.
func (g *Generator) Next(op *Op) {
	if g.stmts != nil {
		g.nextStatement(op)
		return
	}
	t := g.types[0]
	if g.ntypes > 1 {
		u := g.r.float()
		i := 0
		for u >= g.cum[i] {
			i++
		}
		t = g.types[i]
	}
	op.Type = t
	op.ScanLength = 0

	var k uint64
	if t == Insert {
		k = g.shared.nextInsert.Add(1) - 1
	} else {
		k = g.nextKey()
	}
	op.KeyNum = k
	op.Key = KeyName(op.Key[:0], k, g.cfg.OrderedInserts)

	switch t {
	case Read:
		op.Field = g.readField()
	case Scan:
		op.Field = g.readField()
		op.ScanLength = g.scanLength()
	case Update, ReadModifyWrite:
		if g.cfg.WriteAllFields {
			op.Field = -1
			g.fillAll(op, &g.r)
		} else {
			f := int(g.r.below(uint64(g.cfg.FieldCount)))
			op.Field = f
			g.fillField(op, f, &g.r)
		}
	case Insert:
		op.Field = -1
		g.fillAll(op, &g.r)
	}
}

// Populate fills op as the load-phase Insert of record i (0 <= i <
// RecordCount): KeyNum i, its key, Field -1 and every value. The values are a
// function of g's seed and i only (not of the fork or of earlier calls), so
// Populate is safe for concurrent use with distinct ops and a load can be
// split among goroutines in any way.
func (g *Generator) Populate(i int64, op *Op) {
	k := uint64(i)
	op.Type = Insert
	op.KeyNum = k
	op.Key = KeyName(op.Key[:0], k, g.cfg.OrderedInserts)
	op.Field = -1
	op.ScanLength = 0
	r := newRNG(g.popKey ^ mix64(k))
	g.fillAll(op, &r)
}

// Acknowledge records that the run-phase insert of key number k finished,
// whether it succeeded, failed or was never sent. Until every insert below
// a key has finished, "latest" does not pick that key (see acknowledged).
// Safe for concurrent use; the load engine calls it for every insert.
func (g *Generator) Acknowledge(k uint64) { g.shared.acked.ack(k) }

// AcknowledgeMissing is Acknowledge for an insert that did not store its
// record (dropped before it was sent, or failed): "latest" then also avoids
// reading k, which would fail with not_found through no fault of the target.
func (g *Generator) AcknowledgeMissing(k uint64) { g.shared.acked.hole(k) }

// Holes returns the inserts acknowledged as missing so far, for the next
// run on the same data (see ContinueHoles).
func (g *Generator) Holes() []uint64 { return g.shared.acked.holeList() }

// ContinueHoles makes "latest" skip records whose inserts stored nothing in
// an earlier run on the same data. Call it after ContinueInserts.
func (g *Generator) ContinueHoles(ks []uint64) { g.shared.acked.addHoles(ks) }

// NextInsert returns the key number the next run-phase insert will take
// (RecordCount plus the inserts issued so far by g and its forks).
func (g *Generator) NextInsert() uint64 { return g.shared.nextInsert.Load() }

// ContinueInserts makes the next insert take key number next, for a run that
// follows earlier runs on the same data: their inserted records exist, so
// new inserts must not reuse their keys, and "latest" must start from the
// newest of them. next below RecordCount is raised to RecordCount. Call it
// before the first Next.
func (g *Generator) ContinueInserts(next uint64) {
	next = max(next, g.n)
	g.shared.nextInsert.Store(next)
	g.shared.acked.reset(next)
	if g.dist == distLatest {
		g.latest = newLatestChooser(next-1, g.zeta)
	}
}

// nextKey draws a key number for a non-insert operation.
func (g *Generator) nextKey() uint64 {
	switch g.dist {
	case distZipfian:
		return g.scrambled.next(&g.r)
	case distLatest:
		last := g.shared.acked.limit.Load() - 1
		k := g.latest.next(&g.r, last)
		// Records whose insert stored nothing are never read: redraw a few
		// times, then step down to the nearest stored record (under heavy
		// drops the newest keys can all be holes). At most maxHoles keys
		// are holes, and loaded records never are, so the walk ends.
		for i := 0; i < 4 && g.shared.acked.isHole(k); i++ {
			k = g.latest.next(&g.r, last)
		}
		for k > 0 && g.shared.acked.isHole(k) {
			k--
		}
		return k
	case distHotspot:
		return g.hot.next(&g.r)
	case distSequential:
		return (g.shared.nextSeq.Add(1) - 1) % g.n
	default:
		return g.r.below(g.n)
	}
}

func (g *Generator) readField() int {
	if g.cfg.ReadAllFields {
		return -1
	}
	return int(g.r.below(uint64(g.cfg.FieldCount)))
}

func (g *Generator) scanLength() int {
	if g.scanZipf {
		return 1 + int(g.scanLengths.rank(g.r.float()))
	}
	return 1 + int(g.r.below(uint64(g.cfg.MaxScanLength)))
}

func (g *Generator) fillAll(op *Op, r *rng) {
	for f := range g.cfg.FieldCount {
		g.fillField(op, f, r)
	}
}

// fillField fills op.Values[f] with FieldLength random bytes, (re)allocating
// the buffers only if op did not come from NewOp.
func (g *Generator) fillField(op *Op, f int, r *rng) {
	if len(op.Values) < g.cfg.FieldCount {
		op.Values = append(op.Values, make([][]byte, g.cfg.FieldCount-len(op.Values))...)
	}
	v := op.Values[f]
	if cap(v) < g.cfg.FieldLength {
		v = make([]byte, g.cfg.FieldLength)
	}
	v = v[:g.cfg.FieldLength]
	op.Values[f] = v
	fillValue(v, r)
}
