package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
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

type iostatDoc struct {
	Sysstat *struct {
		Hosts []iostatHost `json:"hosts"`
	} `json:"sysstat"`
}

type iostatHost struct {
	Nodename   string       `json:"nodename"`
	Statistics []iostatStat `json:"statistics"`
}

type iostatStat struct {
	Timestamp *string                      `json:"timestamp"`
	AvgCPU    map[string]float64           `json:"avg-cpu"`
	Disk      []map[string]json.RawMessage `json:"disk"`
}

const iostatWant = `iostat -x -o JSON output (a "sysstat" object)`

func parseIostat(name string, data []byte, opt Options) ([]monitor.Sample, error) {
	var doc iostatDoc
	if err := decodeJSON(name, data, FormatIostat, iostatWant, &doc); err != nil {
		return nil, err
	}
	if doc.Sysstat == nil {
		return nil, &Error{Name: name, Line: 1, Format: FormatIostat,
			Msg: "expected " + iostatWant + ", got " + describe(data)}
	}
	if len(doc.Sysstat.Hosts) == 0 {
		return nil, &Error{Name: name, Path: "sysstat.hosts", Format: FormatIostat,
			Msg: "expected at least one host in iostat JSON output, got none"}
	}
	var out []monitor.Sample
	for hi, h := range doc.Sysstat.Hosts {
		path := fmt.Sprintf("sysstat.hosts[%d]", hi)
		s, err := iostatHostSamples(name, path, h, opt)
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
	}
	return out, nil
}

func iostatHostSamples(name, path string, h iostatHost, opt Options) ([]monitor.Sample, error) {
	fail := func(p, format string, args ...any) error {
		return &Error{Name: name, Path: p, Format: FormatIostat, Msg: fmt.Sprintf(format, args...)}
	}
	stats := h.Statistics
	if len(stats) == 0 {
		return nil, fail(path+".statistics", "expected at least one iostat report, got none")
	}

	// Report end times. One layout serves the whole file: a locale's
	// "01/02/06" is ambiguous per timestamp (month or day first), but only
	// one reading keeps a file's reports in order.
	var texts []string
	for _, st := range stats {
		if st.Timestamp != nil {
			texts = append(texts, *st.Timestamp)
		}
	}
	layout := iostatLayout(texts, opt.location())
	ends := make([]time.Time, len(stats))
	withTS := 0
	for i, st := range stats {
		if st.Timestamp == nil {
			continue
		}
		withTS++
		t, err := parseIostatTime(*st.Timestamp, layout, opt.location())
		if err != nil {
			return nil, fail(fmt.Sprintf("%s.statistics[%d].timestamp", path, i),
				`expected a time like "2026-11-23T10:22:13+0000" (S_TIME_FORMAT=ISO) or "11/23/26 10:22:11", got %q`, *st.Timestamp)
		}
		ends[i] = t
	}
	var period time.Duration
	switch {
	case withTS == 0:
		if opt.Time.IsZero() || opt.Interval <= 0 {
			return nil, fail(path+".statistics[0]",
				"expected report timestamps (record with iostat -t), or a start time and interval given in the import options, got neither")
		}
		period = opt.Interval
		for i := range ends {
			ends[i] = opt.Time.Add(time.Duration(i) * period)
		}
	case withTS < len(stats):
		for i, st := range stats {
			if st.Timestamp == nil {
				return nil, fail(fmt.Sprintf("%s.statistics[%d]", path, i),
					"expected a timestamp in every report, as in the other reports of this host, got none")
			}
		}
	default:
		var gaps []time.Duration
		for i := 1; i < len(ends); i++ {
			gaps = append(gaps, ends[i].Sub(ends[i-1]))
		}
		period = medianDuration(gaps)
		if period == 0 {
			period = opt.Interval
		}
	}

	first := 1
	if opt.IostatNoSinceBoot {
		first = 0
	}
	if len(stats) <= first {
		return nil, fail(path+".statistics",
			"expected at least two iostat reports (the first one covers the time since boot), got one; record with iostat -x -t -o JSON <interval> <count≥2>, or say that iostat ran with -y")
	}
	if period <= 0 {
		return nil, fail(path+".statistics",
			"expected reports at distinct times or an interval given in the import options, got no way to tell the interval")
	}

	sm := sampler{host: opt.host(h.Nodename), source: monitor.SourceIostat}
	for i := first; i < len(stats); i++ {
		st := stats[i]
		start := ends[i].Add(-period)
		if c := st.AvgCPU; c != nil {
			iostatCPU(&sm, c, start, period)
		}
		for di, d := range st.Disk {
			p := fmt.Sprintf("%s.statistics[%d].disk[%d]", path, i, di)
			if err := iostatDisk(&sm, name, p, d, start, period); err != nil {
				return nil, err
			}
		}
	}
	return sm.out, nil
}

func iostatCPU(sm *sampler, c map[string]float64, start time.Time, period time.Duration) {
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
		sm.add(cpu, monitor.CPUUtilPct, start, period, 100-idle-iowait)
	}
}

func iostatDisk(sm *sampler, name, path string, d map[string]json.RawMessage, start time.Time, period time.Duration) error {
	var dev string
	raw, ok := d["disk_device"]
	if !ok || json.Unmarshal(raw, &dev) != nil || dev == "" {
		return &Error{Name: name, Path: path + ".disk_device", Format: FormatIostat,
			Msg: "expected the device name as a string, got " + describeRaw(raw)}
	}
	num := func(keys ...string) (float64, bool, error) {
		for _, k := range keys {
			raw, ok := d[k]
			if !ok {
				continue
			}
			var v float64
			if err := json.Unmarshal(raw, &v); err != nil {
				return 0, false, &Error{Name: name, Path: path + "." + k, Format: FormatIostat,
					Msg: "expected a number, got " + describeRaw(raw)}
			}
			return v, true, nil
		}
		return 0, false, nil
	}
	res := monitor.ResourceDiskPrefix + dev
	var vals [10]float64
	var have [10]bool
	keys := [][]string{
		{"r/s"}, {"w/s"}, {"d/s"}, {"rkB/s"}, {"wkB/s"},
		{"r_await"}, {"w_await"}, {"aqu-sz", "avgqu-sz"}, {"util", "%util"}, {"await"},
	}
	for i, k := range keys {
		v, ok, err := num(k...)
		if err != nil {
			return err
		}
		vals[i], have[i] = v, ok
	}
	const (
		rs = iota
		ws
		ds
		rkB
		wkB
		rAwait
		wAwait
		aqu
		util
		await
	)
	if have[rs] {
		sm.add(res, monitor.DiskReadOps, start, period, vals[rs])
	}
	if have[ws] {
		sm.add(res, monitor.DiskWriteOps, start, period, vals[ws])
	}
	if have[rs] && have[ws] {
		sm.add(res, DiskOps, start, period, vals[rs]+vals[ws]+vals[ds])
	}
	if have[rkB] {
		sm.add(res, monitor.DiskReadBytes, start, period, vals[rkB]*1024)
	}
	if have[wkB] {
		sm.add(res, monitor.DiskWriteBytes, start, period, vals[wkB]*1024)
	}
	switch ops := vals[rs] + vals[ws]; {
	case have[rAwait] && have[wAwait] && ops > 0:
		sm.add(res, monitor.DiskAwaitMs, start, period, (vals[rs]*vals[rAwait]+vals[ws]*vals[wAwait])/ops)
	case have[await] && !have[rAwait] && ops > 0:
		sm.add(res, monitor.DiskAwaitMs, start, period, vals[await])
	}
	if have[aqu] {
		sm.add(res, monitor.DiskQueueLength, start, period, vals[aqu])
	}
	if have[util] {
		sm.add(res, monitor.DiskUtilPct, start, period, vals[util])
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

func parseIostatTime(s, layout string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, l := range []string{"2006-01-02T15:04:05-0700", time.RFC3339} {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
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

// decodeJSON unmarshals data into v, turning the decoder's errors into
// *Error with a line and, for type mismatches, a JSON path.
func decodeJSON(name string, data []byte, f Format, want string, v any) error {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return &Error{Name: name, Line: lineOf(data, int64(len(data)-len(trimmed))), Format: f,
			Msg: "expected " + want + ", got " + describe(data)}
	}
	err := json.Unmarshal(data, v)
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &syn):
		return &Error{Name: name, Line: lineOf(data, syn.Offset), Format: f,
			Msg: "expected " + want + ", got malformed JSON (" + syn.Error() + ")"}
	case errors.As(err, &typ):
		return &Error{Name: name, Line: lineOf(data, typ.Offset), Path: typ.Field, Format: f,
			Msg: fmt.Sprintf("expected %s here in %s, got a JSON %s", jsonKind(typ.Type), formatTitle(f), typ.Value)}
	default:
		return &Error{Name: name, Format: f, Msg: "expected " + want + ", got JSON that does not fit (" + err.Error() + ")"}
	}
}

func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "a " + t.String()
}

func describeRaw(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	return truncate(string(raw), 40)
}
