package spec

import (
	"fmt"
	"net"
	"slices"
	"strings"
)

// Agents is load.agents: the run's load comes from `headroom agent`
// processes on several hosts instead of this process, each offering a share
// (docs/fleet.md, "Load agents"). The coordinator (this process) merges
// their intervals exactly.
type Agents struct {
	// Hosts lists one agent per entry: a lab host, an ssh host of infra:,
	// or "local" (a process on this machine). A name may repeat for
	// several agents on one host.
	Hosts []string `yaml:"hosts"`
	// Binary is the headroom program the agents run (default: this one).
	// On an ssh host without it there (or without it given), this program
	// is copied to the host's cache when the OS and architecture match
	// (docs/fleet.md).
	Binary string `yaml:"binary"`
	// TokenFile holds the shared token agents authenticate with (relative
	// to the spec file); default: a fresh random token for the agents this
	// campaign starts.
	TokenFile string `yaml:"token_file"`
	// Listen is the address the coordinator listens on for its agents
	// (default: any free port, on 127.0.0.1 when every agent is local,
	// else on every address; docs/fleet.md).
	Listen string `yaml:"listen"`
}

// LocalAgent is the agent host that means "a process on this machine".
const LocalAgent = "local"

// agents checks load.agents.
func (c *checker) agents(s *Spec) {
	a, l := s.Load.Agents, &s.Load
	if len(a.Hosts) == 0 {
		c.fail("load.agents.hosts", "list at least one host for an agent (a lab or infra host, or local)")
	}
	known := []string{LocalAgent}
	if s.Lab != nil {
		for _, h := range s.Lab.Hosts {
			known = append(known, h.Name)
		}
	}
	if s.Infra != nil {
		for _, h := range s.Infra.Hosts {
			known = append(known, h.Name)
		}
	}
	for i, h := range a.Hosts {
		if !slices.Contains(known, h) {
			c.fail(fmt.Sprintf("load.agents.hosts[%d]", i), "%q is not a host of the spec; use one of %s", h, strings.Join(known, ", "))
		}
	}
	if a.Listen != "" {
		if _, _, err := net.SplitHostPort(a.Listen); err != nil {
			c.fail("load.agents.listen", "%q is not HOST:PORT (e.g. 0.0.0.0:7070, or :0 for any free port)", a.Listen)
		}
	}
	n := len(a.Hosts)
	if l.Model == "open" && l.Arrival == "constant" && n > 1 {
		c.fail("load.arrival", "constant arrivals cannot be split among %d agents (their requests would fall at the same instants); use arrival: poisson, whose superposition stays Poisson", n)
	}
	if l.Schedule != nil {
		c.fail("load.agents", "a load.schedule cannot be split among agents yet; use rates:")
	}
	if l.Model == "closed" && l.Clients != nil {
		for _, v := range l.Clients.Values {
			if v < float64(n) {
				c.fail("load.clients", "%v clients cannot be dealt out to %d agents; every agent needs at least one client", v, n)
				break
			}
		}
	}
	if s.Workload.RequestDistribution == "latest" && n > 1 {
		c.fail("workload.request_distribution", "latest cannot be split among agents (each inserts its own key range, so none knows the newest key); use zipfian or uniform")
	}
	if s.Workload.Consistency != nil {
		c.fail("load.agents", "the consistency workload runs in the coordinator only; remove load.agents or workload.consistency")
	}
}
