package cost

import (
	"math"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// round2 rounds to cents, as Table 1 prints.
func round2(x float64) float64 { return math.Round(x*100) / 100 }

// Seed 000 Table 1 gives node counts and $/(req/s) but neither prices nor
// throughputs. ASSUMED here: on-demand prices of the time for eu-west-1
// (m3.large $0.146/h, m3.medium $0.073/h; io1 $0.138 per GiB-month and
// $0.072 per PIOPS-month) and, for each row, base and option-A
// throughputs chosen so that the table's cells follow. The test shows the
// arithmetic (730 h/month, 100 GiB volumes, 300 -> 1800 PIOPS, linear
// scale-out below option A) reproduces every cell from such inputs.
func TestTable1Arithmetic(t *testing.T) {
	io1 := func(hourly float64) Prices {
		return Prices{InstanceHourly: hourly, VolumeGiBMonth: 0.138, IOPSMonth: 0.072}
	}
	for _, c := range []struct {
		row              string
		hourly           float64
		baseTput, aTput  float64 // assumed req/s
		bNodes           int     // Table 1
		aPer, bPer, save float64 // Table 1
	}{
		{"m3.large, wl A", 0.146, 1936, 9375, 14, 0.08, 0.22, -0.14},
		{"m3.large, wl B", 0.146, 1290, 5800, 13, 0.13, 0.33, -0.20},
		{"m3.medium, wl A", 0.073, 2000, 5300, 7, 0.11, 0.13, -0.02},
		{"m3.medium, wl B", 0.073, 1170, 3100, 7, 0.19, 0.23, -0.04},
	} {
		base := Deployment{Nodes: 3, VolumeGiB: 100, IOPS: 300, Prices: io1(c.hourly)}
		a := base
		a.IOPS = 1800
		got, err := Compare(base, c.baseTput, a, c.aTput)
		if err != nil {
			t.Fatal(err)
		}
		if got.B.Nodes != c.bNodes || got.A.Nodes != 3 || round2(got.A.PerReqPerS) != c.aPer || round2(got.B.PerReqPerS) != c.bPer || round2(got.Savings) != c.save {
			t.Fatalf("%s: A %d nodes %.4f, B %d nodes %.4f, savings %.4f; want B %d nodes, %.2f, %.2f, %.2f",
				c.row, got.A.Nodes, got.A.PerReqPerS, got.B.Nodes, got.B.PerReqPerS, got.Savings, c.bNodes, c.aPer, c.bPer, c.save)
		}
		if !(got.B.Throughput < c.aTput) || !got.B.Extrapolated || got.A.Extrapolated {
			t.Fatalf("%s: B throughput %v must stay below A's %v", c.row, got.B.Throughput, c.aTput)
		}
	}

	// The node cost by hand: m3.large, 100 GiB, 300 PIOPS =
	// 0.146 x 730 + 100 x 0.138 + 300 x 0.072 = 106.58 + 13.8 + 21.6.
	d := Deployment{Nodes: 3, VolumeGiB: 100, IOPS: 300, Prices: io1(0.146)}
	if !near(d.NodeMonthly(), 141.98, 1e-9) || !near(d.Monthly(), 425.94, 1e-9) {
		t.Fatalf("node %v, cluster %v", d.NodeMonthly(), d.Monthly())
	}
}

func TestCompareBoundaryAndErrors(t *testing.T) {
	p := Prices{InstanceHourly: 1}
	base := Deployment{Nodes: 2, Prices: p}
	// 100 req/s per node; A reaches exactly 500: B may not reach 500, so 4 nodes.
	c, err := Compare(base, 200, base, 500)
	if err != nil || c.B.Nodes != 4 || c.B.Throughput != 400 {
		t.Fatalf("boundary: %+v, %v", c.B, err)
	}
	// A slightly above 500: 5 nodes.
	c, _ = Compare(base, 200, base, 500.001)
	if c.B.Nodes != 5 {
		t.Fatalf("above boundary: %d nodes", c.B.Nodes)
	}
	for _, tc := range []struct {
		base   Deployment
		bt, at float64
		want   string
	}{
		{Deployment{Nodes: 0, Prices: p}, 1, 1, "has 0 nodes"},
		{base, 0, 1, "base throughput"},
		{base, 200, 50, "below one base node's"},
		{Deployment{Nodes: 1}, 1, 2, "costs nothing"},
		{Deployment{Nodes: 1, Prices: Prices{InstanceHourly: -1}}, 1, 2, "InstanceHourly is -1"},
		{base, 1e-6, 1e6, "nodes or more"},
	} {
		if _, err := Compare(tc.base, tc.bt, base, tc.at); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%+v: err = %v, want %q", tc, err, tc.want)
		}
	}
}

// A volume priced as a whole adds to the node; the node cap of
// CompareWithin holds option B and says so.
func TestVolumeMonthlyAndNodeCap(t *testing.T) {
	// Lab medium host: 0.18 $/h x 730 = 131.4; its 100 GiB, 300-IOPS piops
	// volume recorded at 32 $/month (100 x 0.125 + 300 x 0.065).
	base := Deployment{Nodes: 1, VolumeGiB: 100, IOPS: 300, Prices: Prices{InstanceHourly: 0.18, VolumeMonthly: 32}}
	if !near(base.NodeMonthly(), 163.4, 1e-9) {
		t.Fatalf("node %v", base.NodeMonthly())
	}
	a := base
	a.Prices.VolumeMonthly = 12.5 + 1800*0.065 // 129.5
	// 200 req/s before, 900 after: B may take 4 nodes (800 < 900).
	c, err := CompareWithin(base, 200, a, 900, 0)
	if err != nil || c.B.Nodes != 4 || c.Capped {
		t.Fatalf("uncapped: %+v, %v", c, err)
	}
	// A: 260.9 / 900; B: 4 x 163.4 / 800.
	if !near(c.A.PerReqPerS, 260.9/900, 1e-12) || !near(c.B.PerReqPerS, 653.6/800, 1e-12) || !near(c.Savings, 260.9/900-653.6/800, 1e-12) {
		t.Fatalf("per req/s: A %v, B %v, savings %v", c.A.PerReqPerS, c.B.PerReqPerS, c.Savings)
	}
	c, err = CompareWithin(base, 200, a, 900, 3)
	if err != nil || c.B.Nodes != 3 || !c.Capped || c.B.Throughput != 600 {
		t.Fatalf("capped at 3: %+v, %v", c.B, err)
	}
	if _, err := CompareWithin(base, 200, a, 900, -1); err == nil || !strings.Contains(err.Error(), "node limit") {
		t.Fatalf("negative cap: %v", err)
	}
	bad := base
	bad.Prices.VolumeMonthly = -1
	if _, err := Compare(bad, 1, a, 2); err == nil || !strings.Contains(err.Error(), "VolumeMonthly is -1") {
		t.Fatalf("negative volume price: %v", err)
	}
}
