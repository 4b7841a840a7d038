package importer

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// testdata/sar.csv: `sar -u -P ALL -d -n DEV -r 1 3 -o sa.bin` while dd
// wrote to vda and a local socket pair sent data over lo, then
// `sadf -d sa.bin -- -u -P ALL -d -n DEV -r`.
func TestSar(t *testing.T) {
	s := mustParse(t, FormatSar, "sar.csv", Options{Location: time.FixedZone("elsewhere", -7*3600)})
	checkCommon(t, s, monitor.SourceSar, "vm")

	// Timestamps end the interval and are UTC (the " UTC" suffix wins over Location).
	t0 := time.Date(2026, 11, 23, 10, 22, 44, 0, time.UTC)
	ops := pick(s, "disk:vda", DiskOps)
	if len(ops) != 3 || !ops[0].Start.Equal(t0) || ops[0].Period != time.Second || !ops[2].Start.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("vda ops = %+v, want 3 one-second intervals from %s", ops, t0)
	}
	for _, x := range pick(s, "disk:vda", monitor.DiskWriteBytes) {
		if x.Value < 100<<20 {
			t.Errorf("vda write_bytes_per_s = %v at %s, want > 100 MiB/s (dd was writing)", x.Value, x.Start)
		}
	}
	wantNear(t, "tps", ops[0].Value, 10516, 0)
	wantNear(t, "wkB/s", at(t, s, "disk:vda", monitor.DiskWriteBytes, t0).Value, 672648*1024, 0)
	wantNear(t, "%util", at(t, s, "disk:vda", monitor.DiskUtilPct, t0).Value, 82.80, 0)
	wantNear(t, "aqu-sz", at(t, s, "disk:vda", monitor.DiskQueueLength, t0).Value, 0.82, 0)
	wantNear(t, "await", at(t, s, "disk:vda", monitor.DiskAwaitMs, t0).Value, 0.08, 0)
	if n := len(pick(s, "disk:vda", monitor.DiskWriteOps)); n != 0 {
		t.Errorf("sar -d has no w/s, yet %d write_ops_per_s samples", n)
	}

	for _, res := range []string{"cpu", "cpu0", "cpu1"} {
		checkCPU(t, s, res, 0.1)
	}
	wantNear(t, "cpu1 iowait", at(t, s, "cpu1", monitor.CPUIowaitPct, t0).Value, 65.22, 0)
	wantNear(t, "cpu util", at(t, s, "cpu", monitor.CPUUtilPct, t0).Value, 100-48.39-32.26, 1e-9)

	wantNear(t, "lo rxkB/s", at(t, s, "net:lo", monitor.NetRxBytes, t0).Value, 6652.73*1024, 1e-6)
	wantNear(t, "lo txpck/s", at(t, s, "net:lo", monitor.NetTxPackets, t0).Value, 3244, 0)
	wantNear(t, "eth0 rx", at(t, s, "net:eth0", monitor.NetRxBytes, t0).Value, 0, 0)

	wantNear(t, "kbavail", at(t, s, "memory", monitor.MemAvailableBytes, t0).Value, 24233388*1024, 0)
	wantNear(t, "kbmemused", at(t, s, "memory", monitor.MemUsedBytes, t0).Value, 120280*1024, 0)
	wantNear(t, "kbcached", at(t, s, "memory", monitor.MemCachedBytes, t0).Value, 1041056*1024, 0)

	// 3 intervals × (3 CPUs × 6 + 3 memory + 6 disk + 4 interfaces × 4).
	if want := 3 * (18 + 3 + 6 + 16); len(s) != want {
		t.Errorf("got %d samples, want %d", len(s), want)
	}
}

// testdata/sar-localtime.csv: `TZ=Europe/Berlin sadf -d -T sa.bin -- -u`,
// local times without a zone, read in Options.Location.
func TestSarLocalTime(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	s := mustParse(t, FormatSar, "sar-localtime.csv", Options{Location: berlin})
	want := time.Date(2026, 11, 23, 10, 22, 44, 0, time.UTC)
	if !s[0].Start.Equal(want) {
		t.Fatalf("start = %s, want %s", s[0].Start, want)
	}
	utc := mustParse(t, FormatSar, "sar.csv", Options{})
	wantNear(t, "cpu idle", at(t, s, "cpu", monitor.CPUIdlePct, want).Value,
		at(t, utc, "cpu", monitor.CPUIdlePct, want).Value, 0)
}

func TestSarSkipsOtherReportsAndRestarts(t *testing.T) {
	data := `# hostname;interval;timestamp;runq-sz;plist-sz;ldavg-1;ldavg-5;ldavg-15;blocked
h;10;2026-11-23 10:00:10 UTC;1;200;0.5;0.4;0.3;0
h;-1;2026-11-23 10:00:15 UTC;LINUX-RESTART	(2 CPU)
# hostname;interval;timestamp;CPU;%usr;%nice;%sys;%iowait;%steal;%irq;%soft;%guest;%gnice;%idle
h;10;2026-11-23 10:00:20 UTC;all;10.00;1.00;5.00;2.00;0.50;0.25;0.25;0.00;0.00;81.00
`
	s, err := Parse(FormatSar, "x.csv", []byte(data), Options{Host: "db"})
	if err != nil {
		t.Fatal(err)
	}
	checkCommon(t, s, monitor.SourceSar, "db")
	start := time.Date(2026, 11, 23, 10, 0, 10, 0, time.UTC)
	wantNear(t, "user", at(t, s, "cpu", monitor.CPUUserPct, start).Value, 11, 1e-9)
	wantNear(t, "system", at(t, s, "cpu", monitor.CPUSystemPct, start).Value, 5.5, 1e-9)
	if s[0].Period != 10*time.Second || len(s) != 6 {
		t.Fatalf("samples = %+v", s)
	}
}

func TestSarErrors(t *testing.T) {
	hdr := "# hostname;interval;timestamp;DEV;tps;rkB/s;wkB/s;dkB/s;areq-sz;aqu-sz;await;%util\n"
	for _, tc := range []struct{ name, data, want string }{
		{"json", `{"sysstat": {}}`, `sar.csv:1: expected sadf -d output (a "# hostname;interval;timestamp;..." header), got iostat JSON output`},
		{"prom", "node_load1 0.5\n", `sar.csv:1: expected sadf -d output (a "# hostname;interval;timestamp;..." header), got Prometheus text exposition`},
		{"fields", hdr + "vm;1;2026-11-23 10:22:45 UTC;vda;1.0\n", `sar.csv:2: expected 12 semicolon-separated fields as in the sadf -d header on line 1, got 5`},
		{"number", hdr + "vm;1;2026-11-23 10:22:45 UTC;vda;x;0;0;0;0;0;0;0\n", `sar.csv:2: expected a number in column tps, got "x"`},
		{"time", hdr + "vm;1;23.11.2026;vda;1;0;0;0;0;0;0;0\n", `sar.csv:2: expected a timestamp like`},
		{"interval", hdr + "vm;0;2026-11-23 10:22:45 UTC;vda;1;0;0;0;0;0;0;0\n", `sar.csv:2: expected the interval in seconds`},
		{"only other", "# hostname;interval;timestamp;runq-sz;blocked\nh;1;2026-11-23 10:22:45 UTC;1;0\n", `expected at least one sar -u, -d, -n DEV or -r report`},
	} {
		_, err := Parse(FormatSar, "sar.csv", []byte(tc.data), Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}
