// Package cost compares what scaling options cost per unit of achieved
// throughput, in $/month per req/s (seed-digest §4, seed 000 Table 1):
// option A provisions more of the pressured service on the same nodes,
// option B scales the original deployment out. It is a pure function of
// prices and measured throughputs; prices come from the caller (the lab's
// instance catalog or a cloud price list).
package cost

import (
	"fmt"
	"math"
)

// HoursPerMonth converts hourly prices to monthly ones (seed 000 Table 1
// prices a month as 730 hours).
const HoursPerMonth = 730

// MaxNodes bounds option B's cluster size: beyond it the inputs are
// surely wrong (a throughput in the wrong unit).
const MaxNodes = 100000

// Prices are what one node and its volume cost.
type Prices struct {
	InstanceHourly float64 // $ per instance-hour
	VolumeGiBMonth float64 // $ per GiB-month of volume
	IOPSMonth      float64 // $ per provisioned-IOPS-month
	// VolumeMonthly is a price per volume-month known only as a whole
	// (e.g. a lab volume's recorded monthly price when the catalog's unit
	// prices are not at hand); it adds to the per-GiB and per-IOPS prices.
	VolumeMonthly float64
}

// Deployment is a cluster of identical nodes, each with one volume.
type Deployment struct {
	Nodes     int
	VolumeGiB float64 // per node
	IOPS      float64 // provisioned IOPS of each node's volume (0 for volumes without)
	Prices    Prices
}

// NodeMonthly is one node's monthly cost:
//
//	instance hourly x 730 + GiB x $/GiB-month + IOPS x $/IOPS-month + volume $/month
func (d Deployment) NodeMonthly() float64 {
	p := d.Prices
	return p.InstanceHourly*HoursPerMonth + d.VolumeGiB*p.VolumeGiBMonth + d.IOPS*p.IOPSMonth + p.VolumeMonthly
}

// Monthly is the deployment's monthly cost: Nodes x NodeMonthly.
func (d Deployment) Monthly() float64 { return float64(d.Nodes) * d.NodeMonthly() }

func (d Deployment) check(name string) error {
	if d.Nodes < 1 {
		return fmt.Errorf("%s has %d nodes; give at least 1", name, d.Nodes)
	}
	for _, f := range []struct {
		field string
		v     float64
	}{{"VolumeGiB", d.VolumeGiB}, {"IOPS", d.IOPS}, {"Prices.InstanceHourly", d.Prices.InstanceHourly},
		{"Prices.VolumeGiBMonth", d.Prices.VolumeGiBMonth}, {"Prices.IOPSMonth", d.Prices.IOPSMonth}, {"Prices.VolumeMonthly", d.Prices.VolumeMonthly}} {
		if !(f.v >= 0) || math.IsInf(f.v, 1) {
			return fmt.Errorf("%s.%s is %v; it must be a non-negative number", name, f.field, f.v)
		}
	}
	if !(d.Monthly() > 0) {
		return fmt.Errorf("%s costs nothing; give its prices", name)
	}
	return nil
}

// Option is one deployment with its throughput and cost.
type Option struct {
	Deployment
	Throughput   float64 // req/s
	Extrapolated bool    // Throughput assumed linear in nodes rather than measured
	MonthlyCost  float64 // $/month
	PerReqPerS   float64 // $/month per req/s: MonthlyCost / Throughput
}

func option(d Deployment, throughput float64, extrapolated bool) Option {
	m := d.Monthly()
	return Option{Deployment: d, Throughput: throughput, Extrapolated: extrapolated, MonthlyCost: m, PerReqPerS: m / throughput}
}

// Comparison is seed 000 Table 1 for one deployment and workload.
type Comparison struct {
	Base Option // the measured original deployment
	A    Option // measured: the pressured service provisioned more
	B    Option // the original scaled out, throughput extrapolated
	// Savings is A.PerReqPerS - B.PerReqPerS: negative when option A
	// delivers a req/s for less.
	Savings float64
	// Capped says option B was held at the node limit of CompareWithin
	// although a larger cluster would still stay below A's throughput.
	Capped bool
}

// Compare builds the comparison (seed-digest §4). Option B scales base out
// assuming throughput linear in nodes, T(n) = baseThroughput x n /
// base.Nodes, and takes the largest n whose T(n) is strictly lower than
// option A's throughput, so that B never gets credit for more throughput
// than A achieved. n may be below base.Nodes when A achieved less than
// the base.
func Compare(base Deployment, baseThroughput float64, a Deployment, aThroughput float64) (Comparison, error) {
	return CompareWithin(base, baseThroughput, a, aThroughput, 0)
}

// CompareWithin is Compare with option B's cluster held at maxNodes
// nodes at most (0 = MaxNodes); Comparison.Capped says when the cap bound.
func CompareWithin(base Deployment, baseThroughput float64, a Deployment, aThroughput float64, maxNodes int) (Comparison, error) {
	if maxNodes < 0 {
		return Comparison{}, fmt.Errorf("the node limit of option B is %d; give a positive number, or 0 for %d", maxNodes, MaxNodes)
	}
	if err := base.check("the base deployment"); err != nil {
		return Comparison{}, err
	}
	if err := a.check("option A"); err != nil {
		return Comparison{}, err
	}
	for _, t := range []struct {
		name string
		v    float64
	}{{"the base throughput", baseThroughput}, {"option A's throughput", aThroughput}} {
		if !(t.v > 0) || math.IsInf(t.v, 1) {
			return Comparison{}, fmt.Errorf("%s is %v req/s; give the measured mean throughput", t.name, t.v)
		}
	}
	perNode := baseThroughput / float64(base.Nodes)
	n := int(math.Min(math.Ceil(aThroughput/perNode), MaxNodes+1)) - 1
	// Correct float rounding at the boundary: T(n) < A <= T(n+1).
	for n >= 1 && perNode*float64(n) >= aThroughput {
		n--
	}
	for n < MaxNodes && perNode*float64(n+1) < aThroughput {
		n++
	}
	if n < 1 {
		return Comparison{}, fmt.Errorf("option A's throughput %g req/s is below one base node's %g req/s; option B has no cluster to compare", aThroughput, perNode)
	}
	if n >= MaxNodes {
		return Comparison{}, fmt.Errorf("option B would need %d nodes or more; check that both throughputs are in req/s", MaxNodes)
	}
	capped := maxNodes > 0 && n > maxNodes
	if capped {
		n = maxNodes
	}
	b := base
	b.Nodes = n
	c := Comparison{Capped: capped,
		Base: option(base, baseThroughput, false),
		A:    option(a, aThroughput, false),
		B:    option(b, perNode*float64(n), true),
	}
	c.Savings = c.A.PerReqPerS - c.B.PerReqPerS
	return c, nil
}
