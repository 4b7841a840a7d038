package cost

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/analysis/slp"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
)

// DefaultIOPSFactor is how much a "provision more ops_per_s" finding
// raises a volume's provisioned IOPS when analysis.esl.option_a.iops is
// not given: seed 000 §5.2 went from 300 to 1800.
const DefaultIOPSFactor = 6

// ActionInput is what a finding's suggested change is worded and priced
// from.
type ActionInput struct {
	Resource string              // the finding's resource, e.g. volume:data
	Host     *results.HostLimits // the lab host as it came up; nil outside a lab
	Catalog  *results.Catalog    // nil when unknown
	OptionA  results.ESLOptionA  // analysis.esl.option_a
	Nodes    int                 // data hosts the change applies to
}

// Action words the change a finding suggests (option A of seed 000 §5.2
// for a persistent pressure), priced from the catalog when it is known.
func Action(f slp.Finding, in ActionInput) string {
	switch f.Class {
	case slp.ProvisionMore:
		return provisionMore(f, in)
	case slp.TransientSaturation:
		return fmt.Sprintf("find what ran while %s %s was saturated (the shaded periods of its time series: compaction, a backup, a migration) and move it, or provision for it", f.Host, f.Service)
	case slp.OverProvisioned:
		return overProvisioned(f, in)
	}
	return ""
}

func provisionMore(f slp.Finding, in ActionInput) string {
	h, res := in.Host, in.Resource
	if h == nil {
		return fmt.Sprintf("provision more %s for %s %s, or spread the load over more nodes", f.Quality, f.Host, f.Service)
	}
	switch {
	case strings.HasPrefix(res, monitor.ResourceVolumePrefix) && len(h.Volumes) > 0 && f.Quality == esl.OpsPerS:
		return moreIOPS(h, in.Catalog, in.OptionA, in.Nodes)
	case strings.HasPrefix(res, monitor.ResourceVolumePrefix) && len(h.Volumes) > 0 && f.Quality == esl.BytesPerS:
		return moreBandwidth(h, in.Catalog)
	case res == monitor.ResourceCPU:
		return largerType(h, in.Catalog, "vCPUs", func(t results.InstanceType) float64 { return t.VCPUs }, h.VCPUs)
	case strings.HasPrefix(res, monitor.ResourceNetPrefix):
		return largerType(h, in.Catalog, "link rate (Mbit/s)", func(t results.InstanceType) float64 { return t.NetworkMbit }, h.NetworkMbit)
	}
	return fmt.Sprintf("provision more %s for %s %s", f.Quality, f.Host, f.Service)
}

// moreIOPS is option A of seed 000 §5.2: raise the volume's provisioned
// IOPS (option_a.iops, default DefaultIOPSFactor x), within the volume
// type's limits.
func moreIOPS(h *results.HostLimits, cat *results.Catalog, optA results.ESLOptionA, nodes int) string {
	v := h.Volumes[0]
	want := optA.IOPS
	if want == 0 {
		want = DefaultIOPSFactor * v.IOPS
	}
	vt, known := cat.VolumeType(v.Type)
	limit := math.Inf(1)
	if known {
		if vt.MaxIOPS > 0 {
			limit = vt.MaxIOPS
		}
		if vt.IOPSPerGiB > 0 {
			limit = math.Min(limit, vt.IOPSPerGiB*v.SizeGiB)
		}
	}
	if want > limit {
		want = limit
	}
	if !(want > v.IOPS) {
		return fmt.Sprintf("%s's volume %s is at its type's limit of %g IOPS for %g GiB; use a larger volume (more IOPS per GiB allowed) or more nodes", h.Host, v.Name, v.IOPS, v.SizeGiB)
	}
	s := fmt.Sprintf("raise the provisioned IOPS of %s's volume %s from %g to %g", h.Host, v.Name, v.IOPS, want)
	if known && vt.PricePerIOPSMonth > 0 {
		per := (want - v.IOPS) * vt.PricePerIOPSMonth
		s += fmt.Sprintf(" (+%s per volume-month at $%g per IOPS-month", Money(per), vt.PricePerIOPSMonth)
		if nodes > 1 {
			s += fmt.Sprintf("; +%s for %d nodes", Money(per*float64(nodes)), nodes)
		}
		s += ")"
	}
	return s + fmt.Sprintf("; verify it with a treatment that sets the volume's iops: %g", want)
}

// moreBandwidth names what caps a volume's bandwidth and what lifts it.
func moreBandwidth(h *results.HostLimits, cat *results.Catalog) string {
	v := h.Volumes[0]
	it, okI := cat.Instance(h.Type)
	vt, okV := cat.VolumeType(v.Type)
	if okI && it.VolumeMiBps > 0 && (!okV || vt.MaxMiBps == 0 || it.VolumeMiBps < vt.MaxMiBps) && (v.MiBps == 0 || v.MiBps >= it.VolumeMiBps) {
		return largerType(h, cat, "volume connection (MiB/s)", func(t results.InstanceType) float64 { return t.VolumeMiBps }, it.VolumeMiBps)
	}
	return fmt.Sprintf("%s's volume %s is at its bandwidth cap (%g MiB/s); spread the data over more nodes or volumes", h.Host, v.Name, v.MiBps)
}

// largerType suggests the cheapest catalog type with more of what the
// finding lacks. A lab host may run at a fraction of its type's vCPUs or
// link (lab.hosts[].vcpus, network_mbit: a host scaled down so that a
// cluster fits one machine): the comparison is then with the type's own
// figure, and the suggestion says what the same fraction of the larger
// type is, which is what a treatment verifying it would set.
func largerType(h *results.HostLimits, cat *results.Catalog, what string, of func(results.InstanceType) float64, now float64) string {
	if cat == nil {
		return fmt.Sprintf("move %s to an instance type with more %s than %g, or add nodes", h.Host, what, now)
	}
	nominal := now
	if it, ok := cat.Instance(h.Type); ok && of(it) > 0 {
		nominal = of(it)
	}
	var cands []results.InstanceType
	for _, t := range cat.InstanceTypes {
		if of(t) > nominal {
			cands = append(cands, t)
		}
	}
	if len(cands) == 0 {
		return fmt.Sprintf("%s has the most %s the catalog offers (%g); add nodes", h.Host, what, nominal)
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].PricePerHour < cands[j].PricePerHour })
	c := cands[0]
	delta := (c.PricePerHour - h.PricePerHour) * HoursPerMonth
	change := Money(delta) + " more per month"
	if delta < 0 {
		change = Money(-delta) + " less per month"
	}
	s := fmt.Sprintf("move %s from %s to %s (%s %g instead of %g; $%g/h instead of $%g/h, %s)",
		h.Host, h.Type, c.Name, what, of(c), nominal, c.PricePerHour, h.PricePerHour, change)
	if now > 0 && now != nominal {
		f := now / nominal
		s += fmt.Sprintf("; this lab host runs at %g of its type's %s (%g), so a treatment that verifies it keeps that fraction: %g on %s", f, what, now, f*of(c), c.Name)
	}
	return s
}

// overProvisioned suggests provisioning less.
func overProvisioned(f slp.Finding, in ActionInput) string {
	if h := in.Host; h != nil && strings.HasPrefix(in.Resource, monitor.ResourceVolumePrefix) && len(h.Volumes) > 0 {
		v := h.Volumes[0]
		return fmt.Sprintf("%s's volume %s (%g IOPS) has room to spare: its p99 pressure is %.0f%%; provision fewer IOPS, or keep them for growth", h.Host, v.Name, v.IOPS, f.P99)
	}
	return fmt.Sprintf("%s %s has room to spare (p99 pressure %.0f%%); provision less of it, or keep it for growth", f.Host, f.Service, f.P99)
}
