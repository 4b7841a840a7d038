package results

// Plan is analysis.plan: the SLA revenue model, the cost model and the
// objective of profit planning (seed 003 ch. 7, seed-digest §7). Zero
// values take the planner's defaults (seed 003 Table 16, $4 per
// node-hour or the lab's catalog prices, profit).
type Plan struct {
	SLA       PlanSLA  `json:"sla" yaml:"sla"`
	Cost      PlanCost `json:"cost" yaml:"cost"`
	Objective string   `json:"objective,omitempty" yaml:"objective"` // profit | throughput | p99 | cost_per_req_s
}

// PlanSLA is analysis.plan.sla: revenue per request as a step function of
// its response time, optionally per operation, with optional penalties.
type PlanSLA struct {
	// Steps in ascending up_to; a last step without up_to covers every
	// slower request. Empty = seed 003 Table 16.
	Steps []SLAStep `json:"steps,omitempty" yaml:"steps"`
	// File is where the steps came from (relative to the spec), read when
	// the spec was checked; Steps holds them.
	File string `json:"file,omitempty" yaml:"file"`
	// Ops gives some operations their own steps (op name -> steps).
	Ops map[string][]SLAStep `json:"ops,omitempty" yaml:"ops"`
	// ErrorCents is earned (negative: a penalty) per failed or dropped
	// request: the availability term; nil = not counted.
	ErrorCents *float64 `json:"error_cents,omitempty" yaml:"error_cents"`
	// StaleCents is earned per stale read: the staleness term, applied
	// only where staleness was measured; nil = not counted.
	StaleCents *float64 `json:"stale_cents,omitempty" yaml:"stale_cents"`
}

// SLAStep is one step: requests answered within UpTo (0 = any slower
// request, last step only) earn Cents.
type SLAStep struct {
	UpTo  Dur     `json:"up_to,omitempty" yaml:"up_to"`
	Cents float64 `json:"cents" yaml:"cents"`
}

// PlanCost is analysis.plan.cost.
type PlanCost struct {
	// Basis is catalog (the lab hosts' hourly prices), node_hour (a fixed
	// price per node-hour) or table (Configs); "" = catalog when the
	// results have lab prices, else node_hour.
	Basis    string                `json:"basis,omitempty" yaml:"basis"`
	NodeHour float64               `json:"node_hour,omitempty" yaml:"node_hour"` // $ per node-hour; 0 = 4 (seed 003 §7.5)
	Configs  map[string]ConfigCost `json:"configs,omitempty" yaml:"configs"`     // treatment name -> cost
}

// ConfigCost is one configuration's cost: a fixed part per hour and a
// variable part per million requests.
type ConfigCost struct {
	FixedPerHour       float64 `json:"fixed_per_hour" yaml:"fixed_per_hour"`
	PerMillionRequests float64 `json:"per_million_requests,omitempty" yaml:"per_million_requests"`
}
