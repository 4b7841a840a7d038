package campaign

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/cost"
	"github.com/headroom-dev/headroom/internal/analysis/esl"
	assess "github.com/headroom-dev/headroom/internal/analysis/pressure"
	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/target/registry"
)

// proposal is a change to a base treatment's spec: the settings that make
// it, a label for the verifying treatment's name ("iops-1800", "nodes-8"),
// and the change in words. Group is the lab.hosts name whose nodes a
// scale-out multiplies ("" when the change is to one host).
type proposal struct {
	set   []results.Setting
	label string
	what  string
	group string
}

// errNotInLab: the finding's host is not one a spec field provisions.
var errNotInLab = errors.New("the host is not a lab host, so no spec field provisions more of it")

// changeOf is the change that applies a persistent-pressure finding to the
// base treatment's lab, as cost.Action words it (seed 000 §5.2): option A,
// more of the pressed quality on the same host (more IOPS, a larger
// instance type), and where the catalog offers no more of it, more nodes
// of the host's tier (option B's scale-out).
func changeOf(r *results.Results, t assess.Treatment, base *spec.Spec, f assess.Finding) (proposal, error) {
	if t.Lab == nil || base.Lab == nil {
		return proposal{}, errNotInLab
	}
	hi := -1
	for i, h := range base.Lab.Hosts {
		if inGroup(f.Host, h.Name, h.Count) {
			hi = i
		}
	}
	var hl *results.HostLimits
	for i := range t.Lab.Hosts {
		if t.Lab.Hosts[i].Host == f.Host {
			hl = &t.Lab.Hosts[i]
		}
	}
	if hi < 0 || hl == nil {
		return proposal{}, fmt.Errorf("host %s is not in the lab: section", f.Host)
	}
	up, upErr := scaleUp(r, t, base.Lab.Hosts[hi], hi, hl, f)
	if upErr == nil {
		return up, nil
	}
	out, outErr := scaleOut(base, hi)
	if outErr != nil {
		return proposal{}, fmt.Errorf("%v; nor can the host's tier scale out: %v", upErr, outErr)
	}
	out.what += ": " + upErr.Error()
	return out, nil
}

// inGroup reports whether host is one of the hosts a lab.hosts entry
// named name with count makes (name, or name1, name2, ...).
func inGroup(host, name string, count int) bool {
	if host == name {
		return true
	}
	return count > 1 && strings.HasPrefix(host, name) && strings.Trim(host[len(name):], "0123456789") == "" && len(host) > len(name)
}

// scaleUp is option A: more of the pressed quality on the same host.
func scaleUp(r *results.Results, t assess.Treatment, hs lab.HostSpec, hi int, hl *results.HostLimits, f assess.Finding) (proposal, error) {
	res := resourceOf(t, f)
	cat := t.Lab.Catalog
	switch {
	case strings.HasPrefix(res, monitor.ResourceVolumePrefix) && f.Quality == esl.OpsPerS:
		return moreIOPS(r, t, hs, hi, hl, strings.TrimPrefix(res, monitor.ResourceVolumePrefix))
	case strings.HasPrefix(res, monitor.ResourceVolumePrefix) && f.Quality == esl.BytesPerS:
		// A volume's bandwidth is capped by the volume or by the
		// instance's connection to it; only the second has a larger step.
		it, ok := cat.Instance(hl.Type)
		if !ok || it.VolumeMiBps == 0 {
			return proposal{}, fmt.Errorf("the volume is at its own bandwidth cap, which no larger instance type lifts")
		}
		return largerType(hs, hi, hl, cat, "volume connection (MiB/s)", func(x results.InstanceType) float64 { return x.VolumeMiBps }, "")
	case res == monitor.ResourceCPU:
		return largerType(hs, hi, hl, cat, "vCPUs", func(x results.InstanceType) float64 { return x.VCPUs }, "vcpus")
	case strings.HasPrefix(res, monitor.ResourceNetPrefix):
		return largerType(hs, hi, hl, cat, "link rate", func(x results.InstanceType) float64 { return x.NetworkMbit }, "network_mbit")
	}
	return proposal{}, fmt.Errorf("no spec field provisions more %s of %s", f.Quality, res)
}

// moreIOPS raises a volume's provisioned IOPS to analysis.esl.option_a.iops,
// else cost.DefaultIOPSFactor times, within the volume type's limits.
func moreIOPS(r *results.Results, t assess.Treatment, hs lab.HostSpec, hi int, hl *results.HostLimits, name string) (proposal, error) {
	vi := slices.IndexFunc(hs.Volumes, func(v lab.VolumeSpec) bool { return v.Name == name })
	v, ok := hl.Volume(name)
	if vi < 0 || !ok {
		return proposal{}, fmt.Errorf("volume %s is not in the lab: section", name)
	}
	var want float64
	if rt, ok := r.Treatment(t.Name); ok {
		want = rt.Analysis.ESL.OptionA.IOPS
	}
	if want == 0 {
		want = cost.DefaultIOPSFactor * v.IOPS
	}
	if vt, known := t.Lab.Catalog.VolumeType(v.Type); known {
		if vt.MaxIOPS > 0 {
			want = math.Min(want, vt.MaxIOPS)
		}
		if vt.IOPSPerGiB > 0 {
			want = math.Min(want, vt.IOPSPerGiB*v.SizeGiB)
		}
	}
	if !(want > v.IOPS) {
		return proposal{}, fmt.Errorf("the volume is at its type's limit of %g IOPS for %g GiB", v.IOPS, v.SizeGiB)
	}
	value := fmt.Sprint(want)
	return proposal{
		set:   []results.Setting{{Path: fmt.Sprintf("lab.hosts[%d].volumes[%d].iops", hi, vi), Value: value}},
		label: "iops-" + value,
		what:  fmt.Sprintf("raise the provisioned IOPS of %s's volume %s from %g to %g", hl.Host, name, v.IOPS, want),
	}, nil
}

// largerType moves the host to the cheapest catalog type with more of
// what the finding lacks than its own type has. A host that runs at a
// fraction of its type's vCPUs or link (lab.hosts[].vcpus, network_mbit
// set: a host scaled down so that a cluster fits one machine) keeps that
// fraction of the larger type, as cost.Action's wording says; override is
// the field that holds it ("" when the quality has none).
func largerType(hs lab.HostSpec, hi int, hl *results.HostLimits, cat *results.Catalog, what string, of func(results.InstanceType) float64, override string) (proposal, error) {
	if cat == nil {
		return proposal{}, fmt.Errorf("the lab's catalog is not in the results, so no larger type can be chosen")
	}
	nominal := 0.0
	if it, ok := cat.Instance(hl.Type); ok {
		nominal = of(it)
	}
	var best *results.InstanceType
	for i, it := range cat.InstanceTypes {
		if of(it) > nominal && (best == nil || it.PricePerHour < best.PricePerHour) {
			best = &cat.InstanceTypes[i]
		}
	}
	if best == nil {
		return proposal{}, fmt.Errorf("%s has the most %s the catalog offers (%g)", hl.Host, what, nominal)
	}
	p := proposal{
		set:   []results.Setting{{Path: fmt.Sprintf("lab.hosts[%d].type", hi), Value: best.Name}},
		label: "type-" + best.Name,
		what:  fmt.Sprintf("move %s from %s to %s (%s %g instead of %g)", hl.Host, hl.Type, best.Name, what, of(*best), nominal),
	}
	var now float64
	switch override {
	case "vcpus":
		now = hs.VCPUs
	case "network_mbit":
		now = hs.NetworkMbit
	}
	if now > 0 && nominal > 0 {
		scaled := now / nominal * of(*best)
		p.set = append(p.set, results.Setting{Path: fmt.Sprintf("lab.hosts[%d].%s", hi, override), Value: strconv.FormatFloat(scaled, 'g', 6, 64)})
		p.what += fmt.Sprintf(", keeping the host's %g of its type's %s: %g", now/nominal, what, scaled)
	}
	return p, nil
}

// scaleOut doubles the nodes of the tier that runs on lab.hosts[hi]: a
// managed cluster whose hosts: prefix names the entry (its count and
// cluster.nodes grow together), or a target's own tier that follows a
// host name prefix (the apptier target's application servers: the count
// alone). Doubling is the smallest step that halves each node's share of
// a load that holds a node's capacity at its limit.
func scaleOut(s *spec.Spec, hi int) (proposal, error) {
	hs := s.Lab.Hosts[hi]
	count := max(hs.Count, 1)
	prefix, nodes, isCluster := "", count, false
	if m := registry.ManagedOf(s.Target.Options); m != nil && m.Cluster != nil && m.Cluster.Hosts != "" {
		prefix, nodes, isCluster = m.Cluster.Hosts, m.Cluster.NodeCount(), true
	} else if fac, ok := registry.Lookup(s.Target.Type); ok && fac.ScalesNodes && fac.TierPrefix != nil {
		prefix = fac.TierPrefix(s.Target.Options)
	}
	if prefix == "" || !strings.HasPrefix(hs.Name, prefix) {
		return proposal{}, fmt.Errorf("no tier of the %s target runs on lab.hosts[%d] (%s) by a host name prefix, so a larger count would not serve the load", s.Target.Type, hi, hs.Name)
	}
	for j, o := range s.Lab.Hosts {
		if j != hi && strings.HasPrefix(o.Name, prefix) {
			return proposal{}, fmt.Errorf("the tier's hosts (prefix %q) are lab.hosts[%d] and lab.hosts[%d]; put them in one entry with a count", prefix, hi, j)
		}
	}
	limit := lab.MaxHostCount
	if isCluster {
		limit = min(limit, deploy.MaxClusterNodes)
	}
	want := min(2*nodes, limit-(count-nodes))
	if want <= nodes {
		return proposal{}, fmt.Errorf("the tier already has %d nodes, the most a lab or cluster may have here", nodes)
	}
	newCount := count + want - nodes
	p := proposal{
		set:   []results.Setting{{Path: fmt.Sprintf("lab.hosts[%d].count", hi), Value: strconv.Itoa(newCount)}},
		label: "nodes-" + strconv.Itoa(want),
		what:  fmt.Sprintf("scale %s out from %d to %d nodes", hs.Name, nodes, want),
		group: hs.Name,
	}
	if isCluster {
		p.set = append(p.set, results.Setting{Path: "target.managed.cluster.nodes", Value: strconv.Itoa(want)})
	}
	if hs.Count <= 1 {
		p.what += fmt.Sprintf(" (hosts %s1 to %s%d)", hs.Name, hs.Name, newCount)
	}
	return p, nil
}
