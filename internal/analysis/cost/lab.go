package cost

import (
	"fmt"
	"math"
	"strings"

	"github.com/headroom-dev/headroom/internal/results"
)

// CatalogFor is the catalog whose types describe a lab as it came up: the
// one recorded with it, or the shipped one (results.ShippedCatalog) when
// every host and volume has the shipped type's price (a spec's own catalog
// may have replaced a type). It says where the catalog came from; nil when
// none fits.
func CatalogFor(l results.Lab) (*results.Catalog, string) {
	if l.Catalog != nil {
		return l.Catalog, "the catalog recorded with the lab"
	}
	c := results.ShippedCatalog()
	if c == nil {
		return nil, ""
	}
	for _, h := range l.Hosts {
		it, ok := c.Instance(h.Type)
		if !ok || !samePrice(it.PricePerHour, h.PricePerHour) {
			return nil, ""
		}
		for _, v := range h.Volumes {
			vt, ok := c.VolumeType(v.Type)
			if !ok || !samePrice(vt.PricePerGiBMonth*v.SizeGiB+vt.PricePerIOPSMonth*v.IOPS, v.MonthlyPrice) {
				return nil, ""
			}
		}
	}
	return c, "the shipped lab catalog (its prices match the recorded ones)"
}

func samePrice(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

// DataHosts are the hosts a cost comparison prices: those with a volume
// (the database's nodes), or all of them when none has one.
func DataHosts(hosts []results.HostLimits) []results.HostLimits {
	var out []results.HostLimits
	for _, h := range hosts {
		if len(h.Volumes) > 0 {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		return hosts
	}
	return out
}

// DescribeHost is a host's configuration in a few words, e.g. "medium (1
// vCPU, 50 Mbit/s) + piops 100 GiB at 300 IOPS".
func DescribeHost(h results.HostLimits) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%g vCPU", h.Type, h.VCPUs)
	if h.NetworkMbit > 0 {
		fmt.Fprintf(&b, ", %g Mbit/s", h.NetworkMbit)
	}
	b.WriteString(")")
	for _, v := range h.Volumes {
		fmt.Fprintf(&b, " + %s %g GiB", v.Type, v.SizeGiB)
		if v.IOPS > 0 {
			fmt.Fprintf(&b, " at %g IOPS", v.IOPS)
		}
	}
	return b.String()
}

// LabDeployment prices a lab's data hosts (DataHosts) as a Deployment of
// identical nodes: the instance's recorded hourly price and, for the
// volume, the catalog's unit prices when cat has its type, else the
// volume's recorded monthly price. catFrom says where cat came from; the
// returned text says where every price came from.
func LabDeployment(hosts []results.HostLimits, cat *results.Catalog, catFrom string) (Deployment, string, error) {
	hosts = DataHosts(hosts)
	if len(hosts) == 0 {
		return Deployment{}, "", fmt.Errorf("the lab event lists no hosts")
	}
	h0 := hosts[0]
	for _, h := range hosts[1:] {
		if !sameConfig(h0, h) {
			return Deployment{}, "", fmt.Errorf("hosts %s (%s) and %s (%s) differ; the comparison scales out identical nodes", h0.Host, DescribeHost(h0), h.Host, DescribeHost(h))
		}
	}
	d := Deployment{Nodes: len(hosts), Prices: Prices{InstanceHourly: h0.PricePerHour}}
	from := "instance prices as recorded in the lab event"
	if len(h0.Volumes) > 0 {
		v := h0.Volumes[0]
		d.VolumeGiB, d.IOPS = v.SizeGiB, v.IOPS
		if vt, ok := cat.VolumeType(v.Type); ok {
			d.Prices.VolumeGiBMonth, d.Prices.IOPSMonth = vt.PricePerGiBMonth, vt.PricePerIOPSMonth
			from += fmt.Sprintf("; %s volumes at $%g per GiB-month and $%g per IOPS-month from %s", v.Type, vt.PricePerGiBMonth, vt.PricePerIOPSMonth, catFrom)
		} else {
			d.Prices.VolumeMonthly = v.MonthlyPrice
			from += "; the volume's monthly price as recorded"
		}
	}
	return d, from, nil
}

func sameConfig(a, b results.HostLimits) bool {
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

// Money prints dollars with cents, or more digits below one dollar.
func Money(v float64) string {
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
