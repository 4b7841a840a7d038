package importer

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// CloudWatch input: the JSON printed by `aws cloudwatch get-metric-data`
// (AWS CLI v2, --output json), optionally extended with "Period", "Stat"
// and "Host" fields:
//
//	{
//	  "Period": 60,                       // optional: seconds, for all results
//	  "Host": "db-primary",               // optional: host of all samples
//	  "MetricDataResults": [
//	    {
//	      "Id": "vol_0abc_read_ops",
//	      "Label": "vol-0abc VolumeReadOps",
//	      "Period": 60,                   // optional: overrides the top-level one
//	      "Stat": "Sum",                  // optional: the statistic requested
//	      "Timestamps": ["2026-11-23T10:01:00+00:00", "2026-11-23T10:00:00+00:00"],
//	      "Values": [600, 540],
//	      "StatusCode": "Complete"
//	    }
//	  ],
//	  "Messages": []
//	}
//
// See the package's CloudWatch documentation (docs/) for the full rules;
// in short: the metric is the longest known CloudWatch metric name found
// in Label, else in Id (case-insensitive), else an Id suffix alias; the
// volume is the first vol-XXXX in Label or vol_XXXX in Id; a timestamp is
// the start of its period; Sum statistics are divided by the period; the
// period is the result's "Period", else the top-level "Period", else the
// smallest spacing of the result's timestamps.

type cwResult struct {
	ID         string    `json:"Id"`
	Label      string    `json:"Label"`
	Timestamps []string  `json:"Timestamps"`
	Values     []float64 `json:"Values"`
	StatusCode string    `json:"StatusCode"`
	Period     *float64  `json:"Period"`
	Stat       string    `json:"Stat"`
}

// cwKind says how a CloudWatch metric's values become sample values.
type cwKind int

const (
	cwSum     cwKind = iota // a total per period: divide by the period (Sum statistic)
	cwAverage               // already a level or a rate (Average statistic)
	cwIdle                  // seconds idle per period (Sum): util = 100·(1 − idle/period)
	cwTime                  // seconds spent per period on ops (Sum): feeds await_ms
	cwLatency               // seconds per op (Average): feeds await_ms
)

type cwMetric struct {
	kind     cwKind
	resource string // "volume" (per volume), "rds", or a resource name
	metric   string // headroom metric; for cwTime/cwLatency "read" or "write"
}

// cwMetrics maps lower-cased CloudWatch metric names.
var cwMetrics = map[string]cwMetric{
	// EBS (namespace AWS/EBS), per volume.
	"volumereadops":        {cwSum, "volume", monitor.DiskReadOps},
	"volumewriteops":       {cwSum, "volume", monitor.DiskWriteOps},
	"volumereadbytes":      {cwSum, "volume", monitor.DiskReadBytes},
	"volumewritebytes":     {cwSum, "volume", monitor.DiskWriteBytes},
	"volumequeuelength":    {cwAverage, "volume", monitor.DiskQueueLength},
	"volumeidletime":       {cwIdle, "volume", monitor.DiskUtilPct},
	"volumetotalreadtime":  {cwTime, "volume", "read"},
	"volumetotalwritetime": {cwTime, "volume", "write"},
	// EC2 (AWS/EC2), per instance.
	"cpuutilization":    {cwAverage, monitor.ResourceCPU, monitor.CPUUtilPct},
	"networkin":         {cwSum, monitor.ResourceNetPrefix + "all", monitor.NetRxBytes},
	"networkout":        {cwSum, monitor.ResourceNetPrefix + "all", monitor.NetTxBytes},
	"networkpacketsin":  {cwSum, monitor.ResourceNetPrefix + "all", monitor.NetRxPackets},
	"networkpacketsout": {cwSum, monitor.ResourceNetPrefix + "all", monitor.NetTxPackets},
	// RDS (AWS/RDS), per DB instance; already rates.
	"readiops":                 {cwAverage, "rds", monitor.DiskReadOps},
	"writeiops":                {cwAverage, "rds", monitor.DiskWriteOps},
	"readthroughput":           {cwAverage, "rds", monitor.DiskReadBytes},
	"writethroughput":          {cwAverage, "rds", monitor.DiskWriteBytes},
	"diskqueuedepth":           {cwAverage, "rds", monitor.DiskQueueLength},
	"readlatency":              {cwLatency, "rds", "read"},
	"writelatency":             {cwLatency, "rds", "write"},
	"freeablememory":           {cwAverage, monitor.ResourceMemory, monitor.MemAvailableBytes},
	"networkreceivethroughput": {cwAverage, monitor.ResourceNetPrefix + "all", monitor.NetRxBytes},
	"networktransmitthroughput": {cwAverage, monitor.ResourceNetPrefix + "all",
		monitor.NetTxBytes},
}

// cwAliases are short metric names accepted at the end of an Id
// (after the volume, if any), e.g. "vol_0abc_read_ops".
var cwAliases = map[string]string{
	"read_ops":     "volumereadops",
	"write_ops":    "volumewriteops",
	"read_bytes":   "volumereadbytes",
	"write_bytes":  "volumewritebytes",
	"queue_length": "volumequeuelength",
	"queue":        "volumequeuelength",
	"idle_time":    "volumeidletime",
	"read_time":    "volumetotalreadtime",
	"write_time":   "volumetotalwritetime",
	"cpu":          "cpuutilization",
	"network_in":   "networkin",
	"network_out":  "networkout",
}

var (
	cwVolLabel = regexp.MustCompile(`\bvol-[0-9A-Za-z]+`)
	cwVolID    = regexp.MustCompile(`(?:^|_)vol_([0-9a-zA-Z]+)`)
	cwStatWord = regexp.MustCompile(`(?i)^(sum|average|avg|maximum|max|minimum|min|samplecount|p\d+(\.\d+)?|tm\d+|iqm)$`)
)

const cwWant = `aws cloudwatch get-metric-data JSON (a "MetricDataResults" array)`

// cwReader streams "MetricDataResults", one result at a time. The
// top-level "Period" and "Host" may follow the results, so the first
// pass reads them before anything else.
type cwReader struct {
	top  time.Duration
	host string
}

type cwAwaitKey struct {
	res   string
	start time.Time
}

type cwAwaitAcc struct {
	period          time.Duration
	ops, time       map[string]float64 // per "read"/"write": ops per second, busy seconds per second
	hasOps, hasTime map[string]bool
}

// cwPoint names one datapoint of one metric, to find the same datapoint
// given twice by two results.
type cwPoint struct {
	res, metric string
	t           int64
}

// cwRead is the state of one pass.
type cwRead struct {
	p          *pass
	sm         sampler
	top        time.Duration
	known      int
	names      []string
	awaits     map[cwAwaitKey]*cwAwaitAcc
	awaitOrder []cwAwaitKey
	seen       map[cwPoint]int // first pass: result index of each datapoint
}

func (cr *cwReader) read(p *pass) error {
	if !p.emit {
		if err := cr.prescan(p); err != nil {
			return err
		}
		if _, err := p.r.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("%s: cannot read it again from the start: %w", p.name, err)
		}
	}
	w, err := newJSONWalk(p, cwWant)
	if err != nil {
		return err
	}
	st := &cwRead{p: p, sm: sampler{p: p, host: p.opt.host(cr.host), source: monitor.SourceCloudWatch}, top: cr.top,
		awaits: map[cwAwaitKey]*cwAwaitAcc{}, seen: map[cwPoint]int{}}
	found, results := false, 0
	err = w.object("", cwWant, func(key string) error {
		if key != "MetricDataResults" {
			return w.skip(key)
		}
		found = true
		return w.array("MetricDataResults", `"MetricDataResults", the list of results`, func(int) error {
			i := results
			results++
			path := fmt.Sprintf("MetricDataResults[%d]", i)
			off := w.offset()
			var r cwResult
			if err := w.decode(path, &r); err != nil {
				return err
			}
			err := st.result(path, i, &r)
			if e, ok := err.(*Error); ok && e.Line == 0 && !p.emit {
				e.Line = p.lineOfValue(off)
			}
			return err
		})
	})
	if err != nil {
		return err
	}
	if err := w.end(); err != nil {
		return err
	}
	if !found {
		return w.missing("MetricDataResults")
	}
	if st.known == 0 && results > 0 {
		return p.fail(0, "MetricDataResults", "expected at least one known metric (VolumeReadOps, CPUUtilization, NetworkIn, ReadIOPS, ...) in a Label or Id, got %s", truncate(strings.Join(st.names, ", "), 200))
	}
	if p.emit {
		st.emitAwaits()
	}
	return nil
}

// prescan reads the top-level "Period" and "Host".
func (cr *cwReader) prescan(p *pass) error {
	w, err := newJSONWalk(p, cwWant)
	if err != nil {
		return err
	}
	return w.object("", cwWant, func(key string) error {
		switch key {
		case "Period":
			var v float64
			if err := w.decode("Period", &v); err != nil {
				return err
			}
			d, ok := secondsToDuration(v)
			if !ok {
				return w.fail("Period", "expected the period in seconds as a positive number, got %v", v)
			}
			cr.top = d
			return nil
		case "Host":
			return w.decode("Host", &cr.host)
		}
		return w.skip(key)
	})
}

func (st *cwRead) acc(res string, start time.Time, period time.Duration) *cwAwaitAcc {
	k := cwAwaitKey{res, start}
	a := st.awaits[k]
	if a == nil {
		a = &cwAwaitAcc{period: period, ops: map[string]float64{}, time: map[string]float64{},
			hasOps: map[string]bool{}, hasTime: map[string]bool{}}
		st.awaits[k] = a
		st.awaitOrder = append(st.awaitOrder, k)
	}
	return a
}

func (st *cwRead) result(path string, ri int, r *cwResult) error {
	p := st.p
	fail := func(path, format string, args ...any) error { return p.fail(0, path, format, args...) }
	switch r.StatusCode {
	case "", "Complete", "PartialData":
	default:
		return fail(path+".StatusCode", `expected "Complete" or "PartialData", got %q; CloudWatch returned no usable data for %s`, truncate(r.StatusCode, 40), cwName(*r))
	}
	if len(r.Timestamps) != len(r.Values) {
		return fail(path, "expected as many Values as Timestamps, got %d values for %d timestamps", len(r.Values), len(r.Timestamps))
	}
	key, ok := cwMetricName(*r)
	if !ok {
		if len(st.names) < 20 {
			st.names = append(st.names, cwName(*r))
		}
		return nil // a metric headroom has no use for (BurstBalance, ...)
	}
	m := cwMetrics[key]
	st.known++

	stat := cwStat(*r)
	want := "Average"
	if m.kind == cwSum || m.kind == cwIdle || m.kind == cwTime {
		want = "Sum"
	}
	if stat != "" && !strings.EqualFold(stat, want) && !(want == "Average" && strings.EqualFold(stat, "avg")) {
		return fail(path, "expected the %s statistic for %s, got %s", want, cwName(*r), truncate(stat, 40))
	}

	type point struct {
		t time.Time
		v float64
		i int
	}
	pts := make([]point, len(r.Timestamps))
	for i, ts := range r.Timestamps {
		t, err := time.Parse(time.RFC3339, ts)
		if err != nil {
			return fail(fmt.Sprintf("%s.Timestamps[%d]", path, i), `expected an RFC 3339 time like "2026-11-23T10:00:00+00:00", got %q`, truncate(ts, 40))
		}
		if msg := timeRangeMsg(t, ts); msg != "" {
			return fail(fmt.Sprintf("%s.Timestamps[%d]", path, i), "%s", msg)
		}
		if err := nonNegative(p, 0, fmt.Sprintf("%s.Values[%d]", path, i), "a value of "+cwName(*r), r.Values[i]); err != nil {
			return err
		}
		pts[i] = point{t, r.Values[i], i}
	}
	slices.SortStableFunc(pts, func(a, b point) int { return a.t.Compare(b.t) })
	// A datapoint given twice: the later one in the file is kept.
	kept := pts[:0]
	for _, pt := range pts {
		if n := len(kept); n > 0 && kept[n-1].t.Equal(pt.t) {
			p.warn(0, fmt.Sprintf("%s.Timestamps[%d]", path, pt.i), "%s has two datapoints at %s (Timestamps[%d] and [%d]); the later one, %v, was kept",
				cwName(*r), pt.t.Format(time.RFC3339), kept[n-1].i, pt.i, pt.v)
			kept[n-1] = pt
			continue
		}
		kept = append(kept, pt)
	}
	pts = kept

	period := st.top
	if r.Period != nil {
		d, ok := secondsToDuration(*r.Period)
		if !ok {
			return fail(path+".Period", "expected the period in seconds as a positive number, got %v", *r.Period)
		}
		period = d
	}
	if period == 0 {
		for i := 1; i < len(pts); i++ {
			if d := pts[i].t.Sub(pts[i-1].t); d > 0 && (period == 0 || d < period) {
				period = d
			}
		}
	}
	if period == 0 && len(pts) > 0 {
		return fail(path, `expected a "Period" (seconds) for %s, as its timestamps are too few to infer one, got none`, cwName(*r))
	}
	secs := period.Seconds()

	res := m.resource
	switch res {
	case "volume":
		res = monitor.ResourceVolumePrefix + cwVolume(*r)
	case "rds":
		res = monitor.ResourceVolumePrefix + "rds"
		if v := cwVolume(*r); v != "unnamed" {
			res = monitor.ResourceVolumePrefix + v
		}
	}
	if !p.emit {
		// Two results giving the same metric of the same resource at the
		// same time would store it twice.
		for _, pt := range pts {
			k := cwPoint{res, m.metric, pt.t.UnixNano()}
			if other, ok := st.seen[k]; ok {
				return fail(fmt.Sprintf("%s.Timestamps[%d]", path, pt.i), "expected each datapoint once, got %s at %s again, already given by MetricDataResults[%d]; keep one of the two results",
					cwName(*r), pt.t.Format(time.RFC3339), other)
			}
			st.seen[k] = ri
		}
		return nil
	}
	sm := &st.sm
	for _, pt := range pts {
		switch m.kind {
		case cwSum:
			sm.add(res, m.metric, pt.t, period, pt.v/secs)
			if m.metric == monitor.DiskReadOps || m.metric == monitor.DiskWriteOps {
				a := st.acc(res, pt.t, period)
				dir := map[string]string{monitor.DiskReadOps: "read", monitor.DiskWriteOps: "write"}[m.metric]
				a.ops[dir], a.hasOps[dir] = pt.v/secs, true
			}
		case cwAverage:
			sm.add(res, m.metric, pt.t, period, pt.v)
			if m.resource == "rds" && (m.metric == monitor.DiskReadOps || m.metric == monitor.DiskWriteOps) {
				a := st.acc(res, pt.t, period)
				dir := map[string]string{monitor.DiskReadOps: "read", monitor.DiskWriteOps: "write"}[m.metric]
				a.ops[dir], a.hasOps[dir] = pt.v, true
			}
		case cwIdle:
			u := 100 * (1 - pt.v/secs)
			sm.add(res, m.metric, pt.t, period, min(100, max(0, u)))
		case cwTime:
			a := st.acc(res, pt.t, period)
			a.time[m.metric], a.hasTime[m.metric] = pt.v/secs, true
		case cwLatency:
			// Latency × IOPS = busy seconds per second; IOPS arrive in
			// another result, so keep latency and multiply below.
			a := st.acc(res, pt.t, period)
			a.time[m.metric+"-latency"], a.hasTime[m.metric+"-latency"] = pt.v, true
		}
	}
	return nil
}

// emitAwaits adds await_ms from per-op times, where both ops and times
// are known.
func (st *cwRead) emitAwaits() {
	slices.SortStableFunc(st.awaitOrder, func(a, b cwAwaitKey) int {
		return cmp.Or(a.start.Compare(b.start), strings.Compare(a.res, b.res))
	})
	for _, k := range st.awaitOrder {
		a := st.awaits[k]
		var ops, busy float64
		used := false
		for _, dir := range []string{"read", "write"} {
			if !a.hasOps[dir] {
				continue
			}
			switch {
			case a.hasTime[dir]:
				busy += a.time[dir]
			case a.hasTime[dir+"-latency"]:
				busy += a.time[dir+"-latency"] * a.ops[dir]
			default:
				continue
			}
			ops += a.ops[dir]
			used = true
		}
		if used && ops > 0 {
			st.sm.add(k.res, monitor.DiskAwaitMs, k.start, a.period, busy/ops*1000)
		}
	}
}

func cwName(r cwResult) string {
	if r.Label != "" {
		return fmt.Sprintf("%q", truncate(r.Label, 60))
	}
	return fmt.Sprintf("Id %q", truncate(r.ID, 60))
}

// cwMetricName finds the CloudWatch metric a result holds.
func cwMetricName(r cwResult) (string, bool) {
	for _, s := range []string{r.Label, r.ID} {
		low := strings.ToLower(s)
		best := ""
		for k := range cwMetrics {
			if strings.Contains(low, k) && (len(k) > len(best) || len(k) == len(best) && k < best) {
				best = k
			}
		}
		if best != "" {
			return best, true
		}
	}
	id := strings.ToLower(r.ID)
	best := ""
	for alias := range cwAliases {
		if (id == alias || strings.HasSuffix(id, "_"+alias)) && (len(alias) > len(best) || len(alias) == len(best) && alias < best) {
			best = alias
		}
	}
	if best != "" {
		return cwAliases[best], true
	}
	return "", false
}

// cwStat returns the statistic of a result: its "Stat" field, else a
// statistic word in its Label or Id, else "".
func cwStat(r cwResult) string {
	if r.Stat != "" {
		return r.Stat
	}
	for _, s := range []string{r.Label, r.ID} {
		for w := range strings.FieldsFuncSeq(s, func(c rune) bool { return c == ' ' || c == '_' || c == '-' || c == '.' || c == ':' || c == '/' }) {
			if cwStatWord.MatchString(w) {
				return w
			}
		}
	}
	return ""
}

// cwVolume returns the EBS volume a result names, or "unnamed".
func cwVolume(r cwResult) string {
	if v := cwVolLabel.FindString(r.Label); v != "" {
		return v
	}
	if m := cwVolID.FindStringSubmatch(r.ID); m != nil {
		return "vol-" + m[1]
	}
	return "unnamed"
}
