package importer

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// shrink keeps the lines of a large node_exporter file that the importer
// uses, so that the fuzzer mutates a few kilobytes rather than 115.
func shrink(data []byte) []byte {
	if len(data) < 16<<10 {
		return data
	}
	var out []byte
	for line := range bytes.Lines(data) {
		for _, p := range []string{ScrapeMarker, "node_cpu_seconds_total{cpu=\"0\"", "node_disk_", "node_memory_Mem", "node_memory_Cached", "node_network_receive_bytes", "node_uname"} {
			if bytes.HasPrefix(line, []byte(p)) {
				out = append(out, line...)
				break
			}
		}
	}
	return out
}

// fuzzParse seeds a fuzz target with the real files of format f and
// checks that Parse neither panics nor returns nonsense samples.
func fuzzParse(f *testing.F, format Format, seeds ...string) {
	for file, ff := range testFiles {
		if ff == format {
			f.Add(shrink(readTestdata(f, file)))
		}
	}
	for _, s := range append(seeds, hardeningSeeds[format]...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		Detect(data)
		opt := Options{Location: time.UTC, Time: time.Unix(1795429370, 0), Interval: time.Second}
		// An input that fails reaches the sink with nothing.
		calls := 0
		_, rerr := Read(format, "fuzz", bytes.NewReader(data), opt, func([]monitor.Sample) error { calls++; return nil })
		if rerr != nil && calls > 0 {
			t.Fatalf("error %v after %d batches reached the sink", rerr, calls)
		}
		s, err := Parse(format, "fuzz", data, opt)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %v is %T, want *Error", err, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		for _, x := range s {
			if x.Start.Before(minTime.Add(-366*24*time.Hour)) || x.Start.After(maxTime) {
				t.Fatalf("sample %+v outside the years a results store can hold", x)
			}
		}
		if len(s) > 0 {
			checkCommon(t, s, string(format), "")
		}
	})
}

func FuzzParseIostat(f *testing.F) {
	fuzzParse(f, FormatIostat,
		`{"sysstat": {"hosts": [{"statistics": [{}, {"disk": [{"disk_device": "a", "r/s": 1, "w/s": 0, "r_await": 1, "w_await": 1}], "avg-cpu": {"idle": 1e308, "iowait": -1e308}}]}]}}`,
		`{"sysstat": {"hosts": [{"statistics": [{"timestamp": "2026-11-23T10:00:00Z"}, {"timestamp": "2026-11-23T10:00:00Z"}]}]}}`)
}

func FuzzParseSar(f *testing.F) {
	fuzzParse(f, FormatSar,
		"# hostname;interval;timestamp;DEV;tps;await\nh;1e-300;0;x;1e308;NaN\n",
		"# hostname;interval;timestamp;CPU;%idle\nh;1;2026-11-23 10:00:00 UTC;-1;Inf\n")
}

func FuzzParseCloudWatch(f *testing.F) {
	fuzzParse(f, FormatCloudWatch,
		`{"Period": 1e-9, "MetricDataResults": [{"Label": "VolumeIdleTime", "Timestamps": ["2026-11-23T10:00:00Z"], "Values": [1e308]}]}`,
		`{"MetricDataResults": [{"Id": "vol_1_read_ops", "Timestamps": ["2026-11-23T10:00:00Z", "2026-11-23T10:00:00.000000001Z"], "Values": [1, 2]}]}`)
}

func FuzzParsePrometheus(f *testing.F) {
	fuzzParse(f, FormatPrometheus,
		"node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} NaN 1\nnode_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} +Inf 2\n",
		"# headroom-scrape-time: 1\nnode_disk_io_time_seconds_total{device=\"a\"} 0\n# headroom-scrape-time: 2\nnode_disk_io_time_seconds_total{device=\"a\"} 1e308\n",
		"a{b=\"\\\n")
}
