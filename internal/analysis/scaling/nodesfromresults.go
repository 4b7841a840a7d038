package scaling

import (
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/analysis/capacity"
	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/analysis/stats"
	"github.com/headroom-dev/headroom/internal/results"
)

// NodeComparison is a comparison over node count of the treatments that
// ran a managed cluster.
type NodeComparison struct {
	Result NodeResult
	// Deployments are the lab deployments of the compared treatments, by
	// name; a treatment whose cluster ran on this machine has none.
	Deployments map[string]Deployment
	// Notes say where an estimate is weaker than it looks, then the
	// analysis's own notes.
	Notes []string
	// Problem is why the comparison could not be made; Result is then
	// empty.
	Problem error
	// OnPeak: some treatment met the SLO at no level, so throughputs and
	// the response times "at capacity" are each treatment's peak
	// throughput's instead of its capacity's (FromCurves).
	OnPeak bool
}

// FromClusters compares the capacity curves of the treatments whose
// target ran a managed cluster (results.Target.Cluster): node count =
// the cluster's nodes as it started; node type, size (vCPUs relative to
// the smallest type) and price from the lab hosts it ran on
// (TreatmentDeployment); throughput, and the mean response time at the
// common load below the knees, as FromCurves gives them; the
// response-time distribution pooled over the runs at that load and at the
// level whose throughput FromCurves took (the capacity estimate's, or the
// peak's when some treatment met the SLO at no level). It returns nil unless at least two cluster
// treatments differ in node count or node size.
func FromClusters(r *results.Results, curves []capacity.TreatmentCurve) *NodeComparison {
	var tcs []capacity.TreatmentCurve
	var ds []Deployment
	var onLab []bool
	allLab := true
	for _, tc := range curves {
		if tc.Treatment.Target.Cluster == nil {
			continue
		}
		// A cluster without lab hosts runs on this machine even when the
		// campaign has a lab: the lab's hosts are not its nodes.
		d, ok := TreatmentDeployment(r, tc.Treatment)
		ok = ok && len(tc.Treatment.Target.Hosts) > 0
		tcs, ds, onLab = append(tcs, tc), append(ds, d), append(onLab, ok)
		allLab = allLab && ok
	}
	if len(tcs) < 2 {
		return nil
	}
	out := &NodeComparison{Deployments: map[string]Deployment{}}
	ref := math.Inf(1)
	for i, d := range ds {
		if onLab[i] {
			out.Deployments[tcs[i].Treatment.Name] = d
			ref = math.Min(ref, d.VCPUs)
		}
	}
	shapes := map[string]Shape{}
	var cs []capacity.Curve
	differ := false
	for i, tc := range tcs {
		s := Shape{Servers: float64(tc.Treatment.NodeCount()), Size: 1}
		if allLab && ref > 0 {
			s.Size = ds[i].VCPUs / ref
		}
		if onLab[i] {
			s.PricePerHour = ds[i].PricePerHour
		}
		shapes[tc.Treatment.Name] = s
		cs = append(cs, tc.Curve)
		first := shapes[tcs[0].Treatment.Name]
		differ = differ || s.Servers != first.Servers || s.Size != first.Size
	}
	if !differ {
		return nil
	}
	for _, tc := range tcs {
		for _, e := range tc.Treatment.Events {
			if e.Action == results.ActionAddNode || e.Action == results.ActionRemoveNode {
				out.Notes = append(out.Notes, fmt.Sprintf("treatment %s adds or removes nodes during its runs: its figures are counted at the %d nodes it started with, but mix node counts (see the elasticity section)",
					quote(tc.Treatment.Name), tc.Treatment.NodeCount()))
				break
			}
		}
	}
	if !allLab {
		out.Notes = append(out.Notes, "some clusters ran on this machine rather than on lab hosts: node sizes are unknown, so every node counts as size 1, and only lab nodes have a price")
	}
	ts, notes, err := FromCurves(cs, shapes)
	peak := onPeak(cs) != "" // the throughput FromCurves took: capacity or peak
	out.OnPeak = peak
	if err != nil {
		out.Problem = err
		return out
	}
	out.Notes = append(out.Notes, notes...)
	nts := make([]NodeTreatment, len(ts))
	for i, t := range ts {
		tc := tcs[i]
		nt := NodeTreatment{Treatment: t, AtLoad: NoRT, AtCapacity: NoRT}
		if onLab[i] {
			nt.Type = ds[i].Types
		}
		if !math.IsNaN(t.Load) && t.Load != 0 {
			nt.AtLoad = rtAt(tc.Input, t.Load)
		}
		if j := throughputIndex(tc.Curve, peak); j >= 0 {
			nt.AtCapacity = rtAt(tc.Input, tc.Curve.Points[j].Level.Level)
		}
		nts[i] = nt
	}
	res, err := AnalyzeNodes(nts, "")
	if err != nil {
		out.Problem = err
		return out
	}
	out.Result = res
	out.Notes = append(out.Notes, res.Notes...)
	return out
}

// rtAt pools every successful request of the runs at level (all
// operation types, the measured phase) into one distribution.
func rtAt(in levels.Input, level float64) RTDist {
	var hs []*hdrhistogram.Histogram
	for _, rd := range in.Runs {
		if rd.Run.Level != level {
			continue
		}
		if l := rd.Latencies["all"]; l != nil && l.TotalCount() > 0 {
			if h, err := l.Histogram(); err == nil {
				hs = append(hs, h)
			}
		}
	}
	h := stats.Merge(hs)
	if h == nil || h.TotalCount() == 0 {
		d := NoRT
		d.Level = level
		return d
	}
	return RTDist{Level: level, N: h.TotalCount(), Mean: h.Mean(), StdDev: h.StdDev(), P99: stats.Percentile(h, 99)}
}
