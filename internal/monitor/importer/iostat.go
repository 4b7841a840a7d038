package importer

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// Iostat input: the JSON that sysstat's iostat writes with -o JSON,
// recorded as
//
//	S_TIME_FORMAT=ISO iostat -x -t -o JSON <interval> <count>
//
// i.e. {"sysstat": {"hosts": [{"nodename": ..., "statistics": [{
// "timestamp": ..., "avg-cpu": {...}, "disk": [{"disk_device": "vda",
// "r/s": ..., ...}]}]}]}}.
//
// Each report's timestamp is taken when iostat prints it, i.e. at the end
// of the interval it covers, so a sample's Start is the timestamp minus
// the interval. The interval is the median spacing of the timestamps.
// Timestamps are ISO 8601 with an offset (S_TIME_FORMAT=ISO) or, without
// it, the locale's date and time ("11/23/26 10:22:11" in the C locale,
// month first), read in Options.Location. Output without -t has no
// timestamps; Options.Time (end of the first report) and
// Options.Interval then place it.
//
// iostat's first report covers the time since boot and is dropped, unless
// Options.IostatNoSinceBoot says iostat ran with -y.
//
// Per disk ("disk:<disk_device>"): read_ops_per_s (r/s),
// write_ops_per_s (w/s), ops_per_s (r/s + w/s + d/s), read_bytes_per_s
// and write_bytes_per_s (rkB/s and wkB/s × 1024), await_ms (r_await and
// w_await weighted by r/s and w/s; omitted when no read or write
// completed), queue_length (aqu-sz) and util_pct (util or %util). For
// the host ("cpu") from avg-cpu: user_pct (user + nice), system_pct,
// iowait_pct, steal_pct, idle_pct and util_pct (100 − idle − iowait).

type iostatStat struct {
	Timestamp *string            `json:"timestamp"`
	AvgCPU    map[string]float64 `json:"avg-cpu"`
	Disk      []iostatDiskJSON   `json:"disk"`
}

const iostatWant = `iostat -x -o JSON output (a "sysstat" object)`

// iostatHostFacts is what the first pass learns of one host and the
// second needs before its first sample.
type iostatHostFacts struct {
	nodename string        // may follow the reports in the file
	layout   string        // of local-time timestamps; "" for ISO
	period   time.Duration // the median spacing of the reports
	withTS   bool          // false: Options.Time and Interval place the reports
}

// iostatReader streams "sysstat.hosts[].statistics[]", one report at a
// time.
type iostatReader struct {
	hosts []*iostatHostFacts
}

func (ir *iostatReader) read(p *pass) error {
	w, err := newJSONWalk(p, iostatWant)
	if err != nil {
		return err
	}
	found, hosts := false, 0
	err = w.object("", iostatWant, func(key string) error {
		if key != "sysstat" {
			return w.skip(key)
		}
		found = true
		return w.object("sysstat", `the "sysstat" object of iostat JSON output`, func(key string) error {
			if key != "hosts" {
				return w.skip("sysstat." + key)
			}
			return w.array("sysstat.hosts", "the list of hosts", func(int) error {
				hosts++
				return ir.host(p, w, hosts-1)
			})
		})
	})
	if err != nil {
		return err
	}
	if err := w.end(); err != nil {
		return err
	}
	if !found {
		return w.missing("sysstat")
	}
	if hosts == 0 {
		return p.fail(0, "sysstat.hosts", "expected at least one host in iostat JSON output, got none")
	}
	return nil
}

// host reads one element of sysstat.hosts: in the first pass it checks
// every report and learns the host's facts; in the second it emits.
func (ir *iostatReader) host(p *pass, w *jsonWalk, hi int) error {
	path := fmt.Sprintf("sysstat.hosts[%d]", hi)
	var (
		facts *iostatHostFacts
		scan  *iostatScan
		emit  *iostatEmit
	)
	if p.emit {
		facts = ir.hosts[hi]
		emit = &iostatEmit{sm: sampler{p: p, host: p.opt.host(facts.nodename), source: monitor.SourceIostat}, facts: facts}
	} else {
		facts = &iostatHostFacts{}
		ir.hosts = append(ir.hosts, facts)
		scan = newIostatScan()
	}
	n := 0
	err := w.object(path, "a host object", func(key string) error {
		switch key {
		case "nodename":
			var s string
			if err := w.decode(path+".nodename", &s); err != nil {
				return err
			}
			facts.nodename = s
			return nil
		case "statistics":
			return w.array(path+".statistics", "the list of iostat reports", func(int) error {
				j := n
				n++
				rp := fmt.Sprintf("%s.statistics[%d]", path, j)
				off := w.offset()
				var st iostatStat
				if err := w.decode(rp, &st); err != nil {
					return err
				}
				var err error
				if p.emit {
					err = emit.report(p, rp, j, &st)
				} else {
					err = scan.report(p, rp, j, &st)
				}
				if e, ok := err.(*Error); ok && e.Line == 0 {
					e.Line = p.lineOfValue(off)
				}
				return err
			})
		}
		return w.skip(path + "." + key)
	})
	if err != nil {
		return err
	}
	if p.emit {
		return emit.flush(p)
	}
	return scan.finish(p, path, n, facts)
}

// firstReport is the index of the first report that covers a normal
// interval: iostat's first report covers the time since boot, unless it
// ran with -y.
func (o Options) firstReport() int {
	if o.IostatNoSinceBoot {
		return 0
	}
	return 1
}

// iostatScan follows the timestamps of one host in the first pass.
// A locale's "01/02/06" is ambiguous per timestamp (month or day first),
// but only one reading keeps a file's reports in order, so every layout
// is followed until the end and the first that never went backwards is
// used for the whole host.
type iostatScan struct {
	cands        []*layoutCand
	local        int // timestamps in a locale's format (not ISO)
	withTS       int
	firstWithout int
	withoutTS    int
}

type layoutCand struct {
	layout   string
	ok       bool
	has      bool
	prev     time.Time
	prevText string
	gaps     gapHist
	diedAt   int    // report index where the layout stopped fitting
	diedPath string // and the error to give if no layout fits
	diedMsg  string
}

func newIostatScan() *iostatScan {
	sc := &iostatScan{firstWithout: -1}
	for _, l := range iostatTimeLayouts {
		sc.cands = append(sc.cands, &layoutCand{layout: l, ok: true, gaps: gapHist{}})
	}
	return sc
}

func (sc *iostatScan) report(p *pass, rp string, j int, st *iostatStat) error {
	if st.Timestamp == nil {
		sc.withoutTS++
		if sc.firstWithout < 0 {
			sc.firstWithout = j
		}
	} else if err := sc.timestamp(p, rp+".timestamp", j, *st.Timestamp); err != nil {
		return err
	}
	// Check the values now, so that the emitting pass cannot fail.
	sm := sampler{p: p, host: "check", source: monitor.SourceIostat}
	if err := iostatCPU(&sm, p, rp+".avg-cpu", st.AvgCPU, time.Time{}, time.Second); err != nil {
		return err
	}
	for di, d := range st.Disk {
		if err := iostatDisk(&sm, p, fmt.Sprintf("%s.disk[%d]", rp, di), &d, time.Time{}, time.Second); err != nil {
			return err
		}
	}
	return nil
}

func (sc *iostatScan) timestamp(p *pass, path string, j int, s string) error {
	sc.withTS++
	loc := p.opt.location()
	t, iso := parseISOTime(s)
	if iso {
		if msg := timeRangeMsg(t, s); msg != "" {
			return p.fail(0, path, "%s", msg)
		}
	} else {
		if _, err := parseIostatTime(s, "", loc); err != nil {
			return p.fail(0, path, `expected a time like "2026-11-23T10:22:13+0000" (S_TIME_FORMAT=ISO) or "11/23/26 10:22:11", got %q`, truncate(s, 60))
		}
		sc.local++
	}
	for _, c := range sc.cands {
		if !c.ok {
			continue
		}
		ct := t
		if !iso {
			var err error
			ct, err = time.ParseInLocation(c.layout, strings.TrimSpace(s), loc)
			if err != nil {
				c.die(j, path, fmt.Sprintf("expected the timestamps of one host in one date format, got %q after %q", truncate(s, 60), c.prevText))
				continue
			}
			if msg := timeRangeMsg(ct, s); msg != "" {
				c.die(j, path, msg)
				continue
			}
		}
		if c.has && ct.Before(c.prev) {
			c.die(j, path, fmt.Sprintf("expected report times that never go backwards, got %q after %q; import each iostat recording on its own", truncate(s, 60), c.prevText))
			continue
		}
		if c.has {
			c.gaps.add(ct.Sub(c.prev))
		}
		c.prev, c.prevText, c.has = ct, truncate(s, 60), true
	}
	return nil
}

func (c *layoutCand) die(j int, path, msg string) {
	c.ok, c.diedAt, c.diedPath, c.diedMsg = false, j, path, msg
}

// finish checks what only the whole host shows and settles its facts.
func (sc *iostatScan) finish(p *pass, path string, n int, f *iostatHostFacts) error {
	fail := func(p2, format string, args ...any) error { return p.fail(0, p2, format, args...) }
	if n == 0 {
		return fail(path+".statistics", "expected at least one iostat report, got none")
	}
	if sc.withTS > 0 && sc.withoutTS > 0 {
		return fail(fmt.Sprintf("%s.statistics[%d]", path, sc.firstWithout),
			"expected a timestamp in every report, as in the other reports of this host, got none")
	}
	var period time.Duration
	if sc.withTS == 0 {
		opt := p.opt
		if opt.Time.IsZero() || opt.Interval <= 0 {
			return fail(path+".statistics[0]",
				"expected report timestamps (record with iostat -t), or a start time and interval given in the import options, got neither")
		}
		last := opt.Time.Add(time.Duration(n) * opt.Interval)
		if msg := timeRangeMsg(opt.Time, opt.Time.String()); msg != "" {
			return fail(path+".statistics[0]", "%s (the start time given in the import options)", msg)
		}
		if msg := timeRangeMsg(last, last.String()); msg != "" {
			return fail(path+".statistics", "%s (the end of the last report, from the start time and interval given in the import options)", msg)
		}
		period = opt.Interval
	} else {
		var best *layoutCand
		for _, c := range sc.cands {
			if c.ok {
				best = c
				break
			}
		}
		if best == nil {
			last := sc.cands[0]
			for _, c := range sc.cands {
				if c.diedAt > last.diedAt {
					last = c
				}
			}
			return fail(last.diedPath, "%s", last.diedMsg)
		}
		if sc.local > 0 {
			f.layout = best.layout
		}
		f.withTS = true
		period = best.gaps.median()
		if period == 0 {
			period = p.opt.Interval
		}
	}
	if n <= p.opt.firstReport() {
		return fail(path+".statistics",
			"expected at least two iostat reports (the first one covers the time since boot), got one; record with iostat -x -t -o JSON <interval> <count≥2>, or say that iostat ran with -y")
	}
	if period <= 0 {
		return fail(path+".statistics",
			"expected reports at distinct times or an interval given in the import options, got no way to tell the interval")
	}
	f.period = period
	return nil
}

// iostatEmit turns one host's reports into samples in the second pass.
// A report printed at the same time as the next one is dropped (and
// said): both cannot cover the interval that ends then.
type iostatEmit struct {
	sm      sampler
	facts   *iostatHostFacts
	pending *iostatStat
	pendEnd time.Time
	pendIdx int
}

func (e *iostatEmit) report(p *pass, rp string, j int, st *iostatStat) error {
	if j < p.opt.firstReport() {
		return nil
	}
	var end time.Time
	if e.facts.withTS {
		t, err := parseIostatTime(*st.Timestamp, e.facts.layout, p.opt.location())
		if err != nil {
			return p.fail(0, rp+".timestamp", "expected a time, got %q", truncate(*st.Timestamp, 60))
		}
		end = t
	} else {
		end = p.opt.Time.Add(time.Duration(j) * e.facts.period)
	}
	if e.pending != nil {
		if end.Equal(e.pendEnd) {
			p.warn(0, rp+".timestamp", "report %d has the same time as report %d before it (%s); report %d was dropped and this one kept",
				j, e.pendIdx, end.Format(time.RFC3339), e.pendIdx)
		} else if err := e.emit(p, e.pending, e.pendEnd); err != nil {
			return err
		}
	}
	e.pending, e.pendEnd, e.pendIdx = st, end, j
	return nil
}

func (e *iostatEmit) flush(p *pass) error {
	if e.pending == nil {
		return nil
	}
	err := e.emit(p, e.pending, e.pendEnd)
	e.pending = nil
	return err
}

func (e *iostatEmit) emit(p *pass, st *iostatStat, end time.Time) error {
	start := end.Add(-e.facts.period)
	if err := iostatCPU(&e.sm, p, "", st.AvgCPU, start, e.facts.period); err != nil {
		return err
	}
	for i := range st.Disk {
		if err := iostatDisk(&e.sm, p, "", &st.Disk[i], start, e.facts.period); err != nil {
			return err
		}
	}
	return nil
}

// gapHist counts the spacings of reports, to take their median without
// keeping every timestamp. It holds at most maxGaps distinct spacings
// (timestamps have a resolution of a second, so a real recording has a
// handful); spacings beyond are not counted.
type gapHist map[time.Duration]int

const maxGaps = 4096

func (h gapHist) add(d time.Duration) {
	if d <= 0 {
		return
	}
	if _, ok := h[d]; ok || len(h) < maxGaps {
		h[d]++
	}
}

// median returns the median spacing (the upper one of an even count), or 0.
func (h gapHist) median() time.Duration {
	keys := make([]time.Duration, 0, len(h))
	n := 0
	for k, c := range h {
		keys = append(keys, k)
		n += c
	}
	slices.Sort(keys)
	seen := 0
	for _, k := range keys {
		seen += h[k]
		if seen > n/2 {
			return k
		}
	}
	return 0
}

// nonNegative returns the error for a negative input value: counts,
// rates, sizes, times and shares are never below zero, and a negative one
// would pass unnoticed into averages and peaks.
func nonNegative(p *pass, line int, path, what string, v float64) error {
	if v >= 0 || v != v {
		return nil
	}
	return p.fail(line, path, "expected %s of zero or more, got %v; the file is damaged or was edited", what, v)
}

func iostatCPU(sm *sampler, p *pass, path string, c map[string]float64, start time.Time, period time.Duration) error {
	for _, k := range []string{"user", "nice", "system", "iowait", "steal", "idle"} {
		if err := nonNegative(p, 0, path+"."+k, "a CPU share", c[k]); err != nil {
			return err
		}
	}
	cpu := monitor.ResourceCPU
	user, okU := c["user"]
	nice := c["nice"]
	if okU {
		sm.add(cpu, monitor.CPUUserPct, start, period, user+nice)
	}
	if v, ok := c["system"]; ok {
		sm.add(cpu, monitor.CPUSystemPct, start, period, v)
	}
	iowait, okW := c["iowait"]
	if okW {
		sm.add(cpu, monitor.CPUIowaitPct, start, period, iowait)
	}
	if v, ok := c["steal"]; ok {
		sm.add(cpu, monitor.CPUStealPct, start, period, v)
	}
	if idle, ok := c["idle"]; ok {
		sm.add(cpu, monitor.CPUIdlePct, start, period, idle)
		// Rounded shares can add up to a little over 100.
		sm.add(cpu, monitor.CPUUtilPct, start, period, max(0, 100-idle-iowait))
	}
	return nil
}

// iostatDiskJSON is one element of a report's "disk" array. Decoding
// into fixed fields (rather than a map) keeps a large file fast; a field
// iostat did not print stays nil.
type iostatDiskJSON struct {
	Device  *string  `json:"disk_device"`
	RS      *float64 `json:"r/s"`
	WS      *float64 `json:"w/s"`
	DS      *float64 `json:"d/s"`
	RkB     *float64 `json:"rkB/s"`
	WkB     *float64 `json:"wkB/s"`
	RAwait  *float64 `json:"r_await"`
	WAwait  *float64 `json:"w_await"`
	Await   *float64 `json:"await"`    // sysstat before 12
	Aqu     *float64 `json:"aqu-sz"`   // sysstat 12 and later
	AvgQu   *float64 `json:"avgqu-sz"` // before
	Util    *float64 `json:"util"`
	PctUtil *float64 `json:"%util"`
}

func iostatDisk(sm *sampler, p *pass, path string, d *iostatDiskJSON, start time.Time, period time.Duration) error {
	if d.Device == nil || *d.Device == "" {
		got := "nothing"
		if d.Device != nil {
			got = `""`
		}
		return p.fail(0, path+".disk_device", "expected the device name as a string, got %s", got)
	}
	fields := []struct {
		key string
		v   *float64
	}{
		{"r/s", d.RS}, {"w/s", d.WS}, {"d/s", d.DS}, {"rkB/s", d.RkB}, {"wkB/s", d.WkB},
		{"r_await", d.RAwait}, {"w_await", d.WAwait}, {"await", d.Await},
		{"aqu-sz", d.Aqu}, {"avgqu-sz", d.AvgQu}, {"util", d.Util}, {"%util", d.PctUtil},
	}
	for _, f := range fields {
		if f.v != nil {
			if err := nonNegative(p, 0, path+"."+f.key, "a value", *f.v); err != nil {
				return err
			}
		}
	}
	val := func(v *float64) float64 {
		if v == nil {
			return 0
		}
		return *v
	}
	res := monitor.ResourceDiskPrefix + *d.Device
	rs, ws := val(d.RS), val(d.WS)
	if d.RS != nil {
		sm.add(res, monitor.DiskReadOps, start, period, rs)
	}
	if d.WS != nil {
		sm.add(res, monitor.DiskWriteOps, start, period, ws)
	}
	if d.RS != nil && d.WS != nil {
		sm.add(res, DiskOps, start, period, rs+ws+val(d.DS))
	}
	if d.RkB != nil {
		sm.add(res, monitor.DiskReadBytes, start, period, *d.RkB*1024)
	}
	if d.WkB != nil {
		sm.add(res, monitor.DiskWriteBytes, start, period, *d.WkB*1024)
	}
	switch ops := rs + ws; {
	case d.RAwait != nil && d.WAwait != nil && ops > 0:
		sm.add(res, monitor.DiskAwaitMs, start, period, (rs**d.RAwait+ws**d.WAwait)/ops)
	case d.Await != nil && d.RAwait == nil && ops > 0:
		sm.add(res, monitor.DiskAwaitMs, start, period, *d.Await)
	}
	if q := cmp.Or(d.Aqu, d.AvgQu); q != nil {
		sm.add(res, monitor.DiskQueueLength, start, period, *q)
	}
	if u := cmp.Or(d.Util, d.PctUtil); u != nil {
		sm.add(res, monitor.DiskUtilPct, start, period, *u)
	}
	return nil
}

// iostatTimeLayouts are the -t timestamp formats: ISO (S_TIME_FORMAT=ISO)
// first, then common locales' %x %X (month first, then day first).
var iostatTimeLayouts = []string{
	"01/02/06 15:04:05",
	"01/02/2006 15:04:05",
	"01/02/2006 03:04:05 PM",
	"01/02/06 03:04:05 PM",
	"02/01/06 15:04:05",
	"02/01/2006 15:04:05",
	"02.01.2006 15:04:05",
	"02.01.06 15:04:05",
	"2006-01-02 15:04:05",
}

// iostatLayout picks the local-time layout under which every timestamp of
// a file parses and the times never go backwards ("" when none does, or
// the file uses ISO times).
func iostatLayout(texts []string, loc *time.Location) string {
	for _, l := range iostatTimeLayouts {
		var prev time.Time
		ok := true
		for _, s := range texts {
			t, err := time.ParseInLocation(l, strings.TrimSpace(s), loc)
			if err != nil || t.Before(prev) {
				ok = false
				break
			}
			prev = t
		}
		if ok && len(texts) > 0 {
			return l
		}
	}
	return ""
}

// parseISOTime reads an ISO 8601 time with an offset
// (S_TIME_FORMAT=ISO).
func parseISOTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, l := range []string{"2006-01-02T15:04:05-0700", time.RFC3339} {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func parseIostatTime(s, layout string, loc *time.Location) (time.Time, error) {
	if t, ok := parseISOTime(s); ok {
		return t, nil
	}
	s = strings.TrimSpace(s)
	if layout != "" {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	for _, l := range iostatTimeLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("unrecognised time")
}
