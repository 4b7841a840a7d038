package spec

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
)

const failuresBase = "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: closed, clients: [1]}\nphases: {warmup: 0s, measure: 10s}\n"

func TestFailuresAnalysis(t *testing.T) {
	s, err := Parse("t.yaml", []byte(failuresBase+"analysis:\n  failures: {write_check: true, tolerance: 0.1, stable: 3, detect_factor: 2, steady: 5s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := s.Analysis.Failures
	if !f.WriteCheck || f.Tolerance != 0.1 || f.Stable != 3 || f.DetectFactor != 2 || f.Steady.Duration != 5*time.Second {
		t.Errorf("analysis.failures = %+v", f)
	}
	for _, c := range []struct{ body, path, says string }{
		{"{tolerance: 1.5}", "tolerance", "outside (0, 1)"},
		{"{stable: -1}", "stable", "negative"},
		{"{detect_factor: 1}", "detect_factor", "above 1"},
		{"{steady: -1s}", "steady", "negative"},
	} {
		lines := parseErrors(t, failuresBase+"analysis:\n  failures: "+c.body+"\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "analysis.failures."+c.path+": ") || !strings.Contains(lines[0], c.says) {
			t.Errorf("%s: %q, want one error at %s saying %q", c.body, lines, c.path, c.says)
		}
	}
}

// promote needs a managed postgres cluster or redis replica set; without
// a lab it names a replica node. (The spec tests register no postgres or
// redis target, so the target-specific rule is checked directly.)
func TestPromoteEvent(t *testing.T) {
	pg := &Spec{Target: Target{Type: "postgres"}}
	for host, bad := range map[string]bool{"node2": false, "": false, "db2": true} {
		c := &checker{}
		c.promoteEvent("events[0]", pg, host)
		if got := len(c.errs) > 0; got != bad {
			t.Errorf("promote %q without a lab: errors %v", host, c.errs)
		}
	}
	c := &checker{}
	c.promoteEvent("events[0]", &Spec{Target: Target{Type: "mysql"}}, "node2")
	if len(c.errs) != 1 || !strings.Contains(c.errs[0].Error(), "no failover") {
		t.Errorf("promote on mysql: %v", c.errs)
	}
	// A redis replica set (mode replicas, the default) fails over; a
	// Redis Cluster elects its own primaries.
	redisOpts := func(mode string) any {
		return struct{ Managed *deploy.Managed }{&deploy.Managed{Cluster: &deploy.Cluster{Nodes: 2, Mode: mode}}}
	}
	for mode, bad := range map[string]bool{"": false, "replicas": false, "cluster": true} {
		c := &checker{}
		c.promoteEvent("events[0]", &Spec{Target: Target{Type: "redis", Options: redisOpts(mode)}}, "node2")
		if got := len(c.errs) > 0; got != bad || bad && !strings.Contains(c.errs[0].Error(), "elects its own primaries") {
			t.Errorf("promote on redis mode %q: errors %v", mode, c.errs)
		}
	}
	lines := parseErrors(t, failuresBase+"events:\n  - {at: 5s, action: promote}\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "events[0].action: ") || !strings.Contains(lines[0], "managed.cluster") {
		t.Errorf("promote without a cluster: %q", lines)
	}
}
