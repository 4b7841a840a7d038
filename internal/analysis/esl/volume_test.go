package esl

import (
	"strings"
	"testing"
)

// The numbers of seed 000 §4.1 and seed-digest §4.
func TestNormalizedOps(t *testing.T) {
	for _, c := range []struct{ d, nd, want float64 }{
		{512, 256, 2}, // the seed's example: a 512 KiB operation is two NOs
		{4, 256, 1}, {256, 256, 1}, {257, 256, 2}, {1024, 256, 4},
		{256, 16, 16}, {4, 16, 1}, {64, 16, 4},
	} {
		if got := NormalizedOps(c.d, c.nd); got != c.want {
			t.Fatalf("NormalizedOps(%v, %v) = %v, want %v", c.d, c.nd, got, c.want)
		}
	}
}

func TestVolumeModelSeedNumbers(t *testing.T) {
	const MiB = 1 << 20
	vol := func(piops, instCap float64) ProvisionedIOPSVolume {
		return ProvisionedIOPSVolume{SizeGiB: 100, ProvisionedIOPS: piops, InstanceCapMiBPerS: instCap}
	}
	for _, c := range []struct {
		v       ProvisionedIOPSVolume
		d       float64
		ops, bw float64 // bw in MiB/s
		limit   string
	}{
		// 300 PIOPS, not optimized: the PIOPS bind up to 256 KiB (the
		// digest's "~300 ops/s up to 64 KiB"), then the 320 MiB/s cap
		// would allow 320 ops/s of 1 MiB but 300/4 NOs = 75 binds first.
		{vol(300, 0), 4, 300, 300 * 4.0 / 1024, "iops"},
		{vol(300, 0), 64, 300, 300 * 64.0 / 1024, "iops"},
		{vol(300, 0), 256, 300, 75, "iops"},
		{vol(300, 0), 1024, 75, 75, "iops"},
		// 900 PIOPS: 900 ops/s at 4 and 32 KiB (measured 916 and 871).
		{vol(900, 0), 4, 900, 900 * 4.0 / 1024, "iops"},
		{vol(900, 0), 32, 900, 900 * 32.0 / 1024, "iops"},
		{vol(900, 0), 1024, 225, 225, "iops"},
		// 1800 PIOPS: 1800 at 4 KiB (measured 1788); at 1 MiB the volume's
		// 320 MiB/s cap binds before 1800/4 = 450.
		{vol(1800, 0), 4, 1800, 1800 * 4.0 / 1024, "iops"},
		{vol(1800, 0), 1024, 320, 320, "volume_bandwidth"},
		// An instance connection of 62.5 MiB/s binds at large ops.
		{vol(300, 62.5), 1024, 62.5, 62.5, "instance_bandwidth"},
		{vol(300, 62.5), 256, 250, 62.5, "instance_bandwidth"},
		{vol(300, 62.5), 64, 300, 300 * 64.0 / 1024, "iops"},
		// A 500 MiB/s connection does not lift the 320 MiB/s volume cap.
		{ProvisionedIOPSVolume{SizeGiB: 1000, ProvisionedIOPS: 20000, InstanceCapMiBPerS: 500}, 64, 5120, 320, "volume_bandwidth"},
	} {
		x, err := c.v.Evaluate(c.d)
		if err != nil {
			t.Fatal(err)
		}
		if !near(x.OpsPerS, c.ops, 1e-9) || !near(x.BytesPerS, c.bw*MiB, 1e-3) || x.Limit != c.limit {
			t.Fatalf("%+v at %v KiB = %+v, want %v ops/s, %v MiB/s, %s", c.v, c.d, x, c.ops, c.bw, c.limit)
		}
	}
}

func TestVolumeModelLimits(t *testing.T) {
	for _, c := range []struct {
		v    ProvisionedIOPSVolume
		want string
	}{
		{ProvisionedIOPSVolume{SizeGiB: 100, ProvisionedIOPS: 3001}, "exceeds 30 x size_gib = 3000"},
		{ProvisionedIOPSVolume{SizeGiB: 100, ProvisionedIOPS: 3000}, ""},
		{ProvisionedIOPSVolume{SizeGiB: 1000, ProvisionedIOPS: 20001}, "exceeds the maximum of 20000"},
		{ProvisionedIOPSVolume{SizeGiB: 1000, ProvisionedIOPS: 20000}, ""},
		{ProvisionedIOPSVolume{SizeGiB: 100, ProvisionedIOPS: 0}, "params.provisioned_iops is 0"},
		{ProvisionedIOPSVolume{ProvisionedIOPS: 300}, "params.size_gib is 0"},
		{ProvisionedIOPSVolume{SizeGiB: 100, ProvisionedIOPS: 300, InstanceCapMiBPerS: -1}, "instance_cap_mib_per_s"},
	} {
		err := c.v.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Fatalf("%+v: err = %v, want %q", c.v, err, c.want)
		}
	}
	if _, err := (ProvisionedIOPSVolume{SizeGiB: 100, ProvisionedIOPS: 300}).Evaluate(0); err == nil {
		t.Fatal("op size 0 must fail")
	}
}
