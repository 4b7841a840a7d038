package spec

import (
	"strings"
	"testing"
)

// load.agents: a valid fleet decodes; each mistake is one sentence at its
// field.
func TestLoadAgents(t *testing.T) {
	base := "name: camp\ntarget: {type: fake}\nworkload: {ycsb: c}\nphases: {measure: 10s}\nlab: {hosts: [{name: load1, type: small}, {name: load2, type: small}]}\n"
	s, err := Parse("a.yaml", []byte(base+"load: {model: open, rates: [100], agents: {hosts: [load1, load2, local], binary: bin/headroom, listen: ':7070'}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a := s.Load.Agents; a == nil || len(a.Hosts) != 3 || a.Hosts[2] != LocalAgent || a.Binary != "bin/headroom" || a.Listen != ":7070" {
		t.Errorf("agents: %+v", s.Load.Agents)
	}
	for _, c := range []struct{ src, path, want string }{
		{"load: {model: open, rates: [100], agents: {hosts: []}}", "load.agents.hosts", "at least one host"},
		{"load: {model: open, rates: [100], agents: {hosts: [db9]}}", "load.agents.hosts[0]", `"db9" is not a host of the spec; use one of local, load1, load2`},
		{"load: {model: open, rates: [100], agents: {hosts: [local], listen: nope}}", "load.agents.listen", "not HOST:PORT"},
		{"load: {model: open, arrival: constant, rates: [100], agents: {hosts: [load1, load2]}}", "load.arrival", "superposition stays Poisson"},
		{"load: {model: closed, clients: [1, 4], agents: {hosts: [load1, load2]}}", "load.clients", "every agent needs at least one client"},
		{"workload: {ycsb: d, request_distribution: latest}\nload: {model: open, rates: [100], agents: {hosts: [load1, load2]}}", "workload.request_distribution", "latest cannot be split"},
	} {
		src := base + c.src + "\n"
		if strings.HasPrefix(c.src, "workload:") {
			src = strings.Replace(base, "workload: {ycsb: c}\n", "", 1) + c.src + "\n"
		}
		_, err := Parse("a.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), c.path+": ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %s: ...%s", c.src, err, c.path, c.want)
		}
	}
	// One agent may use constant arrivals: nothing is superposed.
	if _, err := Parse("a.yaml", []byte(base+"load: {model: open, arrival: constant, rates: [100], agents: {hosts: [local]}}\n")); err != nil {
		t.Errorf("one agent with constant arrivals: %v", err)
	}
}
