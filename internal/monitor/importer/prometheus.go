package importer

import (
	"bytes"
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

func parsePrometheus(name string, data []byte, opt Options) ([]monitor.Sample, error) {
	fail := func(line int, format string, args ...any) error {
		return &Error{Name: name, Line: line, Format: FormatPrometheus, Msg: fmt.Sprintf(format, args...)}
	}
	if f, ok := Detect(data); ok && f != FormatPrometheus {
		return nil, fail(1, "expected %s, got %s", promWant, describe(data))
	}
	marked := bytes.Contains(data, []byte(ScrapeMarker))
	var scrapes []*promScrape
	var cur *promScrape
	newScrape := func(line int) {
		cur = &promScrape{line: line, vals: map[promKey]float64{}, seen: map[string]bool{}}
		scrapes = append(scrapes, cur)
	}
	lineNo := 0
	for raw := range strings.SplitSeq(string(data), "\n") {
		lineNo++
		line := strings.TrimSpace(raw)
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, ScrapeMarker); ok {
			t, err := parseScrapeTime(strings.TrimSpace(rest))
			if err != nil {
				return nil, fail(lineNo, "expected %s followed by Unix milliseconds or an RFC 3339 time, got %q", ScrapeMarker, truncate(line, 60))
			}
			if cur == nil || cur.samples > 0 {
				newScrape(lineNo)
			}
			cur.t, cur.marked = t, true
			continue
		}
		if line[0] == '#' {
			continue
		}
		series, labels, v, ts, hasTS, err := parsePromLine(line)
		if err != nil {
			if cur == nil || cur.samples == 0 && len(scrapes) == 1 {
				return nil, fail(lineNo, "expected %s, got %s (%v)", promWant, describe([]byte(line)), err)
			}
			return nil, fail(lineNo, "expected a Prometheus sample line (name{labels} value [timestamp]), got %q: %v", truncate(line, 60), err)
		}
		switch {
		case cur == nil && marked:
			return nil, fail(lineNo, "expected a %q line before the first sample, as the file's other scrapes have one, got a sample", ScrapeMarker)
		case cur == nil:
			newScrape(lineNo)
		case cur.seen[series] && marked:
			return nil, fail(lineNo, "expected each series once per scrape, got %s again since the %q line on line %d", truncate(series, 60), ScrapeMarker, cur.line)
		case cur.seen[series]:
			newScrape(lineNo)
		}
		cur.seen[series] = true
		cur.samples++
		if hasTS && (!cur.hasTS || ts > cur.maxTS) {
			cur.maxTS, cur.hasTS = ts, true
		}
		promKeep(cur, labels, v)
	}
	if len(scrapes) == 0 || scrapes[len(scrapes)-1].samples == 0 && len(scrapes) == 1 {
		return nil, fail(1, "expected %s, got %s", promWant, describe(data))
	}
	if last := scrapes[len(scrapes)-1]; last.samples == 0 {
		scrapes = scrapes[:len(scrapes)-1] // a trailing marker without a scrape
	}
	for _, s := range scrapes {
		switch {
		case s.marked:
		case s.hasTS:
			s.t = time.UnixMilli(s.maxTS).UTC()
		case len(scrapes) == 1 && !opt.Time.IsZero():
			s.t = opt.Time
		default:
			return nil, fail(s.line, "expected a %q line (Unix ms) before the scrape starting here, sample timestamps, or a time given in the import options, got none", ScrapeMarker)
		}
	}
	for i := 1; i < len(scrapes); i++ {
		if !scrapes[i].t.After(scrapes[i-1].t) {
			return nil, fail(scrapes[i].line, "expected scrape times to increase, got %s after %s",
				scrapes[i].t.Format(time.RFC3339Nano), scrapes[i-1].t.Format(time.RFC3339Nano))
		}
	}

	host := ""
	for _, s := range scrapes {
		if s.nodename != "" {
			host = s.nodename
			break
		}
	}
	sm := sampler{host: opt.host(host), source: monitor.SourcePrometheus}
	if len(scrapes) == 1 {
		promMemory(&sm, scrapes[0], scrapes[0].t, 0)
		return sm.out, nil
	}
	for i := 1; i < len(scrapes); i++ {
		prev, next := scrapes[i-1], scrapes[i]
		start, period := prev.t, next.t.Sub(prev.t)
		promCPU(&sm, prev, next, start, period)
		promDisks(&sm, prev, next, start, period)
		promNet(&sm, prev, next, start, period)
		promMemory(&sm, next, start, period)
	}
	return sm.out, nil
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

// promKeep stores the values of the series headroom uses.
func promKeep(s *promScrape, l promLabels, v float64) {
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
	}
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
	if okT && okF && okB && okC && okS {
		sm.add(res, monitor.MemUsedBytes, start, period, total-free-buffers-cached-srecl)
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
