package lab

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A lab volume's provisioned IOPS are one budget shared by reads and
// writes, counted in normalized operations of 256 KiB as seed 000 §4.1
// (seed-digest §4) models a provisioned-IOPS volume: an operation of d KiB
// counts ceil(d / 256). Its bandwidth (MiB/s) is one budget too. The
// kernel's block-I/O throttle cannot enforce either: both cgroup versions
// limit reads and writes separately, and count a bio as one operation
// whatever its size. So the lab splits each budget between the two
// directions and moves the split with the demand every budgetTick
// (iobudget), and charges size through the byte limit: a direction given n
// normalized operations per second may move n x 256 KiB per second, so
// 1 MiB operations run at n/4 per second, as the model says.
const (
	normalizedOpBytes = 256 << 10
	budgetTick        = 250 * time.Millisecond
	// idleShare is the least share of a budget the split gives a
	// direction, so that one alone can use 99% of the budget.
	idleShare = 0.01
	// reserveShare is the least share of a budget a direction's kernel
	// limit allows even when the split gives it less, so that an idle
	// direction's first requests are not queued for seconds behind a limit
	// of a few per second while the governor notices them (within one
	// tick, and it then splits evenly). The limits may then sum to more
	// than the budget, by at most this share and only while one direction
	// uses less than it.
	reserveShare = 0.1
	// busyAt is the share of its limit at which a direction is taken to
	// want more than it has (the throttle holds it there); it stays so
	// until its rate falls under idleAt of its limit, because a throttled
	// rate measured over one tick is noisy (the throttle dispatches in
	// bursts, and every rewrite of a limit restarts its time slice).
	busyAt = 0.85
	idleAt = 0.5
	// gainRecoverBelow: a busy volume whose counted rate is under this
	// share of its budget has its gain raised (volumeBudget.gain). A
	// direction alone gets 1 - idleShare of the budget, so a full volume
	// counts 0.99 of it and must stay above this.
	gainRecoverBelow = 0.98
)

// dirLimits are the kernel limits of one volume: reads, then writes; 0 is
// unlimited.
type dirLimits struct {
	Dev       string
	IOPS, BPS [2]uint64
}

// split divides budget between reads and writes by their demands want
// (+Inf: more than it has now): each gets what it wants when the two fit,
// plus half of what is left; otherwise the smaller demand is met up to half
// the budget and the other gets the rest (max-min fairness). An idle
// direction keeps idleShare of the budget.
func split(budget float64, want [2]float64) [2]float64 {
	floor := max(1, idleShare*budget)
	for i := range want {
		want[i] = max(want[i], floor)
	}
	if want[0]+want[1] <= budget {
		slack := budget - want[0] - want[1]
		return [2]float64{want[0] + slack/2, want[1] + slack/2}
	}
	small := 0
	if want[1] < want[0] {
		small = 1
	}
	var out [2]float64
	out[small] = min(want[small], budget/2)
	out[1-small] = budget - out[small]
	return out
}

// demand is what a direction wants next, from its rate over the last tick
// and the limit it had: more than it has while the throttle holds it near
// the limit (busy, with hysteresis), else its rate with a margin for
// growth.
func demand(rate, limit float64, busy *bool) float64 {
	switch {
	case limit > 0 && rate >= busyAt*limit:
		*busy = true
	case rate < idleAt*limit:
		*busy = false
	}
	if *busy {
		return math.Inf(1)
	}
	return 1.2 * rate
}

// volumeBudget is one host volume's budgets and their current split.
type volumeBudget struct {
	ops, bytes float64    // budgets per second: normalized ops, bytes; 0 = unlimited
	opsSplit   [2]float64 // normalized ops per second per direction
	bytesSplit [2]float64 // bytes per second per direction
	opsBusy    [2]bool    // each direction presses its ops limit
	bytesBusy  [2]bool    // ... its bytes limit
	rateOps    [2]float64 // smoothed normalized ops per second
	rateBytes  [2]float64 // smoothed bytes per second
	smoothed   bool       // the rates hold a first reading
	// gain scales the ops split into kernel limits. The kernel's counters,
	// which the monitor and the analyses read, count more operations than
	// its throttle charges (split requests, and writes it counts but does
	// not hold back, such as a checkpoint's flush): measured against its
	// counters, a split that sums to the budget lets through more. The
	// gain closes that gap by feedback: it shrinks while the volume uses
	// more than its budget and grows back while it uses less and wants
	// more.
	gain float64
	// stalled: the volume is stalled (stall_disk); the governor leaves
	// its limits alone until it is resumed.
	stalled bool
	last    ioCounters
	lastAt  time.Time
}

// ioCounters are a cgroup's cumulative operations and bytes on one device.
type ioCounters struct {
	ops, bytes [2]uint64
	ok         bool
}

func newVolumeBudget(iops, mibps float64) *volumeBudget {
	b := &volumeBudget{ops: iops, bytes: mibps * (1 << 20), gain: 1}
	if b.ops > 0 {
		b.opsSplit = split(b.ops, [2]float64{})
	}
	if b.bytes > 0 {
		b.bytesSplit = split(b.bytes, [2]float64{})
	}
	return b
}

// limits turns the split into the kernel's per-direction limits: the
// normalized ops as operations, and as bytes (n x 256 KiB) capped by the
// bandwidth split.
func (b *volumeBudget) limits(dev string) dirLimits {
	l := dirLimits{Dev: dev}
	ops, bytes := b.kernelOps(), b.kernelBytes()
	for d := 0; d < 2; d++ {
		bps := math.Inf(1)
		if b.ops > 0 {
			l.IOPS[d] = uint64(max(1, math.Round(ops[d])))
			bps = float64(l.IOPS[d]) * normalizedOpBytes
		}
		if b.bytes > 0 {
			bps = min(bps, bytes[d])
		}
		if !math.IsInf(bps, 1) {
			l.BPS[d] = uint64(max(1, math.Round(bps)))
		}
	}
	return l
}

// kernelOps and kernelBytes are the split with each direction raised to
// its reserve.
func (b *volumeBudget) kernelOps() [2]float64 {
	g := b.gain
	return reserved([2]float64{b.opsSplit[0] * g, b.opsSplit[1] * g}, b.ops*g)
}
func (b *volumeBudget) kernelBytes() [2]float64 { return reserved(b.bytesSplit, b.bytes) }

func reserved(split [2]float64, budget float64) [2]float64 {
	r := max(1, reserveShare*budget)
	return [2]float64{max(split[0], r), max(split[1], r)}
}

// observe moves the split toward the demand seen since the last reading
// and says whether the kernel limits should change.
func (b *volumeBudget) observe(c ioCounters, at time.Time) bool {
	prev, prevAt := b.last, b.lastAt
	b.last, b.lastAt = c, at
	dt := at.Sub(prevAt).Seconds()
	if !c.ok || !prev.ok || dt <= 0 {
		return false
	}
	// Rates smoothed over about a second (each tick halves the weight of
	// the past): a database's writes come in bursts, and a split that
	// followed each tick would flip back and forth, restarting the
	// throttle's slice (and its allowance) at every rewrite.
	for d := 0; d < 2; d++ {
		ops := float64(c.ops[d]-prev.ops[d]) / dt
		bytes := float64(c.bytes[d]-prev.bytes[d]) / dt
		ops = max(ops, bytes/normalizedOpBytes)
		if b.smoothed {
			ops, bytes = (b.rateOps[d]+ops)/2, (b.rateBytes[d]+bytes)/2
		}
		b.rateOps[d], b.rateBytes[d] = ops, bytes
	}
	b.smoothed = true
	nOps, nBytes := b.rateOps, b.rateBytes
	changed := false
	if b.ops > 0 {
		total := nOps[0] + nOps[1]
		g := b.gain
		// Proportional steps, bounded so that one burst (a checkpoint's
		// flush) cannot shut the volume, and a finished burst is
		// recovered from within a few ticks. The way up starts just under
		// the budget (gainRecoverBelow), not at the way down's mirror: a
		// small overshoot takes the gain down by 2-4%, and with a wide
		// dead band under the budget it stayed there, leaving a busy
		// volume 3-6% short of its IOPS for good.
		switch {
		case total > 1.02*b.ops:
			g *= max(0.7, b.ops/total)
		case total < gainRecoverBelow*b.ops && (b.opsBusy[0] || b.opsBusy[1]):
			g *= min(1.5, max(1.1, b.ops/max(total, 1)))
		}
		g = min(1, max(0.05, g))
		// Small changes are not written (rewriting the throttle restarts
		// its slice), except the way back to 1.
		if math.Abs(g-b.gain) > 0.05*b.gain || g == 1 && b.gain < 1 {
			b.gain, changed = g, true
		}
		lim := b.kernelOps()
		next := split(b.ops, [2]float64{demand(nOps[0], lim[0], &b.opsBusy[0]), demand(nOps[1], lim[1], &b.opsBusy[1])})
		if moved(b.opsSplit, next) {
			b.opsSplit, changed = next, true
		}
	}
	if b.bytes > 0 {
		lim := b.kernelBytes()
		next := split(b.bytes, [2]float64{demand(nBytes[0], lim[0], &b.bytesBusy[0]), demand(nBytes[1], lim[1], &b.bytesBusy[1])})
		if moved(b.bytesSplit, next) {
			b.bytesSplit, changed = next, true
		}
	}
	return changed
}

// moved reports a change of more than 10% in either direction: rewriting
// the throttle restarts its time slice, so it is not rewritten for noise.
func moved(a, b [2]float64) bool {
	for d := 0; d < 2; d++ {
		if math.Abs(a[d]-b[d]) > 0.1*max(a[d], b[d]) {
			return true
		}
	}
	return false
}

// governor keeps the lab's volume budgets split by demand while this
// process has the lab open (Up to Close). A lab left up by `headroom lab
// up` keeps the last split, which still sums to the budget.
type governor struct {
	mu      sync.Mutex
	budgets map[string]*volumeBudget // by host
	stop    chan struct{}
	done    chan struct{}
}

// setBudget sets host's budgets to its limits in force and writes the
// kernel limits: an even split for a new volume, the same proportions as
// before for a changed budget (set_volume), so that a direction that had
// most of the budget keeps most of the new one.
func (l *Lab) setBudget(h *HostState) error {
	b := newVolumeBudget(h.Now.IOPS, h.Now.MiBps)
	l.gov.mu.Lock()
	defer l.gov.mu.Unlock()
	if old := l.gov.budgets[h.Name]; old != nil {
		b.opsSplit = rescale(old.opsSplit, old.ops, b.ops)
		b.bytesSplit = rescale(old.bytesSplit, old.bytes, b.bytes)
		b.last, b.lastAt = old.last, old.lastAt
		b.opsBusy, b.bytesBusy = old.opsBusy, old.bytesBusy
		b.rateOps, b.rateBytes, b.smoothed, b.gain = old.rateOps, old.rateBytes, old.smoothed, old.gain
	} else {
		// The first reading now, so that the first tick already splits.
		b.last, b.lastAt = l.cg.ioCounters(h.Cgroup, h.Device), time.Now()
	}
	lim := b.limits(h.Device)
	if h.Now.DiskStalled {
		// A new budget (set_volume) during a stall takes effect on resume.
		b.stalled, lim = true, stallLimits(h.Device)
	}
	if err := l.cg.setIO(h.Cgroup, lim); err != nil {
		return err
	}
	if l.gov.budgets == nil {
		l.gov.budgets = map[string]*volumeBudget{}
	}
	l.gov.budgets[h.Name] = b
	return nil
}

// stallLimits are the kernel's smallest limits on dev: one operation and
// one byte per second each way (0 would lift the limit).
func stallLimits(dev string) dirLimits {
	return dirLimits{Dev: dev, IOPS: [2]uint64{1, 1}, BPS: [2]uint64{1, 1}}
}

// setStall writes host's volume limits for its stall state: the stall's,
// or on resume the budget's split (none for an unthrottled volume). On
// resume the governor's reading restarts, so that the stalled seconds do
// not count as a demand of nothing.
func (l *Lab) setStall(h *HostState) error {
	l.gov.mu.Lock()
	defer l.gov.mu.Unlock()
	b := l.gov.budgets[h.Name]
	if h.Now.DiskStalled {
		if b != nil {
			b.stalled = true
		}
		return l.cg.setIO(h.Cgroup, stallLimits(h.Device))
	}
	if b == nil {
		return l.cg.setIO(h.Cgroup, dirLimits{Dev: h.Device})
	}
	b.stalled = false
	b.last, b.lastAt = l.cg.ioCounters(h.Cgroup, h.Device), time.Now()
	return l.cg.setIO(h.Cgroup, b.limits(h.Device))
}

// rescale keeps a split's proportions under a new budget; an even split
// when there was none.
func rescale(split [2]float64, from, to float64) [2]float64 {
	if !(to > 0) {
		return [2]float64{}
	}
	if !(from > 0) || split[0]+split[1] <= 0 {
		return [2]float64{to / 2, to / 2}
	}
	f := to / (split[0] + split[1])
	return [2]float64{split[0] * f, split[1] * f}
}

// startGovernor starts the split's loop for the lab's volumes with a
// budget; it ends at Close or when the lab's cgroups are gone.
func (l *Lab) startGovernor() {
	l.governed = true
	if l.gov.stop != nil {
		select {
		case <-l.gov.done: // it ended with the last volume (hosts removed); a new one may start
			l.gov.stop = nil
		default:
			return
		}
	}
	l.mu.Lock()
	var hosts []HostState
	for _, h := range l.state.Hosts {
		if h.Device != "" && (h.Now.IOPS > 0 || h.Now.MiBps > 0) {
			hosts = append(hosts, h)
		}
	}
	l.mu.Unlock()
	if len(hosts) == 0 || l.gov.stop != nil {
		return
	}
	for i := range hosts {
		l.gov.mu.Lock()
		_, ok := l.gov.budgets[hosts[i].Name]
		l.gov.mu.Unlock()
		if !ok {
			_ = l.setBudget(&hosts[i])
		}
	}
	l.gov.stop, l.gov.done = make(chan struct{}), make(chan struct{})
	go l.govern(l.gov.stop, l.gov.done)
}

func (l *Lab) stopGovernor() {
	if l.gov.stop != nil {
		close(l.gov.stop)
		<-l.gov.done
		l.gov.stop = nil
	}
}

func (l *Lab) govern(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(budgetTick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			if !l.governOnce(now) {
				return
			}
		}
	}
}

// governOnce reads every budgeted volume's counters and rewrites the
// limits that moved; false when no volume's cgroup is left (the lab was
// taken down by another process).
func (l *Lab) governOnce(now time.Time) bool {
	st := l.State()
	alive := false
	for _, h := range st.Hosts {
		l.gov.mu.Lock()
		b := l.gov.budgets[h.Name]
		l.gov.mu.Unlock()
		if b == nil || h.Device == "" {
			continue
		}
		c := l.cg.ioCounters(h.Cgroup, h.Device)
		if !c.ok {
			continue
		}
		alive = true
		// The limits are written under the lock, so that a stall applied
		// meanwhile is not overwritten by the split.
		l.gov.mu.Lock()
		if !b.stalled && b.observe(c, now) {
			_ = l.cg.setIO(h.Cgroup, b.limits(h.Device))
		}
		l.gov.mu.Unlock()
	}
	return alive
}

// ioCounters reads cgroup rel's cumulative operations and bytes on dev
// (v1 blkio.throttle.io_serviced and io_service_bytes; v2 io.stat).
func (c *cgroups) ioCounters(rel, dev string) ioCounters {
	var out ioCounters
	if c.v2 {
		b, err := os.ReadFile(filepath.Join(c.dir("", rel), "io.stat"))
		if err != nil {
			return out
		}
		out.ok = true // a device without I/O yet has no line
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 || f[0] != dev {
				continue
			}
			for _, kv := range f[1:] {
				k, v, _ := strings.Cut(kv, "=")
				n, _ := strconv.ParseUint(v, 10, 64)
				switch k {
				case "rios":
					out.ops[0] = n
				case "wios":
					out.ops[1] = n
				case "rbytes":
					out.bytes[0] = n
				case "wbytes":
					out.bytes[1] = n
				}
			}
		}
		return out
	}
	d := c.dir("blkio", rel)
	ops, err1 := os.ReadFile(filepath.Join(d, "blkio.throttle.io_serviced"))
	bytes, err2 := os.ReadFile(filepath.Join(d, "blkio.throttle.io_service_bytes"))
	if err1 != nil || err2 != nil {
		return out
	}
	out.ok = true
	out.ops = blkioV1(ops, dev)
	out.bytes = blkioV1(bytes, dev)
	return out
}

// blkioV1 reads the Read and Write lines of dev in a v1 blkio file
// ("MAJ:MIN Read N").
func blkioV1(b []byte, dev string) [2]uint64 {
	var out [2]uint64
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != dev {
			continue
		}
		n, _ := strconv.ParseUint(f[2], 10, 64)
		switch f[1] {
		case "Read":
			out[0] = n
		case "Write":
			out[1] = n
		}
	}
	return out
}
