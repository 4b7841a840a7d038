package lab

import (
	"fmt"
	"strconv"
)

// RegionSpec is one entry of lab.regions: a region the lab's hosts can be
// placed in (hosts[].region), and the rate at which each of its hosts
// reaches hosts of the other regions. The lab shapes rate only: netem is
// not available on the machines Headroom's lab targets, so no latency is
// added between regions (docs/fleet.md, "Regions").
type RegionSpec struct {
	Name string `yaml:"name"`
	// LinkMbitToOthers caps each host's traffic to hosts of other regions,
	// per direction (0 = only the hosts' own link rates).
	LinkMbitToOthers float64 `yaml:"link_mbit_to_others"`
}

// resolveRegions checks the regions hosts name against lab.regions and
// gives each host the rate towards other regions. Hosts may carry a region
// label without lab.regions (a label only, no shaping).
func (d *Definition) resolveRegions(hosts []HostConfig) error {
	rate := map[string]float64{}
	for i, r := range d.Regions {
		p := fmt.Sprintf("lab.regions[%d]", i)
		if !validHostName(r.Name) {
			return fmt.Errorf("%s.name: %q must start with a letter and have at most 16 letters, digits or '-'", p, r.Name)
		}
		if _, dup := rate[r.Name]; dup {
			return fmt.Errorf("%s.name: region %q is listed twice", p, r.Name)
		}
		if r.LinkMbitToOthers < 0 {
			return fmt.Errorf("%s.link_mbit_to_others: must be positive (or left out), got %v", p, r.LinkMbitToOthers)
		}
		rate[r.Name] = r.LinkMbitToOthers
	}
	for i := range hosts {
		h := &hosts[i]
		if h.Region == "" {
			continue
		}
		r, ok := rate[h.Region]
		if !ok && len(d.Regions) > 0 {
			return fmt.Errorf("lab.hosts: host %s is in region %q, which lab.regions does not list", h.Name, h.Region)
		}
		h.RegionLinkMbit = r
	}
	return nil
}

// unlimitedMbit stands for "no limit" where a rate must be given (the root
// class of a host whose own link is unlimited): 10 Gbit/s, more than a
// veth pair carries on the 2-core machines the lab targets, and small
// enough for htb's burst arithmetic.
const unlimitedMbit = 10000

// shapeRegions is setLinkRate for a host whose traffic to other regions
// is capped: towards the host, the token bucket of its link as for any
// host; from the host, an htb tree whose root is the host's link rate,
// with one class for traffic to other regions' hosts (capped at
// RegionLinkMbit) and a default class for the rest. Hosts added while the
// lab runs are not classified by hosts made before them.
func (l *Lab) shapeRegions(h *HostState, mbit float64) error {
	if err := shape("", h.Veth, mbit); err != nil {
		return err
	}
	link := mbit
	if link <= 0 {
		link = unlimitedMbit
	}
	other := min(h.RegionLinkMbit, link)
	ns, dev := h.Netns, "eth0"
	_ = shape(ns, dev, 0) // drop the plain bucket (or an earlier tree)
	kbit := func(m float64) string { return strconv.FormatInt(int64(m*1000), 10) + "kbit" }
	burst := func(m float64) string { return strconv.FormatInt(max(int64(m*1e6/8/100), 32<<10), 10) }
	steps := [][]string{
		{"qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "10"},
		{"class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", kbit(link), "ceil", kbit(link), "burst", burst(link), "cburst", burst(link)},
		{"class", "add", "dev", dev, "parent", "1:1", "classid", "1:10", "htb", "rate", kbit(link), "ceil", kbit(link), "burst", burst(link), "cburst", burst(link)},
		{"class", "add", "dev", dev, "parent", "1:1", "classid", "1:20", "htb", "rate", kbit(other), "ceil", kbit(other), "burst", burst(other), "cburst", burst(other)},
	}
	for _, o := range l.state.Hosts {
		if o.Region != "" && o.Region != h.Region {
			steps = append(steps, []string{"filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1",
				"u32", "match", "ip", "dst", o.Addr + "/32", "flowid", "1:20"})
		}
	}
	for _, s := range steps {
		if err := tcNS(ns, s...); err != nil {
			return fmt.Errorf("shaping host %s's traffic to other regions: %w", h.Name, err)
		}
	}
	return nil
}
