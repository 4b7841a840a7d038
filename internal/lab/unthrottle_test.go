package lab

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cpuQuota is the host cgroup's CPU quota in cores.
func cpuQuota(t *testing.T, l *Lab, name string) float64 {
	t.Helper()
	h, err := l.Host(name)
	if err != nil {
		t.Fatal(err)
	}
	var quota string
	if l.cg.v2 {
		b, err := os.ReadFile(filepath.Join(l.cg.dir("", h.Cgroup), "cpu.max"))
		if err != nil {
			t.Fatal(err)
		}
		quota = strings.Fields(string(b))[0]
	} else {
		b, err := os.ReadFile(filepath.Join(l.cg.dir("cpu", h.Cgroup), "cpu.cfs_quota_us"))
		if err != nil {
			t.Fatal(err)
		}
		quota = strings.TrimSpace(string(b))
	}
	us, err := strconv.ParseFloat(quota, 64)
	if err != nil {
		t.Fatalf("CPU quota %q: %v", quota, err)
	}
	return us / cpuPeriodUs
}

// Unthrottle lifts a host's volume and CPU limits in the kernel (the
// volume serves far more than its 100 IOPS, the quota is every core);
// Rethrottle puts both back as defined, in the lab's state and in the
// kernel, with the governor splitting the volume's budget again.
func TestUnthrottleLiftsAndRethrottleRestoresTheLimits(t *testing.T) {
	vol := VolumeConfig{Name: "data", Type: "piops", SizeGiB: 20, IOPS: 100}
	l := upLab(t, "t-unthrottle", []HostConfig{host("db1", "small", 0.5, 256, 0, vol)})
	t.Cleanup(l.stopGovernor)
	h, _ := l.Host("db1")
	file := filepath.Join(h.VolumeDir, "disk.dat")
	if _, _, err := diskReads(file, "1ms"); err != nil { // written outside the limit
		t.Fatal(err)
	}
	defined := h.Now
	// A budget split afresh (at Up, and at Rethrottle) starts even between
	// reads and writes; the governor gives the reads theirs within a
	// second.
	throttled := func() float64 {
		readIOPS(t, l, "db1", file, time.Second)
		return readIOPS(t, l, "db1", file, 3*time.Second)
	}
	before := throttled()

	if err := l.Unthrottle(); err != nil {
		t.Fatal(err)
	}
	lifted := readIOPS(t, l, "db1", file, 2*time.Second)
	now, _ := l.Host("db1")
	cores := float64(runtime.NumCPU())
	if now.Now.IOPS != 0 || now.Now.MiBps != 0 || now.Now.Cores != cores || cpuQuota(t, l, "db1") != cores {
		t.Errorf("unthrottled: state %+v, CPU quota %g cores; want no volume limits and %g cores", now.Now, cpuQuota(t, l, "db1"), cores)
	}

	if err := l.Rethrottle(); err != nil {
		t.Fatal(err)
	}
	if l.gov.stop == nil {
		t.Error("the governor is not running after Rethrottle")
	}
	limited := throttled()
	now, _ = l.Host("db1")
	t.Logf("4 KiB random direct reads: %.0f/s at 100 provisioned IOPS, %.0f/s unthrottled, %.0f/s rethrottled", before, lifted, limited)
	// The quota file holds whole microseconds of the period.
	if now.Now != defined || math.Abs(cpuQuota(t, l, "db1")-defined.Cores) > 1.0/cpuPeriodUs {
		t.Errorf("rethrottled: state %+v, CPU quota %g cores; want as defined %+v, %g cores", now.Now, cpuQuota(t, l, "db1"), defined, defined.Cores)
	}
	// Reads alone get 99% of the budget, and the throttle delivers a
	// little under its limit (TestVolumeIOPSLimit): the same before the
	// lift and after the restore.
	if limited < 80 || limited > 108 || limited < 0.9*before || limited > 1.1*before {
		t.Errorf("the 100-IOPS volume delivered %.0f reads/s after Rethrottle and %.0f before Unthrottle", limited, before)
	}
	if lifted < 3*limited {
		t.Errorf("unthrottled the volume delivered %.0f reads/s, not far more than the %.0f it delivers at 100 IOPS", lifted, limited)
	}
}
