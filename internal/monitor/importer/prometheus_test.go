package importer

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// testdata/node_exporter.prom: two scrapes of prometheus-node-exporter
// 1.5.0 on 127.0.0.1:19100, 2 s apart, while dd wrote to vda; each scrape
// preceded by "# headroom-scrape-time: <unix ms>".
func TestPrometheus(t *testing.T) {
	s := mustParse(t, FormatPrometheus, "node_exporter.prom", Options{})
	checkCommon(t, s, monitor.SourcePrometheus, "vm")

	// Hand computation from the two scrapes (lines 1 and 1075).
	t0 := time.UnixMilli(1795429375964)
	dt := float64(1795429377994-1795429375964) / 1000 // 2.030 s
	if s[0].Period != 2030*time.Millisecond || !s[0].Start.Equal(t0) {
		t.Fatalf("first sample covers %s + %s, want %s + 2.03s", s[0].Start, s[0].Period, t0)
	}
	d := "disk:vda"
	wantNear(t, "writes", at(t, s, d, monitor.DiskWriteOps, t0).Value, (1.065518e+06-1.044995e+06)/dt, 1e-6)
	wantNear(t, "reads", at(t, s, d, monitor.DiskReadOps, t0).Value, (111233-111218)/dt, 1e-9)
	wantNear(t, "ops", at(t, s, d, DiskOps, t0).Value, (1.065518e+06-1.044995e+06+111233-111218+38308-38306)/dt, 1e-6)
	wantNear(t, "written bytes", at(t, s, d, monitor.DiskWriteBytes, t0).Value, (2.2955515904e+10-2.1625360384e+10)/dt, 1e-3)
	wantNear(t, "read bytes", at(t, s, d, monitor.DiskReadBytes, t0).Value, (2.733171712e+09-2.733110272e+09)/dt, 1e-6)
	wantNear(t, "util", at(t, s, d, monitor.DiskUtilPct, t0).Value, 100*(48.480000000000004-46.912)/dt, 1e-9)
	wantNear(t, "queue", at(t, s, d, monitor.DiskQueueLength, t0).Value, (741.955-739.783)/dt, 1e-9)
	wantNear(t, "await", at(t, s, d, monitor.DiskAwaitMs, t0).Value,
		((49.204-49.202)+(684.841-682.671))/((111233-111218)+(1.065518e+06-1.044995e+06))*1000, 1e-9)
	if v := at(t, s, d, monitor.DiskWriteOps, t0).Value; v < 1000 {
		t.Errorf("vda write_ops_per_s = %v, want > 1000 (dd was writing)", v)
	}

	// cpu0 deltas: idle 1.95, iowait 0.01, system 0.04, user 0.01 (sum 2.01).
	wantNear(t, "cpu0 idle", at(t, s, "cpu0", monitor.CPUIdlePct, t0).Value, 100*1.95/2.01, 1e-6)
	wantNear(t, "cpu0 system", at(t, s, "cpu0", monitor.CPUSystemPct, t0).Value, 100*0.04/2.01, 1e-6)
	// cpu1 deltas: idle 0, iowait 1.14, softirq 0.06, system 0.51, user 0.02 (sum 1.73).
	wantNear(t, "cpu1 iowait", at(t, s, "cpu1", monitor.CPUIowaitPct, t0).Value, 100*1.14/1.73, 1e-6)
	wantNear(t, "cpu1 system", at(t, s, "cpu1", monitor.CPUSystemPct, t0).Value, 100*(0.51+0.06)/1.73, 1e-6)
	wantNear(t, "cpu idle", at(t, s, "cpu", monitor.CPUIdlePct, t0).Value, 100*1.95/(2.01+1.73), 1e-6)
	wantNear(t, "cpu util", at(t, s, "cpu", monitor.CPUUtilPct, t0).Value, 100*(2.01+1.73-1.95-0.01-1.14)/(2.01+1.73), 1e-6)
	for _, res := range []string{"cpu", "cpu0", "cpu1"} {
		checkCPU(t, s, res, 1e-6)
	}

	// Gauges from the later scrape.
	wantNear(t, "available", at(t, s, "memory", monitor.MemAvailableBytes, t0).Value, 2.4844754944e+10, 0)
	wantNear(t, "total", at(t, s, "memory", MemTotalBytes, t0).Value, 2.5276510208e+10, 0)
	wantNear(t, "used", at(t, s, "memory", monitor.MemUsedBytes, t0).Value,
		2.5276510208e+10-2.3908511744e+10-3.8285312e+07-1.064062976e+09-1.44072704e+08, 0)

	if len(pick(s, "net:eth0", monitor.NetRxBytes)) != 1 {
		t.Error("no net:eth0 rx_bytes_per_s sample")
	}
}

// firstScrape returns the first scrape of node_exporter.prom without its marker.
func firstScrape(t *testing.T) string {
	data := string(readTestdata(t, "node_exporter.prom"))
	i := strings.Index(data[1:], ScrapeMarker)
	first := data[:i+1]
	return first[strings.Index(first, "\n")+1:]
}

func TestPrometheusSingleScrape(t *testing.T) {
	scrape := firstScrape(t)
	if _, err := Parse(FormatPrometheus, "one.prom", []byte(scrape), Options{}); err == nil ||
		!strings.Contains(err.Error(), "one.prom:3: expected a \"# headroom-scrape-time:\" line") {
		t.Fatalf("err = %v, want a request for a scrape time", err)
	}
	when := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	s, err := Parse(FormatPrometheus, "one.prom", []byte(scrape), Options{Time: when})
	if err != nil {
		t.Fatal(err)
	}
	checkCommon(t, s, monitor.SourcePrometheus, "vm")
	for _, x := range s {
		if x.Resource != "memory" || x.Period != 0 || !x.Start.Equal(when) {
			t.Fatalf("single scrape gave %+v, want only memory gauges at %s with Period 0", x, when)
		}
	}
	wantNear(t, "available", at(t, s, "memory", monitor.MemAvailableBytes, when).Value, 2.4844578816e+10, 0)
}

// Without markers, a repeated series starts a new scrape and sample
// timestamps give the time.
func TestPrometheusSampleTimestamps(t *testing.T) {
	data := `# TYPE node_disk_writes_completed_total counter
node_disk_writes_completed_total{device="sda"} 100 1795429370000
node_disk_reads_completed_total{device="sda"} 7 1795429370000
node_network_receive_bytes_total{device="eth0",extra="a \"quoted\", value"} 1e6 1795429370000
node_disk_writes_completed_total{device="sda"} 400 1795429380000
node_disk_reads_completed_total{device="sda"} 5 1795429380000
node_network_receive_bytes_total{device="eth0",extra="a \"quoted\", value"} 2e6 1795429380000
`
	s, err := Parse(FormatPrometheus, "ts.prom", []byte(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkCommon(t, s, monitor.SourcePrometheus, DefaultHost)
	t0 := time.UnixMilli(1795429370000)
	w := at(t, s, "disk:sda", monitor.DiskWriteOps, t0)
	if w.Period != 10*time.Second || w.Value != 30 {
		t.Fatalf("writes = %+v, want 30/s over 10s", w)
	}
	wantNear(t, "rx", at(t, s, "net:eth0", monitor.NetRxBytes, t0).Value, 1e5, 0)
	if r := pick(s, "disk:sda", monitor.DiskReadOps); len(r) != 0 {
		t.Fatalf("a counter reset gave %+v, want no sample", r)
	}
}

func TestPrometheusErrors(t *testing.T) {
	m := ScrapeMarker + " 1795429370000\n"
	for _, tc := range []struct{ name, data, want string }{
		{"csv", "# hostname;interval;timestamp;CPU;%user\n", `n.prom:1: expected Prometheus text exposition (lines "name{labels} value"), got sadf -d (sar) CSV output`},
		{"json", `{"MetricDataResults": []}`, `n.prom:1: expected Prometheus text exposition (lines "name{labels} value"), got CloudWatch get-metric-data JSON`},
		{"bad line", m + "node_load1 0.5\nnode_load5{x=1} 2\n", `n.prom:3: expected a Prometheus sample line (name{labels} value [timestamp]), got "node_load5{x=1} 2": expected a quoted label value at column 14`},
		{"bad marker", ScrapeMarker + " soon\nnode_load1 1\n", `n.prom:1: expected # headroom-scrape-time: followed by Unix milliseconds or an RFC 3339 time`},
		{"order", m + "node_load1 1\n" + m + "node_load1 1\n", `n.prom:3: expected scrape times to increase`},
		{"before marker", "node_load1 1\n" + m + "node_load1 1\n", `n.prom:1: expected a "# headroom-scrape-time:" line before the first sample`},
		{"dup", m + "node_load1 1\nnode_load1 2\n", `n.prom:3: expected each series once per scrape, got node_load1 again`},
	} {
		_, err := Parse(FormatPrometheus, "n.prom", []byte(tc.data), Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

// A gap in the recording is not a scrape interval: no rate is made over a
// 2-year gap (it was one "rate" sample), nor over one ten times the
// shortest spacing, and the import says where each gap was. The rates on
// either side of a gap are kept.
func TestPrometheusGapsMakeNoRates(t *testing.T) {
	t0 := int64(1795429370000)
	scrape := func(ms, writes int64) string {
		return fmt.Sprintf("node_disk_writes_completed_total{device=\"sda\"} %d %d\n", writes, ms)
	}
	year := int64(365 * 24 * 3600 * 1000)
	data := "# TYPE node_disk_writes_completed_total counter\n" +
		scrape(t0, 100) + scrape(t0+15_000, 400) + scrape(t0+30_000, 700) + // 20/s, twice
		scrape(t0+30_000+2*year, 800) + // two years later
		scrape(t0+45_000+2*year, 1100) + // 20/s again
		scrape(t0+45_000+2*year+5*60_000, 1400) // five minutes: 20 times the 15 s spacing
	var got []monitor.Sample
	sum, err := Read(FormatPrometheus, "gaps.prom", strings.NewReader(data), Options{}, func(s []monitor.Sample) error {
		got = append(got, s...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w := pick(got, "disk:sda", monitor.DiskWriteOps)
	if len(w) != 3 {
		t.Fatalf("write rates %+v, want the three 15 s intervals only", w)
	}
	for _, s := range w {
		if s.Period != 15*time.Second || s.Value != 20 {
			t.Errorf("write rate %+v, want 20/s over 15 s", s)
		}
	}
	if len(sum.Warnings) != 2 || !strings.Contains(sum.Warnings[0], "a gap in the recording") || !strings.Contains(sum.Warnings[1], "5m0s") {
		t.Errorf("warnings %q, want one per gap", sum.Warnings)
	}
	// Two scrapes two years apart: nothing to compare with, still a gap.
	two := "# TYPE node_disk_writes_completed_total counter\n" + scrape(t0, 100) + scrape(t0+2*year, 800)
	s, err := Parse(FormatPrometheus, "two.prom", []byte(two), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w := pick(s, "disk:sda", monitor.DiskWriteOps); len(w) != 0 {
		t.Errorf("a rate over two years: %+v", w)
	}
}
