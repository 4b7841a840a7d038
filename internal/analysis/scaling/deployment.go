package scaling

import (
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
)

// Deployment is how a treatment was deployed, from the lab facts of its
// results: the lab hosts that ran its target.
type Deployment struct {
	Lab     string
	Hosts   []string
	Types   string  // the hosts' instance types, e.g. "small" or "small+medium"
	Servers int     // number of hosts counted as servers
	VCPUs   float64 // vCPUs per server (mean over the servers)
	// PricePerHour is the price of one server per hour (mean over the
	// servers): the instance type's price plus its volumes' monthly price
	// spread over results.HoursPerMonth hours.
	PricePerHour float64
}

// DeploymentAt is the deployment at time at: the servers of the lab that
// was up then (the last to come up at or before at), with the limits and
// prices in force at that moment. hosts names the hosts that ran the
// target (a managed server's host); none means every host of the lab is a
// server. ok is false without a lab, or when the lab has none of hosts.
func DeploymentAt(r *results.Results, at time.Time, hosts []string) (Deployment, bool) {
	l, ok := r.LabAt(at)
	if !ok {
		return Deployment{}, false
	}
	d := Deployment{Lab: l.Name}
	types := map[string]bool{}
	var vcpus, price float64
	for _, h := range l.Hosts {
		if len(hosts) > 0 && !slices.Contains(hosts, h.Host) {
			continue
		}
		// A change between the lab coming up and at (set_cpu, say) counts.
		if now, ok := r.HostLimits(h.Host, at); ok && !now.From.Before(l.Up) {
			h = now
		}
		d.Hosts = append(d.Hosts, h.Host)
		types[h.Type] = true
		vcpus += h.VCPUs
		price += h.HourlyCost()
	}
	if len(d.Hosts) == 0 {
		return Deployment{}, false
	}
	d.Servers = len(d.Hosts)
	d.VCPUs = perServer(vcpus, d.Servers)
	d.PricePerHour = price / float64(d.Servers)
	names := make([]string, 0, len(types))
	for t := range types {
		names = append(names, t)
	}
	sort.Strings(names)
	d.Types = strings.Join(names, "+")
	return d, true
}

// TreatmentDeployment is the deployment of a treatment's runs: the lab up
// when its first run started (each treatment brings its lab up before its
// first run), with the treatment's target hosts. ok is false when the
// treatment has no run or no lab.
func TreatmentDeployment(r *results.Results, t results.Treatment) (Deployment, bool) {
	var first time.Time
	for _, run := range r.Runs() {
		if run.Treatment == t.Name && (first.IsZero() || run.Start.Before(first)) {
			first = run.Start
		}
	}
	if first.IsZero() {
		return Deployment{}, false
	}
	return DeploymentAt(r, first, t.Target.Hosts)
}

// perServer is a sum of vCPUs over n servers, to a millionth of a vCPU
// (finer than a CPU quota's microseconds per 100 ms period). Without the
// rounding eight hosts of 0.1 vCPU sum to 0.7999999999999999, and a
// cluster of them would not have the size of one of four such hosts.
func perServer(sum float64, n int) float64 {
	return math.Round(sum/float64(n)*1e6) / 1e6
}

// Differ reports whether deployments differ in server count or size, the
// condition for a scaling comparison (seed-digest §5).
func Differ(ds []Deployment) bool {
	for _, d := range ds[1:] {
		if d.Servers != ds[0].Servers || d.VCPUs != ds[0].VCPUs {
			return true
		}
	}
	return false
}

// Shapes turns deployments into the analysis's shapes, by treatment name:
// each size is its vCPUs per server relative to the smallest among them.
func Shapes(names []string, ds []Deployment) map[string]Shape {
	ref := math.Inf(1)
	for _, d := range ds {
		ref = math.Min(ref, d.VCPUs)
	}
	out := map[string]Shape{}
	for i, n := range names {
		d := ds[i]
		size := 1.0
		if ref > 0 {
			size = d.VCPUs / ref
		}
		out[n] = Shape{Servers: float64(d.Servers), Size: size, PricePerHour: d.PricePerHour}
	}
	return out
}

// CostPerReqPerSec is what a deployment costs per month per req/s of
// throughput: servers × price per server-hour × HoursPerMonth / throughput
// ($ per month per req/s). NaN without a price or a positive throughput.
func CostPerReqPerSec(servers int, pricePerHour, throughput float64) float64 {
	if !(pricePerHour > 0) || !(throughput > 0) || math.IsInf(throughput, 0) {
		return math.NaN()
	}
	return float64(servers) * pricePerHour * HoursPerMonth / throughput
}
