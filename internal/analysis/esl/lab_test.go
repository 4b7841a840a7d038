package esl

import (
	"testing"

	"github.com/headroom-dev/headroom/internal/results"
)

// The analytical model of a lab volume follows the limits in force, the
// catalog's caps, and a lower cap of its own.
func TestFromLabVolume(t *testing.T) {
	medium := &results.InstanceType{Name: "medium", VCPUs: 1, NetworkMbit: 50, VolumeMiBps: 62.5, PricePerHour: 0.18}
	piops := &results.VolumeType{Name: "piops", IOPSPerGiB: 30, MaxIOPS: 20000, MaxMiBps: 320, PricePerGiBMonth: 0.125, PricePerIOPSMonth: 0.065}
	vol := results.VolumeLimit{Name: "data", Type: "piops", SizeGiB: 100, IOPS: 300, MiBps: 62.5}
	m, err := FromLabVolume("db1", vol, medium, piops)
	if err != nil {
		t.Fatal(err)
	}
	p := m.Volume
	if m.Name != "db1/volume:data" || p.ProvisionedIOPS != 300 || p.InstanceCapMiBPerS != 62.5 || p.VolumeCapMiBPerS != 320 || p.MaxIOPSPerGiB != 30 || p.MaxIOPS != 20000 {
		t.Errorf("%s: params %+v", m.Name, p)
	}
	// min(300 / ceil(d/256), 62.5 MiB/s / d) (seed-digest §4).
	for _, c := range []struct{ kib, ops float64 }{{4, 300}, {64, 300}, {256, 250}, {1024, 62.5}} {
		e, err := m.ESL(OpsPerS, c.kib)
		if err != nil || e.Mean() != c.ops {
			t.Errorf("at %g KiB: %v, %v; want %g", c.kib, e.Mean(), err, c.ops)
		}
	}
	// A cap of 20 MiB/s below the connection's caps the volume.
	vol.MiBps = 20
	if m, _ = FromLabVolume("db1", vol, medium, piops); m.Volume.VolumeCapMiBPerS != 20 {
		t.Errorf("own cap: %+v", m.Volume)
	}
	// Without the types, the volume's own cap stands for the volume cap.
	if m, _ = FromLabVolume("db1", vol, nil, nil); m.Volume.VolumeCapMiBPerS != 20 || m.Volume.InstanceCapMiBPerS != 0 {
		t.Errorf("without a catalog: %+v", m.Volume)
	}
	// A stalled volume promises nothing while stalled.
	stalled := vol
	stalled.Stalled = true
	if m, err := FromLabVolume("db1", stalled, medium, piops); m != nil || err != nil {
		t.Errorf("stalled volume: model %+v, error %v; want none", m, err)
	}
	// No provisioned IOPS: no model; too many for the size: an error.
	vol.IOPS = 0
	if m, err := FromLabVolume("db1", vol, medium, piops); m != nil || err != nil {
		t.Errorf("unthrottled volume: %v, %v", m, err)
	}
	vol.IOPS = 4000
	if _, err := FromLabVolume("db1", vol, medium, piops); err == nil {
		t.Error("4000 IOPS on 100 GiB (over 30 per GiB) must not have a model")
	}
}
