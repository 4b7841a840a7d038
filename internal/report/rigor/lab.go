package rigor

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/lab"
)

// eventLab is the event kind internal/campaign records when a treatment's
// lab comes up (detail: {"name","subnet","cgroups","hosts":[HostState...]}).
const eventLab = "lab"

// labRecord is one lab event: the hosts a treatment (or probe) ran on,
// with their types, limits and prices.
type labRecord struct {
	Time  time.Time
	Name  string          `json:"name"`
	Hosts []lab.HostState `json:"hosts"`
}

// labs are the campaign's lab events in time order.
func (c *campaign) labs() []labRecord {
	var out []labRecord
	for _, e := range c.events {
		if e.Kind != eventLab {
			continue
		}
		var r labRecord
		if json.Unmarshal([]byte(e.Detail), &r) != nil || len(r.Hosts) == 0 {
			continue
		}
		r.Time = e.Time
		out = append(out, r)
	}
	return out
}

// labAt is the lab that was up at t: the last lab event at or before t
// (each treatment brings its lab up, recording it, before its first run
// or window); nil when there is none.
func labAt(labs []labRecord, t time.Time) *labRecord {
	var found *labRecord
	for i := range labs {
		if !labs[i].Time.After(t) {
			found = &labs[i]
		}
	}
	return found
}

// shape is how a treatment was deployed, from its lab: the servers that
// ran the target (the managed server's host, else every lab host).
type shape struct {
	Lab     string
	Hosts   []string
	Types   string  // the hosts' instance types, e.g. "small" or "small+medium"
	Servers int     // number of hosts counted as servers
	VCPUs   float64 // vCPUs per server (mean over the servers)
	// PricePerHour is the price of one server per hour (mean over the
	// servers): the instance type's price plus its volumes' monthly price
	// spread over lab.HoursPerMonth hours.
	PricePerHour float64
}

// shapeOf derives the shape from a lab record; host names the managed
// server's host ("" = every host is a server). ok is false when the lab
// has no such host.
func shapeOf(r *labRecord, host string) (shape, bool) {
	if r == nil {
		return shape{}, false
	}
	s := shape{Lab: r.Name}
	types := map[string]bool{}
	var vcpus, price float64
	for _, h := range r.Hosts {
		if host != "" && h.Name != host {
			continue
		}
		s.Hosts = append(s.Hosts, h.Name)
		types[h.Type] = true
		vcpus += h.VCPUs
		p := h.PricePerHour
		for _, v := range h.Volumes {
			p += v.MonthlyPrice / lab.HoursPerMonth
		}
		price += p
	}
	if len(s.Hosts) == 0 {
		return shape{}, false
	}
	s.Servers = len(s.Hosts)
	s.VCPUs = vcpus / float64(s.Servers)
	s.PricePerHour = price / float64(s.Servers)
	names := make([]string, 0, len(types))
	for t := range types {
		names = append(names, t)
	}
	sort.Strings(names)
	s.Types = strings.Join(names, "+")
	return s, true
}

// treatmentShape is the shape of a treatment's runs: the lab up when its
// first run started.
func (c *campaign) treatmentShape(labs []labRecord, t treatment) (shape, bool) {
	var first time.Time
	for _, r := range c.runs {
		if r.Treatment == t.name && (first.IsZero() || r.Start.Before(first)) {
			first = r.Start
		}
	}
	if first.IsZero() {
		return shape{}, false
	}
	return shapeOf(labAt(labs, first), managedHost(t.spec))
}

// differ reports whether shapes differ in server count or size, the
// condition for a scaling comparison (seed-digest §5).
func differ(shapes []shape) bool {
	for _, s := range shapes[1:] {
		if s.Servers != shapes[0].Servers || s.VCPUs != shapes[0].VCPUs {
			return true
		}
	}
	return false
}
