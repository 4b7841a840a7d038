package importer

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// Inputs a skeptical user fed the importers (issue 15). Each was accepted
// without a word, or answered with a wrong or self-contradicting
// message; the fuzz targets start from them too.
var (
	cwYear1 = `{"Period": 60, "MetricDataResults": [{"Label": "vol-1 VolumeReadOps", "Stat": "Sum",
 "Timestamps": ["2026-11-23T10:00:00Z", "0001-01-01T00:00:00Z"], "Values": [60, 120]}]}`
	cwYear9999 = `{"Period": 60, "MetricDataResults": [{"Label": "vol-1 VolumeReadOps", "Stat": "Sum",
 "Timestamps": ["9999-12-31T23:59:00Z"], "Values": [60]}]}`
	cwNegative = `{"Period": 60, "MetricDataResults": [{"Label": "vol-1 VolumeWriteOps", "Stat": "Sum",
 "Timestamps": ["2026-11-23T10:00:00Z", "2026-11-23T10:01:00Z"], "Values": [60, -600]}]}`
	cwRepeated = `{"Period": 60, "MetricDataResults": [{"Label": "vol-1 VolumeReadOps", "Stat": "Sum",
 "Timestamps": ["2026-11-23T10:00:00Z", "2026-11-23T10:01:00Z", "2026-11-23T10:00:00Z"], "Values": [60, 120, 600]}]}`
	cwTwice = `{"Period": 60, "MetricDataResults": [
 {"Label": "vol-1 VolumeReadOps", "Stat": "Sum", "Timestamps": ["2026-11-23T10:00:00Z"], "Values": [60]},
 {"Label": "vol-1 VolumeReadOps", "Stat": "Sum", "Timestamps": ["2026-11-23T10:00:00Z"], "Values": [70]}]}`
	cwNull   = `{"MetricDataResults": null}`
	cwNested = `{"Response": {"MetricDataResults": []}}`

	iostatNegative = `{"sysstat": {"hosts": [{"nodename": "h", "statistics": [
 {"timestamp": "2026-11-23T10:22:12+0000", "disk": [{"disk_device": "vda", "r/s": 1, "w/s": 1}]},
 {"timestamp": "2026-11-23T10:22:13+0000", "disk": [{"disk_device": "vda", "r/s": -5, "w/s": 1}]}]}]}}`
	iostatRepeated = `{"sysstat": {"hosts": [{"nodename": "h", "statistics": [
 {"timestamp": "2026-11-23T10:22:11+0000", "disk": [{"disk_device": "vda", "r/s": 1, "w/s": 1}]},
 {"timestamp": "2026-11-23T10:22:12+0000", "disk": [{"disk_device": "vda", "r/s": 2, "w/s": 1}]},
 {"timestamp": "2026-11-23T10:22:12+0000", "disk": [{"disk_device": "vda", "r/s": 3, "w/s": 1}]},
 {"timestamp": "2026-11-23T10:22:13+0000", "disk": [{"disk_device": "vda", "r/s": 4, "w/s": 1}]}]}]}}`
	iostatBackwards = `{"sysstat": {"hosts": [{"nodename": "h", "statistics": [
 {"timestamp": "2026-11-23T10:22:11+0000"}, {"timestamp": "2026-11-23T10:22:12+0000"},
 {"timestamp": "2026-11-23T10:00:00+0000"}]}]}}`
	iostatTwoHosts = `{"sysstat": {"hosts": [
 {"nodename": "db1", "statistics": [{"timestamp": "2026-11-23T10:22:11+0000"},
  {"timestamp": "2026-11-23T10:22:12+0000", "avg-cpu": {"user": 10, "idle": 90}}]},
 {"statistics": [{"timestamp": "2026-11-23T10:22:11+0000"},
  {"timestamp": "2026-11-23T10:22:12+0000", "avg-cpu": {"user": 20, "idle": 80}}], "nodename": "db2"}]}}`
	iostatLateError = `{"sysstat": {"hosts": [{"nodename": "h", "statistics": [
 {"timestamp": "2026-11-23T10:22:11+0000"}, {"timestamp": "2026-11-23T10:22:12+0000", "avg-cpu": {"idle": 90}},
 {"timestamp": "2026-11-23T10:22:13+0000", "avg-cpu": {"idle": 90}}, {"timestamp": "yesterday"}]}]}}`

	sarHdr      = "# hostname;interval;timestamp;DEV;tps;rkB/s;wkB/s;areq-sz;aqu-sz;await;%util\n"
	sarNegative = sarHdr + "vm;1;2026-11-23 10:22:45 UTC;vda;-3.0;0;0;0;0;0;0\n"
	sarRepeated = sarHdr + "vm;1;2026-11-23 10:22:45 UTC;vda;3.0;0;0;0;0;0;0\nvm;1;2026-11-23 10:22:46 UTC;vda;3.0;0;0;0;0;0;0\n" +
		sarHdr + "vm;1;2026-11-23 10:22:45 UTC;vda;3.0;0;0;0;0;0;0\n"
	sarCut      = sarHdr + "vm;1;2026-11-23 10:22:45 UTC;vda;3.0;0;0;0;0;0;0\nvm;1;2026-11-23 10:22:46 UTC;vda;3.0;0;0;0;0;0;4"
	sarTwoHosts = "# hostname;interval;timestamp;CPU;%user;%nice;%system;%iowait;%steal;%idle\n" +
		"db1;1;2026-11-23 10:22:45 UTC;-1;10;0;5;0;0;85\ndb2;1;2026-11-23 10:22:45 UTC;-1;20;0;5;0;0;75\n"
	sarYear = sarHdr + "vm;1;99999999999;vda;3.0;0;0;0;0;0;0\n"

	promM        = "# headroom-scrape-time: "
	promCut      = promM + "1795429370000\nnode_disk_reads_completed_total{device=\"vda\"} 1200\n" + promM + "1795429380000\nnode_disk_reads_completed_total{device=\"vda\"} 1"
	promCutLabel = promM + "1795429370000\nnode_disk_reads_completed_total{device=\"vda\"} 1200\n" + promM + "1795429380000\nnode_disk_reads_completed_total{devi"
	promNegative = promM + "1795429370000\nnode_disk_reads_completed_total{device=\"vda\"} 1200\n" + promM + "1795429380000\nnode_disk_reads_completed_total{device=\"vda\"} -1300\n"
	promSameTime = promM + "1795429370000\nnode_disk_reads_completed_total{device=\"vda\"} 1200\n" + promM + "1795429370000\nnode_disk_reads_completed_total{device=\"vda\"} 1300\n"
	promYear     = promM + "99999999999999\nnode_disk_reads_completed_total{device=\"vda\"} 1200\n"
)

// hardeningSeeds are the inputs above by format, for the fuzz targets.
var hardeningSeeds = map[Format][]string{
	FormatCloudWatch: {cwYear1, cwYear9999, cwNegative, cwRepeated, cwTwice, cwNull, cwNested, "", " \n"},
	FormatIostat:     {iostatNegative, iostatRepeated, iostatBackwards, iostatTwoHosts, iostatLateError, ""},
	FormatSar:        {sarNegative, sarRepeated, sarCut, sarTwoHosts, sarYear, ""},
	FormatPrometheus: {promCut, promCutLabel, promNegative, promSameTime, promYear, "\n\n"},
}

func wantErr(t *testing.T, f Format, name, data string, want ...string) {
	t.Helper()
	_, err := Parse(f, name, []byte(data), Options{Location: time.UTC})
	if err == nil {
		t.Errorf("%s: no error, want one containing %q", name, want)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: err = %v\nwant it to contain %q", name, err, w)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: err spans lines: %q", name, err)
	}
}

// CloudWatch timestamps in the years 0001 and 9999 were stored as 1816
// (Unix nanoseconds overflow) while the message printed the original
// dates: times outside 1970..2200 are refused, in every format.
func TestOutOfRangeTimesAreRefused(t *testing.T) {
	wantErr(t, FormatCloudWatch, "year1.json", cwYear1,
		`year1.json:1: MetricDataResults[0].Timestamps[1]: expected a time between 1970-01-01 and 2200-01-01, got "0001-01-01T00:00:00Z"`)
	wantErr(t, FormatCloudWatch, "year9999.json", cwYear9999,
		`MetricDataResults[0].Timestamps[0]: expected a time between 1970-01-01 and 2200-01-01, got "9999-12-31T23:59:00Z"`)
	wantErr(t, FormatSar, "sar.csv", sarYear, `sar.csv:2: expected a time between 1970-01-01 and 2200-01-01, got "99999999999"`)
	wantErr(t, FormatPrometheus, "n.prom", promYear, `n.prom:1: expected a time between 1970-01-01 and 2200-01-01, got "99999999999999"`)
	iso := strings.Replace(iostatNegative, "2026-11-23T10:22:13+0000", "9999-11-23T10:22:13+0000", 1)
	wantErr(t, FormatIostat, "io.json", iso, `sysstat.hosts[0].statistics[1].timestamp: expected a time between 1970-01-01 and 2200-01-01`)
}

// Negative rates were stored as given.
func TestNegativeValuesAreRefused(t *testing.T) {
	wantErr(t, FormatIostat, "io.json", iostatNegative, `io.json:3: sysstat.hosts[0].statistics[1].disk[0].r/s: expected a value of zero or more, got -5`)
	wantErr(t, FormatSar, "sar.csv", sarNegative, `sar.csv:2: expected a number of zero or more in column tps, got "-3.0"`)
	wantErr(t, FormatCloudWatch, "cw.json", cwNegative, `cw.json:1: MetricDataResults[0].Values[1]: expected a value of "vol-1 VolumeWriteOps" of zero or more, got -600`)
	wantErr(t, FormatPrometheus, "n.prom", promNegative, `n.prom:4: expected node_disk_reads_completed_total of zero or more, got -1300`)
}

// A Prometheus file cut in the middle of its last sample gave a wrong
// last value (1 instead of 1300, read as a counter reset) without a word.
func TestCutShortTextIsRefused(t *testing.T) {
	wantErr(t, FormatPrometheus, "n.prom", promCut, "n.prom:4: expected a newline after the last sample", "cut in the middle of a sample")
	wantErr(t, FormatPrometheus, "n.prom", promCutLabel, "n.prom:4: expected a newline after the last sample")
	wantErr(t, FormatSar, "sar.csv", sarCut, "sar.csv:3: expected a newline after the last line of sadf -d output")
	// A comment without a newline at the end is no sample cut short.
	if _, err := Parse(FormatPrometheus, "n.prom", []byte(promSameTime[:strings.Index(promSameTime, "1200")+5]+"# end"), Options{Time: time.Unix(1795429370, 0)}); err != nil {
		t.Fatalf("a last comment without a newline: %v", err)
	}
}

// Duplicate timestamps were stored twice. iostat prints a report late
// now and then (two reports in one second): the later is kept and this
// is said. Elsewhere a repeated time means a file given twice, refused.
func TestDuplicateTimes(t *testing.T) {
	var got []monitor.Sample
	sum, err := Read(FormatIostat, "io.json", strings.NewReader(iostatRepeated), Options{}, func(s []monitor.Sample) error {
		got = append(got, s...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := pick(got, "disk:vda", monitor.DiskReadOps)
	if len(r) != 2 || r[0].Value != 3 || r[1].Value != 4 {
		t.Fatalf("read ops = %+v, want the later of the two 10:22:12 reports (3) and then 4", r)
	}
	if len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0], "io.json: sysstat.hosts[0].statistics[2].timestamp: report 2 has the same time as report 1") {
		t.Fatalf("warnings = %q", sum.Warnings)
	}

	got = nil
	sum, err = Read(FormatCloudWatch, "cw.json", strings.NewReader(cwRepeated), Options{}, func(s []monitor.Sample) error {
		got = append(got, s...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := pick(got, "volume:vol-1", monitor.DiskReadOps); len(r) != 2 || r[0].Value != 10 {
		t.Fatalf("read ops = %+v, want the later 10:00 value (600/60)", r)
	}
	if len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0], "MetricDataResults[0].Timestamps[2]: \"vol-1 VolumeReadOps\" has two datapoints at 2026-11-23T10:00:00Z") {
		t.Fatalf("warnings = %q", sum.Warnings)
	}

	wantErr(t, FormatCloudWatch, "cw.json", cwTwice, "cw.json:3: MetricDataResults[1].Timestamps[0]: expected each datapoint once", "already given by MetricDataResults[0]")
	wantErr(t, FormatSar, "sar.csv", sarRepeated, "sar.csv:5: expected the times of disk vda on host vm to increase, got 2026-11-23 10:22:45 UTC, a time earlier than on line 3")
	wantErr(t, FormatPrometheus, "n.prom", promSameTime, "n.prom:3: expected scrape times to increase")
	wantErr(t, FormatIostat, "io.json", iostatBackwards, `sysstat.hosts[0].statistics[2].timestamp: expected report times that never go backwards, got "2026-11-23T10:00:00+0000" after "2026-11-23T10:22:12+0000"`)
}

// An empty file said "cannot tell its format".
func TestEmptyInput(t *testing.T) {
	for _, data := range []string{"", " \n\t\n"} {
		for _, f := range Formats() {
			_, err := Parse(f, "x.txt", []byte(data), Options{})
			if err == nil || err.Error() != "x.txt is empty: there is no data to import" {
				t.Errorf("%s %q: err = %v", f, data, err)
			}
		}
		_, ok, err := Sniff("dir/x.txt", strings.NewReader(data))
		if ok || err == nil || err.Error() != "dir/x.txt is empty: there is no data to import" {
			t.Errorf("Sniff(%q) = %v, %v", data, ok, err)
		}
	}
	f, ok, err := Sniff("x", bytes.NewReader(readTestdata(t, "sar.csv")))
	if f != FormatSar || !ok || err != nil {
		t.Fatalf("Sniff(sar.csv) = %q, %v, %v", f, ok, err)
	}
}

// The CloudWatch error contradicted itself when the key was there but not
// usable: "expected ... get-metric-data JSON ..., got CloudWatch
// get-metric-data JSON".
func TestWrongShapeDoesNotNameTheSameFormat(t *testing.T) {
	for name, data := range map[string]string{"null": cwNull, "nested": cwNested} {
		_, err := Parse(FormatCloudWatch, name, []byte(data), Options{})
		if err == nil || strings.Contains(err.Error(), "got CloudWatch") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	wantErr(t, FormatCloudWatch, "null", cwNull, `null:1: MetricDataResults: expected "MetricDataResults", the list of results (a JSON array), got null`)
	wantErr(t, FormatCloudWatch, "nested", cwNested, `nested:1: expected aws cloudwatch get-metric-data JSON (a "MetricDataResults" array), got JSON of another shape (an object without a top-level "MetricDataResults" key)`)
	wantErr(t, FormatIostat, "io.json", `{"data": {"sysstat": {}}}`, `without a top-level "sysstat" key`)
	wantErr(t, FormatPrometheus, "n.prom", "# HELP node_load1 Load.\n# TYPE node_load1 gauge\n", `n.prom:1: expected Prometheus text exposition (lines "name{labels} value"), got comments and markers only, no sample`)
}

// Every host is kept, including one named after its reports, and the
// summary lists them all; sar takes the host of each line, not the first.
func TestSummaryNamesEveryHost(t *testing.T) {
	for _, tc := range []struct {
		f    Format
		data string
	}{{FormatIostat, iostatTwoHosts}, {FormatSar, sarTwoHosts}} {
		var got []monitor.Sample
		sum, err := Read(tc.f, "x", strings.NewReader(tc.data), Options{}, func(s []monitor.Sample) error {
			got = append(got, s...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(sum.Hosts, ",") != "db1,db2" || sum.Samples != len(got) || len(sum.Resources) != 1 || sum.Resources[0] != "cpu" {
			t.Fatalf("%s: summary %+v", tc.f, sum)
		}
		for _, x := range got {
			if x.Metric == monitor.CPUUserPct && (x.Host == "db1") != (x.Value == 10) {
				t.Fatalf("%s: %+v has the other host's value", tc.f, x)
			}
		}
	}
}

// A file that fails late hands nothing to the sink: an import stores the
// whole file or none of it.
func TestLateErrorEmitsNothing(t *testing.T) {
	for f, data := range map[Format]string{FormatIostat: iostatLateError, FormatPrometheus: promCut, FormatSar: sarRepeated} {
		calls := 0
		_, err := Read(f, "x", strings.NewReader(data), Options{}, func([]monitor.Sample) error { calls++; return nil })
		if err == nil || calls != 0 {
			t.Errorf("%s: err %v after %d sink calls, want an error and none", f, err, calls)
		}
	}
}

// Shares of time above 100% were stored (iostat 1e300% busy, sar 500%
// user and 900% system) and later printed as "+Inf%" (issue 36); the file
// is refused, and the sink gets none of its samples here (import stores
// a file in one transaction, so a longer file is not kept either).
func TestSharesAboveAllTheTimeAreRefused(t *testing.T) {
	iostatBusy := `{"sysstat": {"hosts": [{"nodename": "h", "statistics": [
 {"timestamp": "2026-11-23T10:22:11+0000", "disk": [{"disk_device": "vda", "r/s": 1, "w/s": 1, "util": 5}]},
 {"timestamp": "2026-11-23T10:22:12+0000", "disk": [{"disk_device": "vda", "r/s": 1, "w/s": 1, "util": 1e300}]}]}]}}`
	wantErr(t, FormatIostat, "io.json", iostatBusy, "io.json: disk:vda util_pct of host h at 2026-11-23T10:22:11Z is 1e+300%, more than all of the time there is; the file is damaged or was edited")
	sarCPU := "# hostname;interval;timestamp;CPU;%user;%nice;%system;%iowait;%steal;%idle\n" +
		"db1;1;2026-11-23 10:22:45 UTC;-1;500;0;900;0;0;0\n"
	wantErr(t, FormatSar, "sar.csv", sarCPU, "sar.csv", "cpu user_pct of host db1 at 2026-11-23T10:22:44Z is 500%", "more than all of the time there is")
	var stored int
	_, err := Read(FormatSar, "sar.csv", strings.NewReader(sarCPU), Options{Location: time.UTC}, func(s []monitor.Sample) error {
		stored += len(s)
		return nil
	})
	if err == nil || stored != 0 {
		t.Errorf("a refused file stored %d samples (%v)", stored, err)
	}
	// 100.4% busy is a rounding of the tools, kept.
	ok := sarHdr + "vm;1;2026-11-23 10:22:45 UTC;vda;3.0;0;0;0;0;0;100.4\n"
	if _, err := Parse(FormatSar, "sar.csv", []byte(ok), Options{Location: time.UTC}); err != nil {
		t.Errorf("100.4%% busy: %v", err)
	}
}

// ESC and BEL in an imported nodename reached the terminal raw, and a
// 50 MB device name made a 1.6 GB store (issue 36): such names refuse the
// file, quoted and cut short in the message.
func TestNamesAreShortAndPrintable(t *testing.T) {
	esc := "# hostname;interval;timestamp;CPU;%user;%nice;%system;%iowait;%steal;%idle\n" +
		"db\x1b[31m\x07;1;2026-11-23 10:22:45 UTC;-1;10;0;5;0;0;85\n"
	wantErr(t, FormatSar, "sar.csv", esc, `sar.csv: the name "db\x1b[31m\a" holds control characters; the file is damaged or was edited`)
	long := sarHdr + "vm;1;2026-11-23 10:22:45 UTC;" + strings.Repeat("d", 1000) + ";3.0;0;0;0;0;0;0\n"
	wantErr(t, FormatSar, "sar.csv", long, `the name "disk:ddddddddddddddddddddddddddddddddddd"... is 1005 bytes long, more than the 256 a host or device name may have`)
}
