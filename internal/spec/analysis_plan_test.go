package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const planBase = `
name: p
target: {type: fake, cache_mb: 32, busy_timeout: 250ms}
workload: {ycsb: c}
load: {model: open, rates: [10]}
`

func TestPlanAnalysisSettings(t *testing.T) {
	s := mustParse(t, planBase+`
analysis:
  plan:
    sla:
      steps:
        - {up_to: 500ms, cents: 0.004}
        - {up_to: 2s, cents: 0.001}
        - {cents: -0.002}
      ops:
        update: [{up_to: 1s, cents: 0.01}]
      error_cents: -0.0033
    cost: {basis: node_hour, node_hour: 2.5}
    objective: profit
`)
	f := s.Analysis.Plan.Facts()
	if len(f.SLA.Steps) != 3 || f.SLA.Steps[0].UpTo.D() != 500*time.Millisecond || f.SLA.Steps[2].Cents != -0.002 ||
		len(f.SLA.Ops["update"]) != 1 || *f.SLA.ErrorCents != -0.0033 || f.Cost.NodeHour != 2.5 || f.Cost.Basis != "node_hour" || f.Objective != "profit" {
		t.Errorf("facts %+v", f)
	}
}

func TestPlanAnalysisReadsTheSLAFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sla.yaml"), []byte("steps:\n  - {up_to: 1s, cents: 0.003}\n  - {cents: -0.003}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "c.yaml")
	s, err := Parse(spec, []byte(planBase+"analysis:\n  plan:\n    sla: {file: sla.yaml}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Analysis.Plan.Facts().SLA.Steps; len(st) != 2 || st[0].Cents != 0.003 {
		t.Errorf("steps from the file: %+v", st)
	}
}

func TestPlanAnalysisErrors(t *testing.T) {
	for _, c := range []struct{ plan, want string }{
		{"sla: {steps: [{up_to: 2s, cents: 1}, {up_to: 1s, cents: 1}]}", "analysis.plan.sla.steps[1].up_to"},
		{"sla: {steps: [{cents: 1}, {up_to: 1s, cents: 1}]}", "analysis.plan.sla.steps[0].up_to"},
		{"sla: {file: missing.yaml}", "analysis.plan.sla.file"},
		{"objective: money", "analysis.plan.objective"},
		{"cost: {basis: cloud}", "analysis.plan.cost.basis"},
		{"cost: {node_hour: -1}", "analysis.plan.cost.node_hour"},
		{"cost: {basis: table}", "analysis.plan.cost.configs"},
		{"cost: {configs: {a: {fixed_per_hour: -3}}}", "analysis.plan.cost.configs.a"},
	} {
		errs := parseErrors(t, planBase+"analysis:\n  plan:\n    "+c.plan+"\n")
		if !strings.Contains(strings.Join(errs, "\n"), c.want) {
			t.Errorf("%s: errors %v do not name %s", c.plan, errs, c.want)
		}
	}
}
