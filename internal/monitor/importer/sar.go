package importer

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// Sar input: the semicolon-separated output of sysstat's sadf -d for a
// file recorded by sar (or sadc), e.g.
//
//	sar -u -P ALL -d -n DEV -r 1 60 -o sa.bin >/dev/null
//	sadf -d sa.bin -- -u -P ALL -d -n DEV -r > sar.csv
//
// The file holds one block per report, each starting with its own header
// line "# hostname;interval;timestamp;<report columns>". Blocks are
// recognised by their columns: CPU (-u, -u ALL, -P), DEV (-d), IFACE with
// rxkB/s (-n DEV) and kbmemfree (-r). Other blocks (-q, -b, -n EDEV, ...)
// are skipped, as are LINUX-RESTART and COM lines.
//
// The timestamp column is the end of the interval, so Start is timestamp
// minus interval, and Period is the interval column (seconds). sadf -d
// prints timestamps in UTC with a " UTC" suffix; with -T or -t it prints
// local times without a zone, read in Options.Location; with -U it prints
// Unix seconds.
//
// Metrics: "cpu" (CPU -1 or all) and "cpuN": user_pct (%user or %usr,
// plus %nice), system_pct (%system, or %sys + %irq + %soft), iowait_pct,
// steal_pct, idle_pct, util_pct (100 − idle − iowait). "disk:<DEV>":
// ops_per_s (tps), read_bytes_per_s and write_bytes_per_s (rkB/s, wkB/s
// × 1024), queue_length (aqu-sz), await_ms (omitted when tps is 0),
// util_pct (%util); sar -d has no separate read and write op rates.
// "net:<IFACE>": rx/tx bytes (rxkB/s, txkB/s × 1024) and packets per
// second. "memory": used_bytes (kbmemused), cached_bytes (kbcached),
// available_bytes (kbavail), all × 1024.

type sarBlock struct {
	kind   string // "cpu", "disk", "net", "mem" or "" (skipped)
	cols   map[string]int
	header []string
	line   int
}

const sarWant = `sadf -d output (a "# hostname;interval;timestamp;..." header)`

// sarReader reads sadf -d output line by line. It needs nothing from a
// first pass, which only checks.
type sarReader struct{}

// sarSeries names the lines of one host, block kind and row (a CPU, a
// device, an interface): their times must increase.
type sarSeries struct{ host, kind, row string }

type sarLast struct {
	end  time.Time
	line int
}

func (sarReader) read(p *pass) error {
	fail := func(line int, format string, args ...any) error { return p.fail(line, "", format, args...) }
	var (
		blk        *sarBlock
		recognised bool
		skipped    []string
		last       = map[sarSeries]sarLast{}
	)
	ls := newLines(p)
	for {
		raw, ok, err := ls.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		lineNo := ls.n
		line := strings.TrimSpace(string(raw))
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			cols := splitSar(strings.TrimSpace(strings.TrimPrefix(line, "#")))
			if len(cols) < 4 || cols[0] != "hostname" || cols[1] != "interval" || cols[2] != "timestamp" {
				if blk == nil {
					return fail(lineNo, "expected %s, got %s", sarWant, describe([]byte(line)))
				}
				continue // a comment
			}
			blk = newSarBlock(cols, lineNo)
			if blk.kind == "" {
				skipped = append(skipped, cols[3])
			} else {
				recognised = true
			}
			continue
		}
		if blk == nil {
			return fail(lineNo, "expected %s, got %s", sarWant, describe(p.head))
		}
		f := splitSar(line)
		if len(f) >= 4 && (f[1] == "-1" || strings.HasPrefix(f[3], "LINUX-RESTART") || strings.HasPrefix(f[3], "COM ")) {
			continue
		}
		if blk.kind == "" {
			continue
		}
		if ls.cut {
			return fail(lineNo, "expected a newline after the last line of sadf -d output, got a last line that ends without one, as if the file was cut short; remove that line or export the data again")
		}
		if len(f) != len(blk.header) {
			return fail(lineNo, "expected %d semicolon-separated fields as in the sadf -d header on line %d, got %d",
				len(blk.header), blk.line, len(f))
		}
		iv, err := strconv.ParseFloat(f[1], 64)
		period, ok := secondsToDuration(iv)
		if err != nil || !ok {
			return fail(lineNo, "expected the interval in seconds (a positive number) in sadf -d's second field, got %q", f[1])
		}
		end, err := parseSarTime(f[2], p.opt.location())
		if err != nil {
			return fail(lineNo, `expected a timestamp like "2026-11-23 10:22:45 UTC" in sadf -d's third field, got %q`, truncate(f[2], 60))
		}
		if msg := timeRangeMsg(end, f[2]); msg != "" {
			return fail(lineNo, "%s", msg)
		}
		host := p.opt.host(f[0])
		key := sarSeries{host, blk.kind, blk.row(f)}
		prev, seen := last[key]
		if seen && !end.After(prev.end) {
			what := "the same time as"
			if end.Before(prev.end) {
				what = "a time earlier than"
			}
			return fail(lineNo, "expected the times of %s on host %s to increase, got %s, %s on line %d; import each sadf -d output once and on its own",
				key.rowName(), host, f[2], what, prev.line)
		}
		if seen || len(last) < maxResources {
			last[key] = sarLast{end, lineNo}
		}
		sm := sampler{p: p, host: host, source: monitor.SourceSar}
		if err := blk.emit(&sm, f, end.Add(-period), period); err != nil {
			return fail(lineNo, "%v", err)
		}
		if p.err != nil {
			return p.err
		}
	}
	if !recognised {
		if len(skipped) > 0 {
			return fail(0, "expected at least one sar -u, -d, -n DEV or -r report in the sadf -d output, got only reports with columns %s", truncate(strings.Join(skipped, ", "), 200))
		}
		return fail(1, "expected %s, got %s", sarWant, describe(p.head))
	}
	return nil
}

// row returns the CPU, device or interface a data line is about ("" for
// memory, one row per time).
func (b *sarBlock) row(f []string) string {
	for _, c := range []string{"CPU", "DEV", "IFACE"} {
		if i, ok := b.cols[c]; ok {
			return f[i]
		}
	}
	return ""
}

func (k sarSeries) rowName() string {
	if k.row == "" {
		return k.kind
	}
	return k.kind + " " + k.row
}

func splitSar(s string) []string {
	f := strings.Split(s, ";")
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	return f
}

func newSarBlock(cols []string, line int) *sarBlock {
	b := &sarBlock{cols: map[string]int{}, header: cols, line: line}
	for i, c := range cols {
		b.cols[c] = i
	}
	has := func(c string) bool { _, ok := b.cols[c]; return ok }
	switch {
	case cols[3] == "CPU" && has("%idle"):
		b.kind = "cpu"
	case cols[3] == "DEV" && has("tps"):
		b.kind = "disk"
	case cols[3] == "IFACE" && has("rxkB/s"):
		b.kind = "net"
	case has("kbmemfree"):
		b.kind = "mem"
	}
	return b
}

// emit adds the samples of one data line of the block.
func (b *sarBlock) emit(sm *sampler, f []string, start time.Time, period time.Duration) error {
	get := func(names ...string) (float64, bool, error) {
		for _, n := range names {
			i, ok := b.cols[n]
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(strings.Replace(f[i], ",", ".", 1), 64)
			if err != nil {
				return 0, false, fmt.Errorf("expected a number in column %s, got %q", n, truncate(f[i], 40))
			}
			if v < 0 {
				return 0, false, fmt.Errorf("expected a number of zero or more in column %s, got %q; the file is damaged or was edited", n, truncate(f[i], 40))
			}
			return v, true, nil
		}
		return 0, false, nil
	}
	// vals fetches several columns at once; missing ones read as 0 with ok false.
	type col struct {
		v  float64
		ok bool
	}
	vals := func(names ...[]string) ([]col, error) {
		out := make([]col, len(names))
		for i, n := range names {
			v, ok, err := get(n...)
			if err != nil {
				return nil, err
			}
			out[i] = col{v, ok}
		}
		return out, nil
	}
	switch b.kind {
	case "cpu":
		c, err := vals([]string{"%user", "%usr"}, []string{"%nice"}, []string{"%system", "%sys"},
			[]string{"%irq"}, []string{"%soft"}, []string{"%iowait"}, []string{"%steal"}, []string{"%idle"})
		if err != nil {
			return err
		}
		res := monitor.ResourceCPU
		if id := f[b.cols["CPU"]]; id != "-1" && id != "all" {
			res = monitor.ResourceCPU + id
		}
		if c[0].ok {
			sm.add(res, monitor.CPUUserPct, start, period, c[0].v+c[1].v)
		}
		if c[2].ok {
			sm.add(res, monitor.CPUSystemPct, start, period, c[2].v+c[3].v+c[4].v)
		}
		if c[5].ok {
			sm.add(res, monitor.CPUIowaitPct, start, period, c[5].v)
		}
		if c[6].ok {
			sm.add(res, monitor.CPUStealPct, start, period, c[6].v)
		}
		sm.add(res, monitor.CPUIdlePct, start, period, c[7].v)
		// Rounded shares can add up to a little over 100.
		sm.add(res, monitor.CPUUtilPct, start, period, max(0, 100-c[7].v-c[5].v))
	case "disk":
		c, err := vals([]string{"tps"}, []string{"rkB/s"}, []string{"wkB/s"}, []string{"rd_sec/s"}, []string{"wr_sec/s"},
			[]string{"aqu-sz", "avgqu-sz"}, []string{"await"}, []string{"%util"})
		if err != nil {
			return err
		}
		res := monitor.ResourceDiskPrefix + f[b.cols["DEV"]]
		sm.add(res, DiskOps, start, period, c[0].v)
		switch {
		case c[1].ok:
			sm.add(res, monitor.DiskReadBytes, start, period, c[1].v*1024)
		case c[3].ok:
			sm.add(res, monitor.DiskReadBytes, start, period, c[3].v*512)
		}
		switch {
		case c[2].ok:
			sm.add(res, monitor.DiskWriteBytes, start, period, c[2].v*1024)
		case c[4].ok:
			sm.add(res, monitor.DiskWriteBytes, start, period, c[4].v*512)
		}
		if c[5].ok {
			sm.add(res, monitor.DiskQueueLength, start, period, c[5].v)
		}
		if c[6].ok && c[0].v > 0 {
			sm.add(res, monitor.DiskAwaitMs, start, period, c[6].v)
		}
		if c[7].ok {
			sm.add(res, monitor.DiskUtilPct, start, period, c[7].v)
		}
	case "net":
		c, err := vals([]string{"rxkB/s"}, []string{"txkB/s"}, []string{"rxpck/s"}, []string{"txpck/s"})
		if err != nil {
			return err
		}
		res := monitor.ResourceNetPrefix + f[b.cols["IFACE"]]
		sm.add(res, monitor.NetRxBytes, start, period, c[0].v*1024)
		if c[1].ok {
			sm.add(res, monitor.NetTxBytes, start, period, c[1].v*1024)
		}
		if c[2].ok {
			sm.add(res, monitor.NetRxPackets, start, period, c[2].v)
		}
		if c[3].ok {
			sm.add(res, monitor.NetTxPackets, start, period, c[3].v)
		}
	case "mem":
		c, err := vals([]string{"kbmemused"}, []string{"kbcached"}, []string{"kbavail"})
		if err != nil {
			return err
		}
		res := monitor.ResourceMemory
		if c[0].ok {
			sm.add(res, monitor.MemUsedBytes, start, period, c[0].v*1024)
		}
		if c[1].ok {
			sm.add(res, monitor.MemCachedBytes, start, period, c[1].v*1024)
		}
		if c[2].ok {
			sm.add(res, monitor.MemAvailableBytes, start, period, c[2].v*1024)
		}
	}
	return nil
}

func parseSarTime(s string, loc *time.Location) (time.Time, error) {
	if rest, ok := strings.CutSuffix(s, " UTC"); ok {
		return time.Parse(time.DateTime, rest)
	}
	if t, err := time.ParseInLocation(time.DateTime, s, loc); err == nil {
		return t, nil
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil || sec < 0 || sec > 1<<40 {
		return time.Time{}, fmt.Errorf("bad time %q", s)
	}
	return time.Unix(sec, 0).UTC(), nil
}
