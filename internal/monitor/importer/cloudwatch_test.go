package importer

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// testdata/cloudwatch.json is hand-written in the documented format: a
// get-metric-data result (timestamps newest first, as AWS returns them)
// with the top-level "Period" and "Host" extensions.
func TestCloudWatch(t *testing.T) {
	s := mustParse(t, FormatCloudWatch, "cloudwatch.json", Options{})
	checkCommon(t, s, monitor.SourceCloudWatch, "db-primary")

	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	t1, t2 := t0.Add(time.Minute), t0.Add(2*time.Minute)
	vol := "volume:vol-0abc123"
	r := at(t, s, vol, monitor.DiskReadOps, t0)
	if r.Value != 10 || r.Period != time.Minute {
		t.Fatalf("VolumeReadOps Sum 600 over 60 s = %+v, want 10/s with Period 1m", r)
	}
	wantNear(t, "read ops t2", at(t, s, vol, monitor.DiskReadOps, t2).Value, 20, 0)
	wantNear(t, "write ops t1", at(t, s, vol, monitor.DiskWriteOps, t1).Value, 30, 0)
	wantNear(t, "idle 15 s of 60", at(t, s, vol, monitor.DiskUtilPct, t2).Value, 75, 0)
	wantNear(t, "queue", at(t, s, vol, monitor.DiskQueueLength, t2).Value, 2.5, 0)
	// (0.6 s + 3.6 s) / (600 + 1800) ops.
	wantNear(t, "await t1", at(t, s, vol, monitor.DiskAwaitMs, t1).Value, 1.75, 1e-12)
	wantNear(t, "await t0", at(t, s, vol, monitor.DiskAwaitMs, t0).Value, 1, 1e-12)
	wantNear(t, "cpu", at(t, s, "cpu", monitor.CPUUtilPct, t1).Value, 42.25, 0)
	wantNear(t, "net in", at(t, s, "net:all", monitor.NetRxBytes, t2).Value, 1e5, 0)

	// Per-result Period 300 overrides the top-level 60; volume from the Id.
	wb := at(t, s, "volume:vol-0def456", monitor.DiskWriteBytes, t0)
	if wb.Value != 10240 || wb.Period != 5*time.Minute {
		t.Fatalf("VolumeWriteBytes = %+v, want 10240/s over 5m", wb)
	}
	// BurstBalance is not a headroom metric and is skipped.
	if want := 3*(4+1+1+1) + 1; len(s) != want { // 4 volume metrics, await, cpu, net; 1 write-bytes
		t.Errorf("got %d samples, want %d", len(s), want)
	}
	// Options.Host wins over the file's Host.
	s = mustParse(t, FormatCloudWatch, "cloudwatch.json", Options{Host: "x"})
	checkCommon(t, s, monitor.SourceCloudWatch, "x")
}

// Plain AWS CLI output, no extensions: the period comes from the
// smallest timestamp spacing (a missing minute does not double it).
func TestCloudWatchInferredPeriod(t *testing.T) {
	data := `{"MetricDataResults": [{"Id": "m1", "Label": "VolumeWriteOps",
		"Timestamps": ["2026-11-23T10:05:00Z", "2026-11-23T10:01:00Z", "2026-11-23T10:00:00Z"],
		"Values": [120, 60, 6], "StatusCode": "Complete"}], "Messages": []}`
	s, err := Parse(FormatCloudWatch, "cw.json", []byte(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkCommon(t, s, monitor.SourceCloudWatch, DefaultHost)
	w := pick(s, "volume:unnamed", monitor.DiskWriteOps)
	if len(w) != 3 || w[0].Period != time.Minute || w[0].Value != 0.1 || w[2].Value != 2 ||
		!w[2].Start.Equal(time.Date(2026, 11, 23, 10, 5, 0, 0, time.UTC)) {
		t.Fatalf("samples = %+v", w)
	}
}

func TestCloudWatchMetricNames(t *testing.T) {
	for _, tc := range []struct{ id, label, metric, volume string }{
		{"vol_0abc_read_ops", "", "volumereadops", "vol-0abc"},
		{"m1", "vol-99 VolumeWriteBytes", "volumewritebytes", "vol-99"},
		{"vol_1_VolumeQueueLength", "", "volumequeuelength", "vol-1"},
		{"x", "NetworkPacketsIn", "networkpacketsin", "unnamed"},
		{"cpu", "", "cpuutilization", "unnamed"},
	} {
		r := cwResult{ID: tc.id, Label: tc.label}
		m, ok := cwMetricName(r)
		if !ok || m != tc.metric || cwVolume(r) != tc.volume {
			t.Errorf("%q/%q: metric %q volume %q, want %q %q", tc.id, tc.label, m, cwVolume(r), tc.metric, tc.volume)
		}
	}
}

func TestCloudWatchErrors(t *testing.T) {
	res := func(extra string) string {
		return `{"MetricDataResults": [{"Id": "a", "Label": "VolumeReadOps", ` + extra + `}]}`
	}
	for _, tc := range []struct{ name, data, want string }{
		{"sar", "# hostname;interval;timestamp;CPU\n", `cw.json:1: expected aws cloudwatch get-metric-data JSON (a "MetricDataResults" array), got sadf -d (sar) CSV output`},
		{"iostat", `{"sysstat": {"hosts": []}}`, `cw.json:1: expected aws cloudwatch get-metric-data JSON (a "MetricDataResults" array), got iostat JSON output`},
		{"one point", res(`"Timestamps": ["2026-11-23T10:00:00Z"], "Values": [1]`), `cw.json:1: MetricDataResults[0]: expected a "Period" (seconds) for "VolumeReadOps"`},
		{"lengths", res(`"Timestamps": ["2026-11-23T10:00:00Z"], "Values": [1, 2]`), `MetricDataResults[0]: expected as many Values as Timestamps, got 2 values for 1 timestamps`},
		{"stat", res(`"Stat": "Average", "Period": 60, "Timestamps": [], "Values": []`), `MetricDataResults[0]: expected the Sum statistic for "VolumeReadOps", got Average`},
		{"stat in label", `{"MetricDataResults": [{"Id": "a", "Label": "CPUUtilization Maximum", "Timestamps": [], "Values": []}]}`, `expected the Average statistic for "CPUUtilization Maximum", got Maximum`},
		{"time", res(`"Period": 60, "Timestamps": ["10:00"], "Values": [1]`), `MetricDataResults[0].Timestamps[0]: expected an RFC 3339 time`},
		{"status", res(`"StatusCode": "Forbidden", "Timestamps": [], "Values": []`), `MetricDataResults[0].StatusCode: expected "Complete" or "PartialData", got "Forbidden"`},
		{"unknown", `{"MetricDataResults": [{"Id": "a", "Label": "Foo", "Timestamps": [], "Values": []}]}`, `expected at least one known metric`},
		{"period", `{"Period": -5, "MetricDataResults": []}`, `cw.json:1: Period: expected the period in seconds as a positive number, got -5`},
		{"type", "{\"MetricDataResults\": [{\"Values\":\n [\"1\"]}]}", `cw.json:2: MetricDataResults[0].Values: expected a number here in CloudWatch get-metric-data JSON, got a JSON string`},
	} {
		_, err := Parse(FormatCloudWatch, "cw.json", []byte(tc.data), Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}
