package procfs

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

const statA = `cpu  1000 100 300 8000 200 50 50 300 0 0
cpu0 500 50 150 4000 100 25 25 150 0 0
cpu1 500 50 150 4000 100 25 25 150 0 0
intr 7919873 0 0 0 0
ctxt 17802638
btime 1700000000
`

// statB is statA plus, on the total line: user+100 nice+0 system+50
// idle+700 iowait+100 irq+25 softirq+25 steal+0 (total +1000 jiffies).
const statB = `cpu  1100 100 350 8700 300 75 75 300 0 0
cpu0 600 50 200 4300 100 50 50 150 0 0
cpu1 500 50 150 4400 200 25 25 150 0 0
intr 7919999 0 0 0 0
ctxt 17802999
btime 1700000000
`

func TestParseCPUStat(t *testing.T) {
	var a, b cpuStat
	if err := parseCPUStat([]byte(statA), &a); err != nil {
		t.Fatal(err)
	}
	if err := parseCPUStat([]byte(statB), &b); err != nil {
		t.Fatal(err)
	}
	if len(a.cores) != 2 || !a.cores[1].valid || a.total.v[cpuSteal] != 300 {
		t.Fatalf("parsed %+v", a)
	}
	p, ok := computeCPU(&b.total, &a.total)
	if !ok {
		t.Fatal("no result")
	}
	want := cpuPcts{user: 10, system: 10, iowait: 10, steal: 0, idle: 70, util: 20}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"user", p.user, want.user}, {"system", p.system, want.system}, {"iowait", p.iowait, want.iowait},
		{"steal", p.steal, want.steal}, {"idle", p.idle, want.idle}, {"util", p.util, want.util}} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// cpu0: user+100 system+50 idle+300 irq+25 softirq+25 = 500 jiffies.
	p0, _ := computeCPU(&b.cores[0], &a.cores[0])
	if !near(p0.user, 20) || !near(p0.system, 20) || !near(p0.idle, 60) || !near(p0.util, 40) {
		t.Errorf("cpu0 = %+v", p0)
	}
	// iowait going backwards (a known NO_HZ artefact) drops iowait and
	// util only.
	back := b.cores[1]
	back.v[cpuIowait] = 50
	p1, ok := computeCPU(&back, &a.cores[1])
	if !ok || p1.okIowait || p1.okUtil || !p1.okIdle || !p1.okUser {
		t.Errorf("backwards iowait: %+v", p1)
	}
	if err := parseCPUStat([]byte("intr 1 2 3\n"), &a); err == nil {
		t.Error("no cpu line: want an error")
	}
}

const diskstatsA = `   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 88255 20927 4934162 47331 899319 68322 23257928 664621 0 31692 717220 35279 18 4010888 2509 47399 2757
 254       1 vda1 100 0 800 10 200 0 1600 20 0 30 30
`

// diskstatsB: vda +100 reads, +2048 sectors read, +300 ms reading, +400
// writes, +8192 sectors written, +700 ms writing, +500 ms busy, +2000 ms
// weighted.
const diskstatsB = `   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 88355 20927 4936210 47631 899719 68322 23266120 665321 3 32192 719220 35279 18 4010888 2509 47399 2757
 254       1 vda1 100 0 800 10 200 0 1600 20 0 30 30
`

func TestParseDiskstats(t *testing.T) {
	get := func(s, dev string) diskCounters {
		for _, line := range strings.Split(s, "\n") {
			var c diskCounters
			if name, ok := parseDiskstatsLine([]byte(line), &c); ok && string(name) == dev {
				return c
			}
		}
		t.Fatalf("%s not found", dev)
		return diskCounters{}
	}
	a, b := get(diskstatsA, "vda"), get(diskstatsB, "vda")
	if a[dsReads] != 88255 || a[dsWeightedMs] != 717220 {
		t.Fatalf("parsed %v", a)
	}
	if p := get(diskstatsA, "vda1"); p[dsIOMs] != 30 { // old 11-column format
		t.Fatalf("vda1 parsed %v", p)
	}
	r := computeDisk(&b, &a, 2) // 2 s
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"read_ops", r.readOps, 50}, {"write_ops", r.writeOps, 200},
		{"read_bytes", r.readBytes, 2048 * 512 / 2}, {"write_bytes", r.writeBytes, 8192 * 512 / 2},
		{"await", r.await, 1000.0 / 500}, {"util", r.util, 25}, {"queue", r.queue, 1},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	r = computeDisk(&a, &a, 1)
	if r.okAwait || !r.okUtil || r.util != 0 {
		t.Errorf("idle interval: %+v", r)
	}
	r = computeDisk(&a, &b, 1) // counters reset
	if r.okReadOps || r.okWriteBytes || r.okAwait || r.okUtil {
		t.Errorf("backwards counters gave values: %+v", r)
	}
}

const netDevA = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    3193      29    0    0    0     0          0         0     3193      29    0    0    0     0       0          0
  eth0:143700059    8769    0    0    0     0          0         0  1331200    8063    0    0    0     0       0          0
`

func TestParseNetDev(t *testing.T) {
	lines := strings.Split(netDevA, "\n")
	var c netCounters
	if _, ok := parseNetDevLine([]byte(lines[0]), &c); ok {
		t.Error("header parsed as an interface")
	}
	if _, ok := parseNetDevLine([]byte(lines[1]), &c); ok {
		t.Error("header parsed as an interface")
	}
	name, ok := parseNetDevLine([]byte(lines[3]), &c)
	if !ok || string(name) != "eth0" || c[ndRxBytes] != 143700059 || c[ndRxPackets] != 8769 ||
		c[ndTxBytes] != 1331200 || c[ndTxPackets] != 8063 {
		t.Errorf("eth0: %q %v", name, c)
	}
}

func TestParseProcFiles(t *testing.T) {
	state, ticks, ok := parseProcStat([]byte("4242 (a (weird) name) R 1 4242 4242 0 -1 4194304 100 0 0 0 150 25 0 0 20 0 3 0 12345 1000000 250 18446744073709551615\n"))
	if !ok || state != 'R' || ticks != 175 {
		t.Errorf("stat: %c %d %v", state, ticks, ok)
	}
	rss, ok := parseVmRSS([]byte("Name:\tx\nVmPeak:\t 3060 kB\nVmRSS:\t    1624 kB\nVmData:\t 360 kB\n"))
	if !ok || rss != 1624*1024 {
		t.Errorf("VmRSS = %d %v", rss, ok)
	}
	rd, wr, ok := parseProcIO([]byte("rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 0\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n"))
	if !ok || rd != 4096 || wr != 8192 {
		t.Errorf("io = %d %d %v", rd, wr, ok)
	}
	mi := parseMeminfo([]byte("MemTotal:       24684092 kB\nMemFree:        23440176 kB\nMemAvailable:   24194124 kB\nBuffers:           25396 kB\nCached:           894440 kB\nSwapCached:            0 kB\n"))
	if mi.total != 24684092*1024 || mi.available != 24194124*1024 || mi.cached != 894440*1024 {
		t.Errorf("meminfo %+v", mi)
	}
	r, w := parseBlkioV1([]byte("254:0 Read 10\n254:0 Write 20\n254:0 Sync 20\n254:0 Async 10\n254:0 Discard 0\n254:0 Total 30\n8:0 Read 1\n8:0 Write 2\nTotal 33\n"))
	if r != 11 || w != 22 {
		t.Errorf("blkio v1 = %d %d", r, w)
	}
	rb, wb, ro, wo := parseIOStatV2([]byte("254:0 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0\n"))
	if rb != 4097 || wb != 8194 || ro != 4 || wo != 6 {
		t.Errorf("io.stat v2 = %d %d %d %d", rb, wb, ro, wo)
	}
}

// fakeTree writes files under a temporary root.
type fakeTree struct {
	t    *testing.T
	root string
}

func (f fakeTree) write(rel, content string) {
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	// Rewrite in place: the Sampler keeps the file open.
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// byKey indexes samples by "resource metric".
func byKey(ss []monitor.Sample) map[string]float64 {
	m := map[string]float64{}
	for _, s := range ss {
		m[s.Resource+" "+s.Metric] = s.Value
	}
	return m
}

// TestFakeTree runs a whole Sampler over a fixed /proc and /sys tree and
// checks the values and the interval bookkeeping.
func TestFakeTree(t *testing.T) {
	ft := fakeTree{t, t.TempDir()}
	ft.write("proc/stat", statA)
	ft.write("proc/diskstats", diskstatsA)
	ft.write("proc/net/dev", netDevA)
	ft.write("proc/meminfo", "MemTotal: 1000 kB\nMemAvailable: 600 kB\nCached: 300 kB\n")
	ft.write("proc/4242/stat", "4242 (db) S 1 4242 4242 0 -1 0 0 0 0 0 100 50 0 0 20 0 3 0 1 1 1\n")
	ft.write("proc/4242/status", "Name:\tdb\nVmRSS:\t 2048 kB\n")
	ft.write("proc/4242/io", "read_bytes: 0\nwrite_bytes: 0\n")
	ft.write("sys/block/vda/size", "1\n")
	ft.write("proc/self/mountinfo", "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"+
		"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"+
		"38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n"+
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n")
	cg := "sys/fs/cgroup/cpu,cpuacct/lab/db1/"
	ft.write(cg+"cpuacct.usage", "1000000000\n")
	ft.write(cg+"cpu.stat", "nr_periods 100\nnr_throttled 10\nthrottled_time 5000000\n")
	ft.write("sys/fs/cgroup/memory/lab/db1/memory.usage_in_bytes", "12345\n")
	ft.write("sys/fs/cgroup/blkio/lab/db1/blkio.throttle.io_serviced", "254:0 Read 0\n254:0 Write 0\nTotal 0\n")
	ft.write("sys/fs/cgroup/blkio/lab/db1/blkio.throttle.io_service_bytes", "254:0 Read 0\n254:0 Write 0\nTotal 0\n")

	s, err := New(Config{Host: "h", Root: ft.root, CPU: true, PerCore: true, Memory: true, AllDisks: true,
		AllInterfaces: true, PIDs: []int{4242}, Cgroups: []string{"lab/db1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Unix(1700000000, 0)
	if out, err := s.Sample(t0); err != nil || len(out) != 0 {
		t.Fatalf("priming call returned %d samples, %v", len(out), err)
	}
	ft.write("proc/stat", statB)
	ft.write("proc/diskstats", diskstatsB)
	ft.write("proc/net/dev", strings.Replace(netDevA, "143700059", "143702059", 1))
	ft.write("proc/4242/stat", "4242 (db) S 1 4242 4242 0 -1 0 0 0 0 0 250 100 0 0 20 0 3 0 1 1 1\n")
	ft.write("proc/4242/io", "read_bytes: 4096\nwrite_bytes: 8192\n")
	ft.write(cg+"cpuacct.usage", "1500000000\n")
	ft.write(cg+"cpu.stat", "nr_periods 120\nnr_throttled 15\nthrottled_time 105000000\n")
	ft.write("sys/fs/cgroup/blkio/lab/db1/blkio.throttle.io_serviced", "254:0 Read 4\n254:0 Write 6\nTotal 10\n")
	ft.write("sys/fs/cgroup/blkio/lab/db1/blkio.throttle.io_service_bytes", "254:0 Read 4096\n254:0 Write 8192\nTotal 12288\n")
	t1 := t0.Add(2 * time.Second)
	out, err := s.Sample(t1)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range out {
		if x.Host != "h" || !x.Start.Equal(t0) || x.Period != 2*time.Second || x.Source != monitor.SourceSampled {
			t.Fatalf("bad interval tags: %+v", x)
		}
	}
	got := byKey(out)
	want := map[string]float64{
		"cpu util_pct": 20, "cpu user_pct": 10, "cpu idle_pct": 70, "cpu0 util_pct": 40,
		"memory used_bytes": 400 * 1024, "memory cached_bytes": 300 * 1024, "memory available_bytes": 600 * 1024,
		"disk:vda write_ops_per_s": 200, "disk:vda util_pct": 25, "disk:vda await_ms": 2, "disk:vda queue_length": 1,
		"net:eth0 rx_bytes_per_s": 1000, "net:eth0 tx_bytes_per_s": 0,
		"proc:4242 cpu_pct": 100, "proc:4242 rss_bytes": 2048 * 1024, "proc:4242 write_bytes_per_s": 4096,
		"cgroup:/lab/db1 cpu_pct": 25, "cgroup:/lab/db1 throttled_pct": 25, "cgroup:/lab/db1 throttled_ms_per_s": 50,
		"cgroup:/lab/db1 memory_bytes": 12345, "cgroup:/lab/db1 read_ops_per_s": 2, "cgroup:/lab/db1 write_bytes_per_s": 4096,
	}
	for k, v := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s missing", k)
		} else if !near(g, v) {
			t.Errorf("%s = %v, want %v", k, g, v)
		}
	}
	for _, k := range []string{"disk:vda1 util_pct", "disk:loop0 util_pct", "net:lo rx_bytes_per_s"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s sampled; AllDisks/AllInterfaces must skip it", k)
		}
	}

	// The process becomes a zombie and the disk disappears: their samples
	// stop, each noted once, no error.
	ft.write("proc/4242/stat", "4242 (db) Z 1 4242 4242 0 -1 0 0 0 0 0 250 100 0 0 20 0 3 0 1 1 1\n")
	ft.write("proc/diskstats", "")
	for i := 2; i <= 3; i++ {
		out, err = s.Sample(t0.Add(time.Duration(i) * 2 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range out {
			if strings.HasPrefix(x.Resource, "proc:") || strings.HasPrefix(x.Resource, "disk:") {
				t.Errorf("sample for a gone resource: %+v", x)
			}
		}
	}
	w := s.Warnings()
	if len(w) != 2 || !strings.Contains(w[0], "vda") || !strings.Contains(w[1], "4242") {
		t.Errorf("warnings = %q", w)
	}
	if _, err := s.Sample(t0); err == nil {
		t.Error("a time before the previous one: want an error")
	}
}

// TestFakeCgroupV2 checks the unified hierarchy files.
func TestFakeCgroupV2(t *testing.T) {
	ft := fakeTree{t, t.TempDir()}
	ft.write("proc/self/mountinfo", "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n")
	d := "sys/fs/cgroup/lab/db1/"
	ft.write(d+"cpu.stat", "usage_usec 1000000\nuser_usec 1\nsystem_usec 1\nnr_periods 10\nnr_throttled 0\nthrottled_usec 0\n")
	ft.write(d+"memory.current", "4096\n")
	ft.write(d+"io.stat", "254:0 rbytes=0 wbytes=0 rios=0 wios=0 dbytes=0 dios=0\n")
	s, err := New(Config{Host: "h", Root: ft.root, Cgroups: []string{"/lab/db1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Unix(1700000000, 0)
	s.Sample(t0)
	ft.write(d+"cpu.stat", "usage_usec 1500000\nuser_usec 1\nsystem_usec 1\nnr_periods 20\nnr_throttled 5\nthrottled_usec 200000\n")
	ft.write(d+"io.stat", "254:0 rbytes=1000 wbytes=2000 rios=10 wios=20 dbytes=0 dios=0\n")
	out, err := s.Sample(t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := byKey(out)
	for k, v := range map[string]float64{
		"cgroup:/lab/db1 cpu_pct": 50, "cgroup:/lab/db1 throttled_pct": 50, "cgroup:/lab/db1 throttled_ms_per_s": 200,
		"cgroup:/lab/db1 memory_bytes": 4096, "cgroup:/lab/db1 read_bytes_per_s": 1000, "cgroup:/lab/db1 write_ops_per_s": 20,
	} {
		if g, ok := got[k]; !ok || !near(g, v) {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
}

// TestDiskFromSysDev maps a partition's device number to its whole disk.
func TestDiskFromSysDev(t *testing.T) {
	ft := fakeTree{t, t.TempDir()}
	ft.write("sys/devices/pci0/block/sda/sda1/partition", "1\n")
	ft.write("sys/devices/pci0/block/sdb/size", "1\n")
	if err := os.MkdirAll(filepath.Join(ft.root, "sys/dev/block"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"8:1": "../../devices/pci0/block/sda/sda1", "8:16": "../../devices/pci0/block/sdb"} {
		if err := os.Symlink(target, filepath.Join(ft.root, "sys/dev/block", link)); err != nil {
			t.Fatal(err)
		}
	}
	for majmin, want := range map[string]string{"8:1": "sda", "8:16": "sdb"} {
		if got, err := diskFromSysDev(ft.root, majmin); err != nil || got != want {
			t.Errorf("%s -> %q, %v; want %q", majmin, got, err, want)
		}
	}
	if _, err := diskFromSysDev(ft.root, "9:9"); err == nil {
		t.Error("unknown device: want an error")
	}
}

// Proc files longer than a page come back whole (review finding: one pread
// returned only the first page of /proc/net/dev on hosts with many
// interfaces).
func TestStatFileReadsPastOnePage(t *testing.T) {
	want, err := os.ReadFile("/proc/self/smaps")
	if err != nil || len(want) < 8192 {
		t.Skipf("need a proc file over two pages: %d bytes, %v", len(want), err)
	}
	f, err := openStatFile("/proc/self/smaps", 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	got, err := f.read()
	if err != nil {
		t.Fatal(err)
	}
	// The mappings can change between the two reads; the sizes are close.
	if len(got) < len(want)*3/4 {
		t.Fatalf("read %d bytes of a %d-byte file", len(got), len(want))
	}
}
