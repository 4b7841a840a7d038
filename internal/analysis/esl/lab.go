package esl

import (
	"fmt"

	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
)

// FromLabVolume is the analytical provisioned-IOPS model (seed-digest §4)
// of a lab host's volume with the limits in force: its size and
// provisioned IOPS; the instance type's volume connection as the instance
// cap and the volume type's bandwidth cap and IOPS rules, when the types
// are known (nil = not in a catalog). Without the volume type, the
// volume's own bandwidth cap (the lowest of the three as the lab applies
// it) stands for the volume cap; a cap set lower than both types' caps
// (a spec's mibps, a set_volume event) replaces it. It returns nil for a
// volume without provisioned IOPS (nothing is promised) and for a stalled
// one (stall_disk: it serves nothing while stalled, a failure rather than
// a service level).
func FromLabVolume(host string, vol results.VolumeLimit, instance *results.InstanceType, volType *results.VolumeType) (*Analytical, error) {
	if !(vol.IOPS > 0) || vol.Stalled {
		return nil, nil
	}
	p := ProvisionedIOPSVolume{SizeGiB: vol.SizeGiB, ProvisionedIOPS: vol.IOPS, VolumeCapMiBPerS: vol.MiBps}
	if instance != nil {
		p.InstanceCapMiBPerS = instance.VolumeMiBps
	}
	if volType != nil {
		p.VolumeCapMiBPerS = volType.MaxMiBps
		p.MaxIOPS, p.MaxIOPSPerGiB = volType.MaxIOPS, volType.IOPSPerGiB
		if volType.IOPSPerGiB == 0 {
			p.MaxIOPSPerGiB = DefaultMaxIOPSPerGiB
		}
	}
	// The volume's own cap, when lower than both the types give.
	lowest := p.VolumeCapMiBPerS
	if p.InstanceCapMiBPerS > 0 && (lowest == 0 || p.InstanceCapMiBPerS < lowest) {
		lowest = p.InstanceCapMiBPerS
	}
	if vol.MiBps > 0 && (lowest == 0 || vol.MiBps < lowest-1e-9) {
		p.VolumeCapMiBPerS = vol.MiBps
	}
	name := fmt.Sprintf("%s/%s%s", host, monitor.ResourceVolumePrefix, vol.Name)
	m, err := NewAnalytical(name, p)
	if err != nil {
		return nil, fmt.Errorf("the lab volume %s (%g IOPS, %g GiB) has no valid analytical model: %w", name, vol.IOPS, vol.SizeGiB, err)
	}
	return m, nil
}
