package importer

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// testdata/iostat.json: `iostat -x -t -o JSON 1 3` in the C locale on a
// UTC machine while dd wrote to vda with O_DIRECT.
func TestIostat(t *testing.T) {
	s := mustParse(t, FormatIostat, "iostat.json", Options{Location: time.UTC})
	checkCommon(t, s, monitor.SourceIostat, "vm")

	// The since-boot report (10:22:11) is dropped: two 1 s intervals remain.
	t0 := time.Date(2026, 11, 23, 10, 22, 11, 0, time.UTC)
	t1 := t0.Add(time.Second)
	w := pick(s, "disk:vda", monitor.DiskWriteOps)
	if len(w) != 2 || !w[0].Start.Equal(t0) || !w[1].Start.Equal(t1) {
		t.Fatalf("write ops samples = %+v, want intervals starting %s and %s", w, t0, t1)
	}
	for _, x := range w {
		if x.Value < 1000 || x.Period != time.Second {
			t.Errorf("vda write_ops_per_s = %v over %v, want > 1000 (dd was writing) over 1s", x.Value, x.Period)
		}
	}
	// Values of the report printed at 10:22:12.
	wantNear(t, "write_ops_per_s", at(t, s, "disk:vda", monitor.DiskWriteOps, t0).Value, 10048, 0)
	wantNear(t, "read_ops_per_s", at(t, s, "disk:vda", monitor.DiskReadOps, t0).Value, 5, 0)
	wantNear(t, "ops_per_s", at(t, s, "disk:vda", DiskOps, t0).Value, 5+10048+1, 1e-9)
	wantNear(t, "write_bytes_per_s", at(t, s, "disk:vda", monitor.DiskWriteBytes, t0).Value, 643072*1024, 0)
	wantNear(t, "read_bytes_per_s", at(t, s, "disk:vda", monitor.DiskReadBytes, t0).Value, 20*1024, 0)
	wantNear(t, "await_ms", at(t, s, "disk:vda", monitor.DiskAwaitMs, t0).Value, (5*0.20+10048*0.08)/(5+10048), 1e-12)
	wantNear(t, "queue_length", at(t, s, "disk:vda", monitor.DiskQueueLength, t0).Value, 0.81, 0)
	wantNear(t, "util_pct", at(t, s, "disk:vda", monitor.DiskUtilPct, t0).Value, 84.40, 0)

	checkCPU(t, s, monitor.ResourceCPU, 0.1)
	wantNear(t, "cpu util_pct", at(t, s, "cpu", monitor.CPUUtilPct, t0).Value, 100-51.60-31.38, 1e-9)
	wantNear(t, "cpu iowait_pct", at(t, s, "cpu", monitor.CPUIowaitPct, t1).Value, 33.33, 0)
}

// testdata/iostat-iso.json: the same with S_TIME_FORMAT=ISO, so the
// timestamps carry their offset and Location does not matter.
func TestIostatISO(t *testing.T) {
	s := mustParse(t, FormatIostat, "iostat-iso.json", Options{Location: time.FixedZone("X", 5*3600)})
	w := pick(s, "disk:vda", monitor.DiskWriteOps)
	want := time.Date(2026, 11, 23, 10, 22, 13, 0, time.UTC)
	if len(w) != 2 || !w[0].Start.Equal(want) || w[0].Value < 1000 {
		t.Fatalf("write ops = %+v, want 2 busy intervals from %s", w, want)
	}
	checkCPU(t, s, monitor.ResourceCPU, 0.1)
}

// Local times are read in Options.Location.
func TestIostatLocation(t *testing.T) {
	zone := time.FixedZone("CET", 3600)
	s := mustParse(t, FormatIostat, "iostat.json", Options{Location: zone})
	want := time.Date(2026, 11, 23, 10, 22, 11, 0, zone)
	if got := s[0].Start; !got.Equal(want) {
		t.Fatalf("first start = %s, want %s", got, want)
	}
}

func TestIostatNoSinceBootAndHost(t *testing.T) {
	s := mustParse(t, FormatIostat, "iostat.json", Options{Location: time.UTC, IostatNoSinceBoot: true, Host: "db1"})
	checkCommon(t, s, monitor.SourceIostat, "db1")
	if w := pick(s, "disk:vda", monitor.DiskWriteOps); len(w) != 3 {
		t.Fatalf("with -y, got %d intervals, want 3", len(w))
	}
}

// testdata/iostat-notime.json: recorded without -t.
func TestIostatWithoutTimestamps(t *testing.T) {
	data := readTestdata(t, "iostat-notime.json")
	_, err := Parse(FormatIostat, "iostat-notime.json", data, Options{})
	if err == nil || !strings.Contains(err.Error(), "iostat -t") {
		t.Fatalf("err = %v, want advice to record with iostat -t", err)
	}
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	s, err := Parse(FormatIostat, "iostat-notime.json", data, Options{Time: start, Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w := pick(s, "disk:vda", monitor.DiskWriteOps)
	if len(w) != 2 || !w[0].Start.Equal(start) || !w[1].Start.Equal(start.Add(time.Second)) || w[0].Value <= 0 {
		t.Fatalf("write ops = %+v", w)
	}
}

func TestIostatErrors(t *testing.T) {
	one := `{"sysstat": {"hosts": [{"nodename": "h", "statistics": [
		{"timestamp": "2026-11-23T10:22:13+0000", "avg-cpu": {"user": 1, "idle": 99}, "disk": []}]}]}}`
	for _, tc := range []struct{ name, data, want string }{
		{"csv", "a,b,c\n1,2,3\n", `iostat.json:1: expected iostat -x -o JSON output (a "sysstat" object), got a CSV line`},
		{"other json", `{"foo": 1}`, `iostat.json:1: expected iostat -x -o JSON output (a "sysstat" object), got JSON of another shape`},
		{"syntax", "{\"sysstat\": {\n\"hosts\": [,]}}", `iostat.json:2: expected iostat -x -o JSON output (a "sysstat" object), got malformed JSON`},
		{"type", "{\"sysstat\": {\"hosts\": [{\"nodename\": \"h\",\n \"statistics\": [{\"avg-cpu\": {\"user\": \"x\"}}]}]}}", `iostat.json:2: sysstat.hosts[0].statistics[0].avg-cpu: expected a number here in iostat -x -o JSON output, got a JSON string`},
		{"time", strings.Replace(one, "2026-11-23T10:22:13+0000", "yesterday", 1), `sysstat.hosts[0].statistics[0].timestamp: expected a time like`},
		{"one report", one, `expected at least two iostat reports`},
		{"device", `{"sysstat": {"hosts": [{"statistics": [{"timestamp": "2026-11-23T10:22:13+0000"}, {"timestamp": "2026-11-23T10:22:14+0000", "disk": [{"r/s": 1}]}]}]}}`, `sysstat.hosts[0].statistics[1].disk[0].disk_device: expected the device name`},
	} {
		_, err := Parse(FormatIostat, "iostat.json", []byte(tc.data), Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

// Day-first local timestamps across midnight keep one reading for the whole
// file (review finding: each timestamp was read month-first when it could
// be, so 12/11 and 13/11 landed a month apart).
func TestIostatLayoutIsChosenPerFile(t *testing.T) {
	texts := []string{"12/11/26 23:59:58", "12/11/26 23:59:59", "13/11/26 00:00:00"}
	l := iostatLayout(texts, time.UTC)
	var got []time.Time
	for _, s := range texts {
		tm, err := parseIostatTime(s, l, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tm)
	}
	if got[0].Month() != time.November || got[2].Sub(got[1]) != time.Second {
		t.Fatalf("times %v with layout %q", got, l)
	}
}
