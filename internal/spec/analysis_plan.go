package spec

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/headroom-dev/headroom/internal/results"
)

// PlanAnalysis is analysis.plan: the economic models of profit planning
// (docs/planning.md; seed-digest §7, seed 003 ch. 7). Everything is
// optional: the SLA defaults to seed 003 Table 16, the cost to the lab's
// catalog prices (or $4 per node-hour without a lab), the objective to
// profit.
type PlanAnalysis struct {
	SLA       PlanSLA  `yaml:"sla"`
	Cost      PlanCost `yaml:"cost"`
	Objective string   `yaml:"objective"` // profit | throughput | p99 | cost_per_req_s
}

// PlanSLA is analysis.plan.sla.
type PlanSLA struct {
	// Steps: revenue per request in cents as a step function of response
	// time, in ascending up_to; a last step without up_to takes every
	// slower request.
	Steps []PlanStep `yaml:"steps"`
	// File holds the steps instead (a YAML file with a steps: list,
	// relative to the spec).
	File string `yaml:"file"`
	// Ops gives operations steps of their own (op name -> steps).
	Ops map[string][]PlanStep `yaml:"ops"`
	// ErrorCents is earned per failed or dropped request (negative: a
	// penalty); StaleCents per stale read. Left out: not priced.
	ErrorCents *float64 `yaml:"error_cents"`
	StaleCents *float64 `yaml:"stale_cents"`
}

// PlanStep is one step of the SLA.
type PlanStep struct {
	UpTo  Duration `yaml:"up_to"`
	Cents float64  `yaml:"cents"`
}

// PlanCost is analysis.plan.cost.
type PlanCost struct {
	Basis    string                    `yaml:"basis"`     // catalog | node_hour | table
	NodeHour float64                   `yaml:"node_hour"` // $ per node-hour (default 4)
	Configs  map[string]PlanConfigCost `yaml:"configs"`   // treatment name -> cost (basis table)
}

// PlanConfigCost is one configuration's fixed and variable cost.
type PlanConfigCost struct {
	FixedPerHour       float64 `yaml:"fixed_per_hour"`
	PerMillionRequests float64 `yaml:"per_million_requests"`
}

// planObjectives are the words analysis.plan.objective takes.
var planObjectives = []string{"profit", "throughput", "p99", "cost_per_req_s"}

// planCostBases are the words analysis.plan.cost.basis takes.
var planCostBases = []string{"catalog", "node_hour", "table"}

// planAnalysis checks analysis.plan and reads its SLA file into Steps.
func (c *checker) planAnalysis(_ *Spec, p *PlanAnalysis) {
	const at = "analysis.plan."
	if p.SLA.File != "" {
		if len(p.SLA.Steps) > 0 {
			c.fail(at+"sla.file", "is given together with sla.steps; give the steps in one place")
		} else if steps, err := readPlanSteps(c.file, p.SLA.File); err != nil {
			c.fail(at+"sla.file", "%v", err)
		} else {
			p.SLA.Steps = steps
		}
	}
	c.planSteps(at+"sla.steps", p.SLA.Steps)
	for op, st := range p.SLA.Ops {
		if len(st) == 0 {
			c.fail(at+"sla.ops."+op, "has no steps; give at least one, e.g. [{up_to: 1s, cents: 0.0033}]")
		}
		c.planSteps(at+"sla.ops."+op, st)
	}
	for name, v := range map[string]*float64{"error_cents": p.SLA.ErrorCents, "stale_cents": p.SLA.StaleCents} {
		if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0)) {
			c.fail(at+"sla."+name, "is not a number; give cents per request, e.g. -0.0033")
		}
	}
	if p.Objective != "" {
		c.oneOf(at+"objective", p.Objective, planObjectives...)
	}
	if p.Cost.Basis != "" {
		c.oneOf(at+"cost.basis", p.Cost.Basis, planCostBases...)
	}
	if c.has(at+"cost.node_hour") && !(p.Cost.NodeHour > 0) || math.IsInf(p.Cost.NodeHour, 0) {
		c.fail(at+"cost.node_hour", "%v is not a price; give dollars per node-hour above 0, e.g. 4", p.Cost.NodeHour)
	}
	if p.Cost.Basis == "table" && len(p.Cost.Configs) == 0 {
		c.fail(at+"cost.configs", "required with basis table; give each treatment a cost, e.g. app1-db1: {fixed_per_hour: 8}")
	}
	for name, cc := range p.Cost.Configs {
		if cc.FixedPerHour < 0 || cc.PerMillionRequests < 0 || math.IsNaN(cc.FixedPerHour+cc.PerMillionRequests) || math.IsInf(cc.FixedPerHour+cc.PerMillionRequests, 0) {
			c.fail(at+"cost.configs."+name, "costs must be non-negative numbers; give fixed_per_hour and per_million_requests in dollars")
		}
	}
}

// planSteps checks one step list: ascending up_to, only the last without.
func (c *checker) planSteps(path string, steps []PlanStep) {
	var prev time.Duration
	for i, st := range steps {
		at := fmt.Sprintf("%s[%d]", path, i)
		if math.IsNaN(st.Cents) || math.IsInf(st.Cents, 0) {
			c.fail(at+".cents", "is not a number; give cents per request, e.g. 0.0033")
		}
		d := st.UpTo.Duration
		switch {
		case d == 0 && i != len(steps)-1:
			c.fail(at+".up_to", "required except on the last step (the last step alone takes every slower request)")
		case d < 0 || d != 0 && d <= prev:
			c.fail(at+".up_to", "%v does not follow %v; give the steps in ascending up_to", d, prev)
		}
		if d > 0 {
			prev = d
		}
	}
}

// readPlanSteps reads an SLA file: a YAML document with a steps: list.
func readPlanSteps(specFile, file string) ([]PlanStep, error) {
	path := file
	if !filepath.IsAbs(path) && specFile != "" {
		path = filepath.Join(filepath.Dir(specFile), file)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the SLA file %s: %v; give a YAML file with a steps: list, relative to the spec", path, err)
	}
	var node yaml.Node
	if err := yaml.Unmarshal(data, &node); err != nil {
		return nil, fmt.Errorf("%s is not YAML: %v", path, err)
	}
	var doc struct {
		Steps []PlanStep `yaml:"steps"`
	}
	if errs := DecodeNode(path, &node, "", &doc); errs != nil {
		return nil, fmt.Errorf("%s: %v", path, errs)
	}
	if len(doc.Steps) == 0 {
		return nil, fmt.Errorf("%s has no steps; write steps: [{up_to: 1s, cents: 0.0033}, ..., {cents: -0.0033}]", path)
	}
	return doc.Steps, nil
}

// Facts is analysis.plan as the results store keeps it.
func (p PlanAnalysis) Facts() results.Plan {
	out := results.Plan{Objective: p.Objective, SLA: results.PlanSLA{File: p.SLA.File, ErrorCents: p.SLA.ErrorCents, StaleCents: p.SLA.StaleCents,
		Steps: planStepFacts(p.SLA.Steps)}, Cost: results.PlanCost{Basis: p.Cost.Basis, NodeHour: p.Cost.NodeHour}}
	for op, st := range p.SLA.Ops {
		if out.SLA.Ops == nil {
			out.SLA.Ops = map[string][]results.SLAStep{}
		}
		out.SLA.Ops[op] = planStepFacts(st)
	}
	for name, cc := range p.Cost.Configs {
		if out.Cost.Configs == nil {
			out.Cost.Configs = map[string]results.ConfigCost{}
		}
		out.Cost.Configs[name] = results.ConfigCost{FixedPerHour: cc.FixedPerHour, PerMillionRequests: cc.PerMillionRequests}
	}
	return out
}

func planStepFacts(in []PlanStep) []results.SLAStep {
	var out []results.SLAStep
	for _, s := range in {
		out = append(out, results.SLAStep{UpTo: results.Dur(s.UpTo.Duration), Cents: s.Cents})
	}
	return out
}
