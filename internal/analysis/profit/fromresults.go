package profit

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/wildcard"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// Configuration is one treatment of a results store as the planner sees
// it: its name, the field paths it set (its factors' values), its nodes.
type Configuration struct {
	Name      string            `json:"name"`
	Source    string            `json:"source,omitempty"` // the results store
	Params    map[string]string `json:"params,omitempty"`
	Nodes     int               `json:"nodes"`
	NodesFrom string            `json:"nodes_from"`
}

// Analysis is the money of a campaign (or of several merged ones that
// share a workload).
type Analysis struct {
	Sources   []string         `json:"sources"`
	SLA       SLA              `json:"sla"`
	Cost      CostModel        `json:"cost"`
	Objective wildcard.Metric  `json:"objective"`
	LevelUnit string           `json:"level_unit"` // req/s or clients
	Workload  results.Workload `json:"workload"`
	Configs   []Configuration  `json:"configs"`
	Runs      []Run            `json:"runs"`
	Cells     []Cell           `json:"cells"`
	Notes     []string         `json:"notes,omitempty"`
}

// Objectives maps the spec's objective words to metrics.
var Objectives = map[string]wildcard.Metric{
	"profit": wildcard.ProfitPerHour, "throughput": wildcard.Throughput, "p99": wildcard.P99,
	"cost_per_req_s": wildcard.CostPerReqMonth,
}

// Model turns analysis.plan into the SLA, the cost model and the
// objective; hasCatalog says whether every configuration has lab prices
// (the default basis is then catalog, else node_hour).
func Model(p results.Plan, hasCatalog bool) (SLA, CostModel, wildcard.Metric, error) {
	sla := DefaultSLA()
	if len(p.SLA.Steps) > 0 {
		sla.Steps = stepsOf(p.SLA.Steps)
	}
	for op, st := range p.SLA.Ops {
		if sla.Ops == nil {
			sla.Ops = map[string]Steps{}
		}
		sla.Ops[op] = stepsOf(st)
	}
	if c := p.SLA.ErrorCents; c != nil {
		d := *c / CentsPerDollar
		sla.ErrorDollars = &d
	}
	if c := p.SLA.StaleCents; c != nil {
		d := *c / CentsPerDollar
		sla.StaleDollars = &d
	}
	if err := sla.Check(); err != nil {
		return SLA{}, CostModel{}, "", fmt.Errorf("analysis.plan.%v", err)
	}
	cm := CostModel{Basis: p.Cost.Basis, NodeHour: p.Cost.NodeHour}
	if cm.NodeHour == 0 {
		cm.NodeHour = DefaultNodeHour
	}
	if cm.Basis == "" {
		cm.Basis = NodeHour
		if hasCatalog {
			cm.Basis = Catalog
		}
	}
	if len(p.Cost.Configs) > 0 {
		cm.Table = map[string]ConfigCost{}
		for k, v := range p.Cost.Configs {
			cm.Table[k] = ConfigCost{FixedPerHour: v.FixedPerHour, PerMillionRequests: v.PerMillionRequests}
		}
	}
	obj := wildcard.ProfitPerHour
	if p.Objective != "" {
		m, ok := Objectives[p.Objective]
		if !ok {
			return SLA{}, CostModel{}, "", fmt.Errorf("analysis.plan.objective %q is unknown; use profit, throughput, p99 or cost_per_req_s", p.Objective)
		}
		obj = m
	}
	return sla, cm, obj, nil
}

func stepsOf(in []results.SLAStep) Steps {
	out := make(Steps, len(in))
	for i, s := range in {
		out[i] = Step{UpTo: s.UpTo.D(), Dollars: s.Cents / CentsPerDollar}
	}
	return out
}

// Options override the stored analysis.plan settings (the CLI's flags);
// zero values keep them.
type Options struct {
	NodeHour  float64 // $ per node-hour; sets the basis to node_hour
	Basis     string
	Objective string
}

// FromResults prices every completed run of r with the store's
// analysis.plan settings (of its first treatment), overridden by o.
func FromResults(r *results.Results, o Options) (Analysis, error) {
	ts := r.Treatments()
	plan := ts[0].Analysis.Plan
	if o.Basis != "" {
		plan.Cost.Basis = o.Basis
	}
	if o.NodeHour > 0 {
		plan.Cost.NodeHour = o.NodeHour
		if o.Basis == "" {
			plan.Cost.Basis = NodeHour
		}
	}
	if o.Objective != "" {
		plan.Objective = o.Objective
	}
	source := r.Path()
	a := Analysis{Sources: []string{source}, LevelUnit: ts[0].Load.LevelUnit(), Workload: ts[0].Workload}
	hasCatalog := true
	for _, t := range ts {
		if len(r.CompletedRuns(t.Name)) > 0 && !hasPrices(r, t) {
			hasCatalog = false
		}
	}
	var err error
	a.SLA, a.Cost, a.Objective, err = Model(plan, hasCatalog)
	if err != nil {
		return a, fmt.Errorf("%s: %v", source, err)
	}
	withHistory, err := r.HistoryRuns()
	if err != nil {
		return a, err
	}
	hasHistory := map[int64]bool{}
	for _, id := range withHistory {
		hasHistory[id] = true
	}
	for _, t := range ts {
		runs := r.CompletedRuns(t.Name)
		if len(runs) == 0 {
			continue
		}
		if t.Load.LevelUnit() != a.LevelUnit {
			return a, fmt.Errorf("%s: treatment %q is measured in %s and %q in %s; plan one load model at a time", source, t.Name, t.Load.LevelUnit(), ts[0].Name, a.LevelUnit)
		}
		cfg := Configuration{Name: t.Name, Source: source, Params: map[string]string{}}
		for _, s := range t.Set {
			cfg.Params[s.Path] = s.Value
		}
		cfg.Nodes, cfg.NodesFrom = nodesOf(t)
		a.Configs = append(a.Configs, cfg)
		for _, run := range runs {
			in, err := runInput(r, run)
			if err != nil {
				return a, err
			}
			if in.Stale, err = staleReads(r, run, t.Load, hasHistory[run.ID]); err != nil {
				return a, err
			}
			c := Config{Name: t.Name, Nodes: cfg.Nodes, CatalogPerHour: catalogPerHour(r, t, run.Start)}
			pr, err := PriceRun(in, a.SLA, a.Cost, c)
			if err != nil {
				return a, fmt.Errorf("%s: %v", source, err)
			}
			a.Runs = append(a.Runs, pr)
		}
	}
	if len(a.Runs) == 0 {
		return a, fmt.Errorf("%s has no completed runs to price", source)
	}
	a.Cells = Cells(a.Runs)
	a.Notes = append(a.Notes, "response times are priced from the stored HdrHistograms (3 significant figures): each request earns the step of its bucket's highest value; the revenue min/max columns bound what requests within 0.1% of a step boundary may have earned")
	if a.SLA.StaleDollars != nil {
		a.Notes = append(a.Notes, staleNote(a.Runs))
	}
	return a, nil
}

func hasPrices(r *results.Results, t results.Treatment) bool {
	if t.Lab == nil || len(t.Lab.Hosts) == 0 {
		return false
	}
	runs := r.CompletedRuns(t.Name)
	return !math.IsNaN(catalogPerHour(r, t, runs[0].Start))
}

// catalogPerHour sums the hourly cost of the treatment's lab hosts as they
// were at t; NaN when a host has no recorded price.
func catalogPerHour(r *results.Results, t results.Treatment, at time.Time) float64 {
	if t.Lab == nil || len(t.Lab.Hosts) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, h := range t.Lab.Hosts {
		hl, ok := r.HostLimits(h, at)
		if !ok || hl.PricePerHour <= 0 {
			return math.NaN()
		}
		sum += hl.HourlyCost()
	}
	return sum
}

// nodesOf counts the hosts a configuration pays for: its lab hosts, else
// its cluster's nodes, else the hosts its target runs on, else one.
func nodesOf(t results.Treatment) (int, string) {
	switch {
	case t.Lab != nil && len(t.Lab.Hosts) > 0:
		return len(t.Lab.Hosts), "lab hosts"
	case t.Target.Cluster != nil && t.Target.Cluster.Nodes > 0:
		return t.Target.Cluster.Nodes, "cluster nodes"
	case len(t.Target.Hosts) > 0:
		return len(t.Target.Hosts), "target hosts"
	}
	return 1, "one server"
}

// runInput reads a run's measured-phase histograms and failures, streaming
// its intervals (one decoded at a time) into one histogram per operation.
func runInput(r *results.Results, run results.Run) (RunInput, error) {
	in := RunInput{ID: run.ID, Config: run.Treatment, Level: run.Level, Repetition: run.Repetition,
		Seconds: run.Summary.MeasureSecs, Unit: time.Microsecond, Stale: -1, Throughput: run.Summary.Throughput}
	byOp := map[string]int{}
	var first string
	var d time.Duration
	err := r.EachInterval(run.ID, "measure", func(iv *store.Interval) error {
		if first == "" {
			first = iv.Op
		}
		if iv.Op == first {
			d += iv.Duration
		}
		in.Failed += iv.Errors + iv.Dropped
		if iv.Hist == nil {
			return nil
		}
		i, ok := byOp[iv.Op]
		if !ok {
			i = len(in.Ops)
			byOp[iv.Op] = i
			in.Ops = append(in.Ops, OpHist{Op: iv.Op, Hist: store.NewHistogram()})
		}
		iv.MergeInto(in.Ops[i].Hist)
		return nil
	})
	if err != nil {
		return RunInput{}, err
	}
	if in.Seconds <= 0 {
		in.Seconds = d.Seconds()
	}
	return in, nil
}

// Merge joins analyses of several stores. They must share the workload
// and the load model (refused otherwise, with the difference); the SLA,
// cost model and objective are the first one's, and configurations whose
// names collide get their store's base name as a prefix.
func Merge(as []Analysis) (Analysis, error) {
	if len(as) == 0 {
		return Analysis{}, fmt.Errorf("no results to merge")
	}
	out := as[0]
	out.Sources = append([]string(nil), as[0].Sources...)
	out.Configs = append([]Configuration(nil), as[0].Configs...)
	out.Runs = append([]Run(nil), as[0].Runs...)
	names := map[string]bool{}
	for _, c := range out.Configs {
		names[c.Name] = true
	}
	for _, b := range as[1:] {
		if d := WorkloadDifference(out.Workload, b.Workload); d != "" {
			return Analysis{}, fmt.Errorf("%s and %s measured different workloads (%s); plan only results that share a workload", out.Sources[0], b.Sources[0], d)
		}
		if b.LevelUnit != out.LevelUnit {
			return Analysis{}, fmt.Errorf("%s measures load in %s and %s in %s; plan only results of one load model", out.Sources[0], out.LevelUnit, b.Sources[0], b.LevelUnit)
		}
		out.Sources = append(out.Sources, b.Sources...)
		rename := map[string]string{}
		for _, c := range b.Configs {
			n := c.Name
			if names[n] {
				// The store's directory tells the two apart.
				n = filepath.Base(filepath.Dir(c.Source))
				if c.Name != "" {
					n += "/" + c.Name
				}
				rename[c.Name] = n
				c.Name = n
			}
			names[n] = true
			out.Configs = append(out.Configs, c)
		}
		for _, r := range b.Runs {
			if n, ok := rename[r.Config]; ok {
				r.Config = n
			}
			out.Runs = append(out.Runs, r)
		}
	}
	out.Cells = Cells(out.Runs)
	return out, nil
}

// WorkloadDifference names the first way two workloads differ ("" when
// they are the same).
func WorkloadDifference(a, b results.Workload) string {
	switch {
	case a.Kind != b.Kind:
		return fmt.Sprintf("kind %s vs %s", a.Kind, b.Kind)
	case a.YCSB != b.YCSB:
		return fmt.Sprintf("ycsb %q vs %q", a.YCSB, b.YCSB)
	case a.RecordCount != b.RecordCount:
		return fmt.Sprintf("record_count %d vs %d", a.RecordCount, b.RecordCount)
	case a.FieldCount != b.FieldCount || a.FieldLength != b.FieldLength:
		return fmt.Sprintf("records of %dx%d vs %dx%d bytes", a.FieldCount, a.FieldLength, b.FieldCount, b.FieldLength)
	case a.Distribution != b.Distribution:
		return fmt.Sprintf("request_distribution %s vs %s", a.Distribution, b.Distribution)
	case strings.Join(a.Statements, ",") != strings.Join(b.Statements, ","):
		return "different statements"
	}
	if len(a.Mix) != len(b.Mix) {
		return "different operation mixes"
	}
	ops := make([]string, 0, len(a.Mix))
	for op := range a.Mix {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		if math.Abs(a.Mix[op]-b.Mix[op]) > 1e-9 {
			return fmt.Sprintf("operation %s at %g vs %g of the mix", op, a.Mix[op], b.Mix[op])
		}
	}
	return ""
}

// Points are the analysis's cells as wildcard points: each configuration's
// parameters (its treatment's field paths and values) at each level.
func (a Analysis) Points() []wildcard.Point {
	cfgs := map[string]Configuration{}
	for _, c := range a.Configs {
		cfgs[c.Name] = c
	}
	out := make([]wildcard.Point, 0, len(a.Cells))
	for _, c := range a.Cells {
		cfg := cfgs[c.Config]
		params := map[string]string{}
		for k, v := range cfg.Params {
			params[k] = v
		}
		out = append(out, wildcard.Point{Source: cfg.Source, Treatment: c.Config, Params: params, Level: c.Level, Runs: c.Runs, Nodes: cfg.Nodes,
			Metrics: map[wildcard.Metric]wildcard.Value{wildcard.Throughput: c.Throughput, wildcard.P50: c.P50MS, wildcard.P99: c.P99MS,
				wildcard.CostPerHour: c.Cost, wildcard.CostPerReqMonth: c.CostPerReq, wildcard.RevenuePerHour: c.Revenue,
				wildcard.ProfitPerHour: c.Profit}})
	}
	return out
}

// FromAll prices several stores and merges them (Merge): the stores must
// share a workload. The SLA, cost model and objective are the first
// store's, overridden by o.
func FromAll(rs []*results.Results, o Options) (Analysis, error) {
	var as []Analysis
	for _, r := range rs {
		a, err := FromResults(r, o)
		if err != nil {
			return Analysis{}, err
		}
		as = append(as, a)
	}
	return Merge(as)
}
