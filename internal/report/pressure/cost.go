package pressure

import (
	"fmt"
	"math"

	"github.com/headroom-dev/headroom/internal/analysis/cost"
	"github.com/headroom-dev/headroom/internal/lab"
)

// DefaultMaxNodes bounds option B's scale-out cluster when
// analysis.esl.option_b.max_nodes is not given.
const DefaultMaxNodes = 100

// CostRow is seed 000 Table 1 for one change: the base treatment, option
// A (another treatment, measured) and option B (the base scaled out,
// throughput extrapolated).
type CostRow struct {
	Base, A    string // treatment names
	Comparison cost.Comparison
	Prices     string // where the prices come from
}

// deployment prices a lab's data hosts (dataHosts) as a cost.Deployment
// of identical nodes: the instance's recorded hourly price and, for the
// volume, the catalog's unit prices when a catalog fits the record
// (CatalogFor), else the volume's recorded monthly price.
func deployment(r *LabRecord) (cost.Deployment, string, error) {
	hosts := dataHosts(r)
	if len(hosts) == 0 {
		return cost.Deployment{}, "", fmt.Errorf("the lab event lists no hosts")
	}
	h0 := hosts[0]
	for _, h := range hosts[1:] {
		if !sameConfig(h0, h) {
			return cost.Deployment{}, "", fmt.Errorf("hosts %s (%s) and %s (%s) differ; the comparison scales out identical nodes", h0.Name, describeHost(h0), h.Name, describeHost(h))
		}
	}
	d := cost.Deployment{Nodes: len(hosts), Prices: cost.Prices{InstanceHourly: h0.PricePerHour}}
	from := "instance prices as recorded in the lab event"
	if len(h0.Volumes) > 0 {
		v := h0.Volumes[0]
		d.VolumeGiB, d.IOPS = v.SizeGiB, v.IOPS
		cat, catFrom := CatalogFor(r)
		var vt lab.VolumeType
		ok := false
		if cat != nil {
			vt, ok = cat.Volume(v.Type)
		}
		if ok {
			d.Prices.VolumeGiBMonth, d.Prices.IOPSMonth = vt.PricePerGiBMonth, vt.PricePerIOPSMonth
			from += fmt.Sprintf("; %s volumes at $%g per GiB-month and $%g per IOPS-month from %s", v.Type, vt.PricePerGiBMonth, vt.PricePerIOPSMonth, catFrom)
		} else {
			d.Prices.VolumeMonthly = v.MonthlyPrice
			from += "; the volume's monthly price as recorded"
		}
	}
	return d, from, nil
}

func sameConfig(a, b lab.HostState) bool {
	if a.Type != b.Type || a.PricePerHour != b.PricePerHour || a.VCPUs != b.VCPUs || a.NetworkMbit != b.NetworkMbit || len(a.Volumes) != len(b.Volumes) {
		return false
	}
	for i := range a.Volumes {
		va, vb := a.Volumes[i], b.Volumes[i]
		if va.Type != vb.Type || va.SizeGiB != vb.SizeGiB || va.IOPS != vb.IOPS || va.MonthlyPrice != vb.MonthlyPrice {
			return false
		}
	}
	return true
}

// compareCosts prices every treatment with a lab and a throughput, and
// compares each with the base treatment as seed 000 Table 1 does
// (seed-digest §4): option A is the treatment as measured, option B the
// base scaled out linearly to the largest cluster below A's throughput,
// at most maxNodes nodes (0 = DefaultMaxNodes).
func (a *Assessment) compareCosts(maxNodes int) {
	if maxNodes == 0 {
		maxNodes = DefaultMaxNodes
	}
	deps := map[string]cost.Deployment{}
	prices := map[string]string{}
	for i := range a.Treatments {
		t := &a.Treatments[i]
		switch {
		case t.Lab == nil:
			t.CostNote = errNoCost.Error()
			continue
		case !(t.Throughput > 0):
			t.CostNote = "no completed run with a throughput"
			continue
		}
		d, from, err := deployment(t.Lab)
		if err != nil {
			t.CostNote = err.Error()
			continue
		}
		o := cost.Option{Deployment: d, Throughput: t.Throughput, MonthlyCost: d.Monthly()}
		o.PerReqPerS = o.MonthlyCost / o.Throughput
		t.Cost = &o
		deps[t.Name], prices[t.Name] = d, from
	}
	base, ok := deps[a.Base]
	if !ok || len(a.Treatments) < 2 {
		return
	}
	var baseT float64
	for _, t := range a.Treatments {
		if t.Name == a.Base {
			baseT = t.Throughput
		}
	}
	for _, t := range a.Treatments {
		d, ok := deps[t.Name]
		if t.Name == a.Base || !ok {
			continue
		}
		c, err := cost.CompareWithin(base, baseT, d, t.Throughput, maxNodes)
		if err != nil {
			a.note("cost of %s against %s: %v", t.Name, a.Base, err)
			continue
		}
		from := prices[t.Name]
		if prices[a.Base] != from {
			from = prices[a.Base] + " (base); " + from
		}
		a.Costs = append(a.Costs, CostRow{Base: a.Base, A: t.Name, Comparison: c, Prices: from})
	}
}

// money prints dollars with cents, or more digits below one dollar.
func money(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	if v < 1 {
		return fmt.Sprintf("%s$%.3f", sign, v)
	}
	return fmt.Sprintf("%s$%.2f", sign, v)
}
