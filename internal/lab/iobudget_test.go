package lab

import (
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The split of one budget between reads and writes, by hand: demands that
// fit get what they want plus half the rest; a saturated direction against
// an idle one gets all but the idle share; two saturated directions get
// half each; a small demand against a saturated one is met.
func TestSplitSharesOneBudget(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		want [2]float64
		got  [2]float64
	}{
		{[2]float64{0, 0}, [2]float64{100, 100}},
		{[2]float64{50, 30}, [2]float64{110, 90}},
		{[2]float64{inf, 0}, [2]float64{198, 2}},
		{[2]float64{0, inf}, [2]float64{2, 198}},
		{[2]float64{inf, inf}, [2]float64{100, 100}},
		{[2]float64{inf, 60}, [2]float64{140, 60}},
		{[2]float64{150, 150}, [2]float64{100, 100}},
	} {
		got := split(200, c.want)
		if math.Abs(got[0]-c.got[0]) > 1e-9 || math.Abs(got[1]-c.got[1]) > 1e-9 || got[0]+got[1] != 200 {
			t.Errorf("split(200, %v) = %v, want %v", c.want, got, c.got)
		}
	}
}

// The governor's loop on synthetic counters: reads held at their limit move
// the split toward reads; when writes start and press their limit, the two
// meet at half each; the kernel limits charge size in 256 KiB units.
func TestBudgetFollowsDemand(t *testing.T) {
	b := newVolumeBudget(200, 0)
	t0 := time.Unix(0, 0)
	var c ioCounters
	c.ok = true
	b.observe(c, t0)
	at := t0
	step := func(rd, wr float64) {
		at = at.Add(time.Second)
		c.ops[0] += uint64(rd)
		c.ops[1] += uint64(wr)
		c.bytes[0] += uint64(rd * 4096)
		c.bytes[1] += uint64(wr * 4096)
		b.observe(c, at)
	}
	for i := 0; i < 8; i++ {
		step(b.opsSplit[0], 0) // reads take all they are given
	}
	if b.opsSplit[0] < 197 || b.opsSplit[1] > 3 {
		t.Fatalf("reads alone: split %v", b.opsSplit)
	}
	// The idle direction's kernel limit keeps its reserve (10%).
	if l := b.limits("8:0"); l.IOPS != [2]uint64{198, 20} {
		t.Fatalf("reads alone: limits %+v", l)
	}
	for i := 0; i < 3; i++ {
		k := b.kernelOps()
		step(k[0], k[1]) // both take all the kernel lets through
	}
	if math.Abs(b.opsSplit[0]-100) > 1 || math.Abs(b.opsSplit[1]-100) > 1 {
		t.Fatalf("both saturated: split %v", b.opsSplit)
	}
	lim := b.limits("8:0")
	if lim.IOPS != [2]uint64{100, 100} || lim.BPS != [2]uint64{100 << 18, 100 << 18} {
		t.Fatalf("limits %+v", lim)
	}
	// Counters that count 30% more than the throttle charges (split
	// requests): the gain shrinks the kernel limits until the counted
	// total is the budget.
	for i := 0; i < 30; i++ {
		k := b.kernelOps()
		step(1.3*k[0], 1.3*k[1])
	}
	if total := 1.3 * (b.kernelOps()[0] + b.kernelOps()[1]); total < 190 || total > 212 {
		t.Fatalf("over-counting counters: kernel limits %v count %.1f/s against a budget of 200 (gain %.2f)", b.kernelOps(), total, b.gain)
	}
	// A bandwidth budget caps the bytes below the normalized ops' bytes.
	bw := newVolumeBudget(200, 10)
	if l := bw.limits("8:0"); l.BPS != [2]uint64{5 << 20, 5 << 20} || l.IOPS != [2]uint64{100, 100} {
		t.Fatalf("with 10 MiB/s: %+v", l)
	}
	// 1 MiB operations count 4 normalized each: reads of 50 ops/s of 1 MiB
	// use the whole 200 normalized budget.
	big := newVolumeBudget(200, 0)
	var bc ioCounters
	bc.ok = true
	big.observe(bc, t0)
	for i := 1; i <= 5; i++ {
		bc.ops[0] += 50
		bc.bytes[0] += 50 << 20
		big.observe(bc, t0.Add(time.Duration(i)*time.Second))
	}
	if big.opsSplit[0] < 190 {
		t.Fatalf("1 MiB reads at 50/s against 200 normalized: split %v", big.opsSplit)
	}
}

// A gain left a few percent under 1 (a small overshoot, or the smoothing's
// lag on the way back up) must not stay there while the volume is busy:
// with the old dead band (no raise above 95% of the budget) a 300-IOPS
// volume read alone stayed at 288 IOPS for good.
func TestGainRecoversUnderTheBudget(t *testing.T) {
	b := newVolumeBudget(300, 0)
	t0 := time.Unix(0, 0)
	var c ioCounters
	c.ok = true
	b.observe(c, t0)
	at := t0
	for i := 0; i < 8; i++ {
		at = at.Add(time.Second)
		c.ops[0] += uint64(b.kernelOps()[0]) // reads take all they are given
		c.bytes[0] += uint64(b.kernelOps()[0] * 4096)
		b.observe(c, at)
		if i == 3 {
			b.gain = 0.97 // what a small overshoot leaves
		}
	}
	if b.gain != 1 || b.limits("8:0").IOPS[0] < 297 {
		t.Fatalf("reads alone, busy at 97%% of the budget: gain %.3f, limits %+v; want the gain back at 1 and reads at 297/s", b.gain, b.limits("8:0"))
	}
}

// opsOn runs the disk helper on host doing kind ("read" or "update") of bs
// blocks for d and returns its operations per second.
func opsOn(t *testing.T, l *Lab, hostName, path, kind, bs string, d time.Duration) float64 {
	t.Helper()
	cmd, out := startOn(t, l, hostName, "disk", "HEADROOM_LAB_PATH="+path, "HEADROOM_LAB_SECS="+d.String(),
		"HEADROOM_LAB_OP="+kind, "HEADROOM_LAB_BS="+bs)
	line, err := out.ReadString('\n')
	if err != nil {
		_ = cmd.Wait()
		t.Errorf("disk %s on %s: %v", kind, hostName, err)
		return 0
	}
	var n int
	var s float64
	if _, err := fmt.Sscanf(line, "%d %f", &n, &s); err != nil {
		t.Errorf("disk helper printed %q", line)
	}
	return float64(n) / s
}

// One budget, as the model says: on a 200-IOPS volume, direct 4 KiB reads
// and writes at the same time share 200 operations per second (the
// kernel's throttle alone would give each direction 200), and 1 MiB reads
// get 50 per second (four normalized operations of 256 KiB each).
func TestVolumeBudgetIsSharedAndNormalized(t *testing.T) {
	vol := VolumeConfig{Name: "data", Type: "piops", SizeGiB: 20, IOPS: 200}
	l := upLab(t, "t-iobudget", []HostConfig{host("db1", "small", 1, 256, 0, vol)})
	h, _ := l.Host("db1")
	small, large := filepath.Join(h.VolumeDir, "small.dat"), filepath.Join(h.VolumeDir, "large.dat")
	for _, f := range []struct{ path, bs string }{{small, "4KiB"}, {large, "1MiB"}} {
		if _, _, err := diskOps(f.path, "1ms", "read", f.bs); err != nil { // create the file outside the limit
			t.Fatal(err)
		}
	}
	var rd, wr float64
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); rd = opsOn(t, l, "db1", small, "read", "4KiB", 5*time.Second) }()
	go func() { defer wg.Done(); wr = opsOn(t, l, "db1", small, "update", "4KiB", 5*time.Second) }()
	wg.Wait()
	t.Logf("4 KiB direct reads %.1f/s + writes %.1f/s = %.1f/s at 200 provisioned IOPS", rd, wr, rd+wr)
	if sum := rd + wr; sum < 170 || sum > 215 {
		t.Errorf("reads + writes = %.1f/s, want about 200 (one budget)", sum)
	}
	if rd < 50 || wr < 50 {
		t.Errorf("one direction starved: reads %.1f/s, writes %.1f/s", rd, wr)
	}
	big := opsOn(t, l, "db1", large, "read", "1MiB", 4*time.Second)
	t.Logf("1 MiB direct reads: %.1f/s at 200 provisioned normalized IOPS", big)
	if big < 42 || big > 55 {
		t.Errorf("1 MiB reads at %.1f/s, want about 50 (200 normalized operations of 256 KiB)", big)
	}
}
