package importer

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// Prometheus input: node_exporter's text exposition format, one or more
// scrapes concatenated, each preceded by a marker comment giving the time
// of the scrape in Unix milliseconds (or RFC 3339):
//
//	echo "# headroom-scrape-time: $(date +%s%3N)" >> node.prom
//	curl -s http://127.0.0.1:9100/metrics >> node.prom
//
// Without markers, a scrape ends where a series repeats, and its time is
// the largest sample timestamp in it; a file holding a single scrape with
// neither markers nor timestamps takes its time from Options.Time (the
// caller may pass the file's modification time). With markers, sample
// timestamps are ignored.
//
// Counters become rates between consecutive scrapes: the sample covers
// [scrape i−1, scrape i), Start is the earlier scrape's time and Period
// the spacing. A counter that went down (a reset) yields no sample for
// that interval. Gauges (memory) take the value of the later scrape, as
// sar does; a single scrape yields its gauges with Period 0 and no rates.
//
// Metrics: node_cpu_seconds_total gives "cpuN" per core and "cpu" for all
// cores, each mode's share of the summed time of all modes: user_pct
// (user + nice), system_pct (system + irq + softirq), iowait_pct,
// steal_pct, idle_pct, util_pct (100 − idle − iowait). node_disk_* gives
// "disk:<device>": read_ops_per_s, write_ops_per_s, ops_per_s (+ discards),
// read_bytes_per_s, write_bytes_per_s, util_pct (io_time_seconds × 100
// per second), queue_length (io_time_weighted_seconds per second),
// await_ms ((read_time + write_time) / (reads + writes)). node_network_*
// gives "net:<device>" rx/tx bytes and packets per second.
// node_memory_* gives "memory": available_bytes (MemAvailable),
// cached_bytes (Cached), total_bytes (MemTotal) and used_bytes (MemTotal
// − MemFree − Buffers − Cached − SReclaimable, as free(1) computes it).
// The host is node_uname_info's nodename label.

// ScrapeMarker starts a scrape in a Prometheus import file.
const ScrapeMarker = "# headroom-scrape-time:"

type promKey struct {
	name string
	a    string // device or cpu label
	b    string // mode label
}

type promScrape struct {
	line     int // first line of the scrape
	t        time.Time
	marked   bool
	maxTS    int64
	hasTS    bool
	nodename string
	vals     map[promKey]float64
	seen     map[string]bool // raw series text, to split scrapes without markers
	samples  int
}

const promWant = `Prometheus text exposition (lines "name{labels} value")`

// promReader reads scrapes one after the other, keeping two: counters
// become rates between consecutive ones.
type promReader struct {
	// Learnt in the first pass: the host (the first scrape that names
	// one) and the number of scrapes (a single scrape yields gauges only).
	host    string
	scrapes int
}

// promRead is the state of one pass.
type promRead struct {
	p         *pass
	r         *promReader
	sm        sampler
	marked    bool // a scrape-time marker was seen
	firstLine int  // line of the first sample
	unmarked  bool // samples came before any marker
	prev, cur *promScrape
	done      int // scrapes finished
	// minGap is the shortest spacing of consecutive scrapes so far (0:
	// none yet), against which a gap is judged (scrapeGap).
	minGap time.Duration
}

// scrapeGap says whether the spacing d of two scrapes is a gap in the
// recording rather than one scrape interval: over an hour, or over a
// minute and ten times the shortest spacing seen before. A counter's change
// over a gap is an average over a time nobody measured (a 2-year gap
// became one "rate" sample), so no rate is made of it.
func scrapeGap(d, minGap time.Duration) bool {
	return d > time.Hour || d > time.Minute && minGap > 0 && d > 10*minGap
}

func (pr *promReader) read(p *pass) error {
	if f, ok := Detect(p.head); ok && f != FormatPrometheus {
		return p.fail(1, "", "expected %s, got %s", promWant, describe(p.head))
	}
	st := &promRead{p: p, r: pr, sm: sampler{p: p, host: p.opt.host(pr.host), source: monitor.SourcePrometheus}}
	ls := newLines(p)
	for {
		raw, ok, err := ls.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if err := st.line(ls.n, strings.TrimSpace(string(raw)), ls.cut); err != nil {
			return err
		}
		if p.err != nil {
			return p.err
		}
	}
	if st.cur == nil || st.cur.samples == 0 && st.done == 0 {
		got := describe(p.head)
		if f, ok := Detect(p.head); ok && f == FormatPrometheus {
			got = "comments and markers only, no sample"
		}
		return p.fail(1, "", "expected %s, got %s", promWant, got)
	}
	if st.cur.samples > 0 {
		if err := st.finish(true); err != nil {
			return err
		}
	}
	if !p.emit {
		pr.scrapes = st.done
	}
	return nil
}

func (st *promRead) fail(line int, format string, args ...any) error {
	return st.p.fail(line, "", format, args...)
}

func (st *promRead) newScrape(line int) error {
	if st.cur != nil && st.cur.samples > 0 {
		if err := st.finish(false); err != nil {
			return err
		}
	}
	st.cur = &promScrape{line: line, vals: map[promKey]float64{}, seen: map[string]bool{}}
	return nil
}

func (st *promRead) line(lineNo int, line string, cut bool) error {
	if line == "" {
		return nil
	}
	if rest, ok := strings.CutPrefix(line, ScrapeMarker); ok {
		t, err := parseScrapeTime(strings.TrimSpace(rest))
		if err != nil {
			return st.fail(lineNo, "expected %s followed by Unix milliseconds or an RFC 3339 time, got %q", ScrapeMarker, truncate(line, 60))
		}
		if msg := timeRangeMsg(t, strings.TrimSpace(rest)); msg != "" {
			return st.fail(lineNo, "%s", msg)
		}
		if st.unmarked {
			return st.fail(st.firstLine, "expected a %q line before the first sample, as the file's other scrapes have one (line %d), got a sample", ScrapeMarker, lineNo)
		}
		st.marked = true
		if st.cur == nil || st.cur.samples > 0 {
			if err := st.newScrape(lineNo); err != nil {
				return err
			}
		}
		st.cur.t, st.cur.marked = t, true
		return nil
	}
	if line[0] == '#' {
		return nil
	}
	if cut {
		return st.fail(lineNo, "expected a newline after the last sample, got a last line that ends without one, as if the file was cut in the middle of a sample (%q); remove the incomplete last scrape or record it again", truncate(line, 60))
	}
	series, labels, v, ts, hasTS, err := parsePromLine(line)
	if err != nil {
		if st.cur == nil || st.cur.samples == 0 && st.done == 0 {
			return st.fail(lineNo, "expected %s, got %s (%v)", promWant, describe([]byte(line)), err)
		}
		return st.fail(lineNo, "expected a Prometheus sample line (name{labels} value [timestamp]), got %q: %v", truncate(line, 60), err)
	}
	if st.firstLine == 0 {
		st.firstLine = lineNo
	}
	switch {
	case st.cur == nil && !st.marked:
		st.unmarked = true
		if err := st.newScrape(lineNo); err != nil {
			return err
		}
	case st.cur.seen[series] && st.marked:
		return st.fail(lineNo, "expected each series once per scrape, got %s again since the %q line on line %d", truncate(series, 60), ScrapeMarker, st.cur.line)
	case st.cur.seen[series]:
		if err := st.newScrape(lineNo); err != nil {
			return err
		}
	}
	st.cur.seen[series] = true
	st.cur.samples++
	if hasTS && (!st.cur.hasTS || ts > st.cur.maxTS) {
		st.cur.maxTS, st.cur.hasTS = ts, true
	}
	if promKeep(st.cur, labels, v) && promUsed[labels.name] && v < 0 {
		return st.fail(lineNo, "expected %s of zero or more, got %v; the file is damaged or was edited", labels.name, v)
	}
	return nil
}

// finish settles the time of the current scrape, checks it follows the
// previous one, and emits the interval between them.
func (st *promRead) finish(atEnd bool) error {
	s, p := st.cur, st.p
	switch {
	case s.marked:
	case s.hasTS:
		s.t = time.UnixMilli(s.maxTS).UTC()
		if msg := timeRangeMsg(s.t, strconv.FormatInt(s.maxTS, 10)); msg != "" {
			return st.fail(s.line, "%s (the latest sample timestamp of the scrape starting here)", msg)
		}
	case atEnd && st.done == 0 && !p.opt.Time.IsZero():
		s.t = p.opt.Time
		if msg := timeRangeMsg(s.t, s.t.String()); msg != "" {
			return st.fail(s.line, "%s (the time given in the import options)", msg)
		}
	default:
		return st.fail(s.line, "expected a %q line (Unix ms) before the scrape starting here, sample timestamps, or a time given in the import options, got none", ScrapeMarker)
	}
	if st.prev != nil && !s.t.After(st.prev.t) {
		return st.fail(s.line, "expected scrape times to increase, got %s after %s",
			s.t.Format(time.RFC3339Nano), st.prev.t.Format(time.RFC3339Nano))
	}
	if !p.emit && st.r.host == "" && s.nodename != "" {
		st.r.host = s.nodename
	}
	st.done++
	if p.emit {
		switch {
		case st.prev != nil && scrapeGap(s.t.Sub(st.prev.t), st.minGap):
			st.p.warn(s.line, "", "no rates over the %v between the scrapes at %s and %s: a gap in the recording (over an hour, or over a minute and ten times the shortest spacing, %v), not one scrape interval",
				s.t.Sub(st.prev.t), st.prev.t.Format(time.RFC3339), s.t.Format(time.RFC3339), st.minGap)
		case st.prev != nil:
			prev, next := st.prev, s
			start, period := prev.t, next.t.Sub(prev.t)
			promCPU(&st.sm, prev, next, start, period)
			promDisks(&st.sm, prev, next, start, period)
			promNet(&st.sm, prev, next, start, period)
			promMemory(&st.sm, next, start, period)
		case st.r.scrapes == 1:
			promMemory(&st.sm, s, s.t, 0)
		}
	}
	if st.prev != nil {
		if d := s.t.Sub(st.prev.t); !scrapeGap(d, st.minGap) && (st.minGap == 0 || d < st.minGap) {
			st.minGap = d
		}
	}
	st.prev = s
	return nil
}

func parseScrapeTime(s string) (time.Time, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms < 0 || ms > 1<<50 {
			return time.Time{}, fmt.Errorf("out of range")
		}
		return time.UnixMilli(ms).UTC(), nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

// promUsed are the series whose values headroom uses: counters and
// sizes, never negative (unlike, say, node_network_speed_bytes, which is
// -125000 when the speed is unknown).
var promUsed = map[string]bool{}

func init() {
	for _, n := range []string{
		"node_cpu_seconds_total",
		"node_disk_reads_completed_total", "node_disk_writes_completed_total", "node_disk_discards_completed_total",
		"node_disk_read_bytes_total", "node_disk_written_bytes_total", "node_disk_io_time_seconds_total",
		"node_disk_io_time_weighted_seconds_total", "node_disk_read_time_seconds_total", "node_disk_write_time_seconds_total",
		"node_network_receive_bytes_total", "node_network_transmit_bytes_total",
		"node_network_receive_packets_total", "node_network_transmit_packets_total",
		"node_memory_MemTotal_bytes", "node_memory_MemFree_bytes", "node_memory_Buffers_bytes",
		"node_memory_Cached_bytes", "node_memory_SReclaimable_bytes", "node_memory_MemAvailable_bytes",
	} {
		promUsed[n] = true
	}
}

// promKeep stores the values of the series headroom uses, and says
// whether it kept v: all of them are counters or sizes, never negative.
func promKeep(s *promScrape, l promLabels, v float64) bool {
	name := l.name
	switch {
	case name == "node_uname_info":
		s.nodename = l.get("nodename")
	case name == "node_cpu_seconds_total":
		s.vals[promKey{name, l.get("cpu"), l.get("mode")}] = v
	case strings.HasPrefix(name, "node_disk_"), strings.HasPrefix(name, "node_network_"):
		s.vals[promKey{name: name, a: l.get("device")}] = v
	case strings.HasPrefix(name, "node_memory_"):
		s.vals[promKey{name: name}] = v
	default:
		return false
	}
	return true
}

// promDelta returns the increase of counter k between two scrapes.
func promDelta(prev, next *promScrape, k promKey) (float64, bool) {
	a, ok1 := prev.vals[k]
	b, ok2 := next.vals[k]
	if !ok1 || !ok2 || b < a || math.IsNaN(a) || math.IsNaN(b) {
		return 0, false
	}
	return b - a, true
}

func promCPU(sm *sampler, prev, next *promScrape, start time.Time, period time.Duration) {
	modes := map[string]map[string]float64{} // core -> mode -> delta
	bad := map[string]bool{}
	for k := range next.vals {
		if k.name != "node_cpu_seconds_total" {
			continue
		}
		d, ok := promDelta(prev, next, k)
		if !ok {
			bad[k.a] = true
			continue
		}
		if modes[k.a] == nil {
			modes[k.a] = map[string]float64{}
		}
		modes[k.a][k.b] = d
	}
	total := map[string]float64{}
	var cores []string
	for core, m := range modes {
		if bad[core] {
			continue
		}
		cores = append(cores, core)
		for mode, d := range m {
			total[mode] += d
		}
	}
	slices.SortFunc(cores, func(a, b string) int {
		ia, ea := strconv.Atoi(a)
		ib, eb := strconv.Atoi(b)
		if ea == nil && eb == nil {
			return ia - ib
		}
		return strings.Compare(a, b)
	})
	if len(cores) > 0 {
		cpuShares(sm, monitor.ResourceCPU, total, start, period)
	}
	for _, core := range cores {
		cpuShares(sm, monitor.ResourceCPU+core, modes[core], start, period)
	}
}

func cpuShares(sm *sampler, res string, m map[string]float64, start time.Time, period time.Duration) {
	var sum float64
	for _, d := range m {
		sum += d
	}
	if sum <= 0 {
		return
	}
	pct := func(modes ...string) float64 {
		var v float64
		for _, mode := range modes {
			v += m[mode]
		}
		return 100 * v / sum
	}
	sm.add(res, monitor.CPUUserPct, start, period, pct("user", "nice"))
	sm.add(res, monitor.CPUSystemPct, start, period, pct("system", "irq", "softirq"))
	sm.add(res, monitor.CPUIowaitPct, start, period, pct("iowait"))
	sm.add(res, monitor.CPUStealPct, start, period, pct("steal"))
	sm.add(res, monitor.CPUIdlePct, start, period, pct("idle"))
	sm.add(res, monitor.CPUUtilPct, start, period, 100-pct("idle", "iowait"))
}

func devices(s *promScrape, prefix string) []string {
	set := map[string]bool{}
	for k := range s.vals {
		if strings.HasPrefix(k.name, prefix) && k.a != "" {
			set[k.a] = true
		}
	}
	var out []string
	for d := range set {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

func promDisks(sm *sampler, prev, next *promScrape, start time.Time, period time.Duration) {
	secs := period.Seconds()
	for _, dev := range devices(next, "node_disk_") {
		res := monitor.ResourceDiskPrefix + dev
		delta := func(name string) (float64, bool) { return promDelta(prev, next, promKey{name: name, a: dev}) }
		rate := func(metric, name string, scale float64) {
			if d, ok := delta(name); ok {
				sm.add(res, metric, start, period, d*scale/secs)
			}
		}
		reads, okR := delta("node_disk_reads_completed_total")
		writes, okW := delta("node_disk_writes_completed_total")
		if !okR && !okW {
			continue
		}
		rate(monitor.DiskReadOps, "node_disk_reads_completed_total", 1)
		rate(monitor.DiskWriteOps, "node_disk_writes_completed_total", 1)
		if okR && okW {
			discards, _ := delta("node_disk_discards_completed_total")
			sm.add(res, DiskOps, start, period, (reads+writes+discards)/secs)
		}
		rate(monitor.DiskReadBytes, "node_disk_read_bytes_total", 1)
		rate(monitor.DiskWriteBytes, "node_disk_written_bytes_total", 1)
		if d, ok := delta("node_disk_io_time_seconds_total"); ok {
			sm.add(res, monitor.DiskUtilPct, start, period, min(100, 100*d/secs))
		}
		rate(monitor.DiskQueueLength, "node_disk_io_time_weighted_seconds_total", 1)
		rt, ok1 := delta("node_disk_read_time_seconds_total")
		wt, ok2 := delta("node_disk_write_time_seconds_total")
		if ok1 && ok2 && okR && okW && reads+writes > 0 {
			sm.add(res, monitor.DiskAwaitMs, start, period, (rt+wt)/(reads+writes)*1000)
		}
	}
}

func promNet(sm *sampler, prev, next *promScrape, start time.Time, period time.Duration) {
	secs := period.Seconds()
	for _, dev := range devices(next, "node_network_") {
		res := monitor.ResourceNetPrefix + dev
		for _, m := range [][2]string{
			{monitor.NetRxBytes, "node_network_receive_bytes_total"},
			{monitor.NetTxBytes, "node_network_transmit_bytes_total"},
			{monitor.NetRxPackets, "node_network_receive_packets_total"},
			{monitor.NetTxPackets, "node_network_transmit_packets_total"},
		} {
			if d, ok := promDelta(prev, next, promKey{name: m[1], a: dev}); ok {
				sm.add(res, m[0], start, period, d/secs)
			}
		}
	}
}

func promMemory(sm *sampler, s *promScrape, start time.Time, period time.Duration) {
	get := func(field string) (float64, bool) {
		v, ok := s.vals[promKey{name: "node_memory_" + field + "_bytes"}]
		return v, ok
	}
	res := monitor.ResourceMemory
	total, okT := get("MemTotal")
	free, okF := get("MemFree")
	buffers, okB := get("Buffers")
	cached, okC := get("Cached")
	srecl, okS := get("SReclaimable")
	if used := total - free - buffers - cached - srecl; okT && okF && okB && okC && okS && used >= 0 {
		sm.add(res, monitor.MemUsedBytes, start, period, used)
	}
	if okC {
		sm.add(res, monitor.MemCachedBytes, start, period, cached)
	}
	if v, ok := get("MemAvailable"); ok {
		sm.add(res, monitor.MemAvailableBytes, start, period, v)
	}
	if okT {
		sm.add(res, MemTotalBytes, start, period, total)
	}
}

// promLabels is a parsed metric name with its labels.
type promLabels struct {
	name   string
	labels [][2]string
}

func (l promLabels) get(name string) string {
	for _, kv := range l.labels {
		if kv[0] == name {
			return kv[1]
		}
	}
	return ""
}

// parsePromLine parses `name{a="b",...} value [timestamp]`. Series is the
// text before the value, used to notice a repeated series.
func parsePromLine(line string) (series string, l promLabels, v float64, ts int64, hasTS bool, err error) {
	i := 0
	for i < len(line) && isNameChar(line[i], i == 0) {
		i++
	}
	if i == 0 {
		return "", l, 0, 0, false, fmt.Errorf("a metric name must start with a letter, '_' or ':'")
	}
	l.name = line[:i]
	if i < len(line) && line[i] == '{' {
		i++
		for {
			for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
				i++
			}
			if i >= len(line) {
				return "", l, 0, 0, false, fmt.Errorf("unterminated label set")
			}
			if line[i] == '}' {
				i++
				break
			}
			j := i
			for j < len(line) && isNameChar(line[j], j == i) && line[j] != ':' {
				j++
			}
			if j == i || j >= len(line) || line[j] != '=' {
				return "", l, 0, 0, false, fmt.Errorf("expected label=\"value\" at column %d", i+1)
			}
			key := line[i:j]
			j++
			if j >= len(line) || line[j] != '"' {
				return "", l, 0, 0, false, fmt.Errorf("expected a quoted label value at column %d", j+1)
			}
			j++
			var val strings.Builder
			closed := false
			for j < len(line) {
				c := line[j]
				if c == '\\' && j+1 < len(line) {
					switch line[j+1] {
					case 'n':
						val.WriteByte('\n')
					default:
						val.WriteByte(line[j+1])
					}
					j += 2
					continue
				}
				if c == '"' {
					closed = true
					j++
					break
				}
				val.WriteByte(c)
				j++
			}
			if !closed {
				return "", l, 0, 0, false, fmt.Errorf("unterminated label value")
			}
			l.labels = append(l.labels, [2]string{key, val.String()})
			for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
				j++
			}
			if j < len(line) && line[j] == ',' {
				j++
			}
			i = j
		}
	}
	series = line[:i]
	rest := strings.Fields(line[i:])
	if len(rest) == 0 || len(rest) > 2 || i < len(line) && line[i] != ' ' && line[i] != '\t' {
		return "", l, 0, 0, false, fmt.Errorf("expected a value (and optionally a timestamp) after the series")
	}
	v, perr := strconv.ParseFloat(rest[0], 64)
	if perr != nil {
		return "", l, 0, 0, false, fmt.Errorf("value %q is not a number", truncate(rest[0], 30))
	}
	if len(rest) == 2 {
		ts, perr = strconv.ParseInt(rest[1], 10, 64)
		if perr != nil || ts < 0 || ts > 1<<50 {
			return "", l, 0, 0, false, fmt.Errorf("timestamp %q is not Unix milliseconds", truncate(rest[1], 30))
		}
		hasTS = true
	}
	return series, l, v, ts, hasTS, nil
}

func isNameChar(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == ':':
		return true
	case c >= '0' && c <= '9':
		return !first
	}
	return false
}
