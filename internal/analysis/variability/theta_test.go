package variability

import (
	"strings"
	"testing"
	"time"
)

// Theta is the target's CPU, never the load generator's (issue 14). The
// campaign records the generator's machine (hostinfo facts: hostname gen,
// 2 CPUs); its CPU samples are left out when the target's host was
// sampled too, and when the target ran beside the generator, the
// generator process's share (client CPU 40% of one core = 20% of 2 CPUs)
// is taken out of the machine's 60%: theta 40%.
func TestThetaIsNeverTheGenerators(t *testing.T) {
	const gen = `{"hostname":"gen","cpus":2}`
	run := func(host string, alsoHost string) runSpec {
		return runSpec{treatment: "x", lambda: 10, tau: 2 * time.Millisecond, theta: 60, host: host, flatCPU: true,
			clientCPU: 40, alsoHost: alsoHost, alsoCPU: 95}
	}

	// The target on db, the generator on gen: theta is db's 60%, whatever
	// gen's CPU (95%) was. Before, two sampled hosts were an error.
	p := newProfileOn(t, gen)
	for rep := 1; rep <= 2; rep++ {
		r := run("db", "gen")
		r.rep = rep
		p.add(r)
	}
	res := p.analyze(Config{})
	x := res.Instances[0]
	if x.Host != "db" || x.LessClient || !near(x.Levels[0].Theta.Mean, 60, 1e-9) {
		t.Errorf("target on db: host %q less client %v theta %+v", x.Host, x.LessClient, x.Levels[0].Theta)
	}

	// Only the generator's machine was sampled and the target ran beside
	// it, out of process: 60% - 40%/2 = 40%.
	p = newProfileOn(t, gen)
	for rep := 1; rep <= 2; rep++ {
		r := run("gen", "")
		r.rep = rep
		p.add(r)
	}
	res = p.analyze(Config{})
	x = res.Instances[0]
	if x.Host != "gen" || !x.LessClient || !near(x.Levels[0].Theta.Mean, 40, 1e-9) {
		t.Errorf("target beside the generator: host %q less client %v theta %+v", x.Host, x.LessClient, x.Levels[0].Theta)
	}
	if len(x.Notes) != 1 || !strings.Contains(x.Notes[0], "gen also ran the load generator: theta is its CPU less the generator process's share") {
		t.Errorf("notes %q", x.Notes)
	}
	// Naming the generator's host does not bring its process back in.
	if x := p.analyze(Config{Host: "gen"}).Instances[0]; !x.LessClient || !near(x.Levels[0].Theta.Mean, 40, 1e-9) {
		t.Errorf("host: gen set: %+v", x.Levels[0].Theta)
	}

	// In the generator's own process (SQLite, say): unknown, with the
	// reason.
	in, err := p.input()
	if err != nil {
		t.Fatal(err)
	}
	if in.Generator != (Generator{Host: "gen", CPUs: 2}) {
		t.Fatalf("generator %+v", in.Generator)
	}
	in.InProcess = map[string]bool{"x": true}
	r, err := Analyze(in, Config{})
	if err != nil {
		t.Fatal(err)
	}
	x = r.Instances[0]
	if x.Host != "" || x.Levels[0].Theta.N != 0 || len(x.Notes) != 1 || !strings.Contains(x.Notes[0], "inside the load generator's own process") {
		t.Errorf("in process: host %q theta %+v notes %q", x.Host, x.Levels[0].Theta, x.Notes)
	}

	// A generator whose CPU count is not recorded cannot be taken out.
	in.InProcess, in.Generator.CPUs = nil, 0
	if r, err = Analyze(in, Config{}); err != nil || r.Instances[0].Levels[0].Theta.N != 0 || !strings.Contains(r.Instances[0].Notes[0], "CPU count is not recorded") {
		t.Errorf("no CPU count: %v %+v", err, r.Instances)
	}
}
