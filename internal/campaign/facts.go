package campaign

import (
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
)

// This file writes the typed facts of the results model (internal/results)
// while a campaign runs: what each treatment was, and every host's limits
// as they change. Analyses and reports read these instead of the spec.

// RecordTreatment writes the facts of one treatment (name "" and index 0
// for a campaign without treatments), once its target is open.
func RecordTreatment(st *store.Store, s *spec.Spec, name string, index int, su *Setup, set []results.Setting) error {
	return putTreatment(st, TreatmentFacts(s, name, index, set), su)
}

// putTreatment writes a treatment's facts, with the address of its open
// target when su is set.
func putTreatment(st *store.Store, t results.Treatment, su *Setup) error {
	if su != nil {
		if a, ok := su.Target.(target.Addresser); ok {
			t.Target.Address = a.Address()
		}
	}
	row, err := t.Row()
	if err != nil {
		return err
	}
	return st.PutTreatment(row)
}

// TreatmentFacts converts a (treatment's) spec into the results model's
// facts.
func TreatmentFacts(s *spec.Spec, name string, index int, set []results.Setting) results.Treatment {
	t := results.Treatment{Name: name, Index: index, Set: set, Reset: s.Reset}
	t.Load = results.Load{Model: s.Load.Model, Arrival: s.Load.ArrivalString(), Levels: s.Levels(), Repetitions: s.Repetitions,
		Warmup: s.Phases.Warmup.Duration, Measure: s.Phases.Measure.Duration, Cooldown: s.Phases.Cooldown.Duration,
		Interval: s.Interval.Duration, ThinkTime: s.Load.ThinkTime.Duration, MaxInFlight: s.Load.MaxInFlight,
		Timeout: s.Load.Timeout.Duration, Order: s.Order}
	if s.Load.Model == "closed" {
		t.Load.Arrival, t.Load.MaxInFlight = "", 0
	}
	if sc := s.Load.Schedule; sc != nil && s.Load.Model == "open" {
		t.Load.Schedule = "steps"
		if sc.Trace != "" {
			t.Load.Schedule = "trace"
		}
	}
	if r := s.Relative(); r != nil {
		// Until the probe gives the base rate, the levels are not rates
		// (relative.go records them again once it has).
		t.Load.Relative = &results.RelativeLevels{To: r.To, Fractions: r.Fractions, Base: r.Base}
		if r.Base == 0 {
			t.Load.Levels = nil
		}
	}
	if s.SLO != nil {
		t.SLO = &results.SLO{Percentile: s.SLO.Percentile, Threshold: s.SLO.Threshold.Duration, Op: s.SLO.Operation}
	}
	t.Workload = workloadFacts(s.Workload)
	t.Target.Type = s.Target.Type
	if f, ok := registry.Lookup(s.Target.Type); ok {
		t.Target.InProcess = f.InProcess
	}
	if h := managedHost(s); h != "" {
		t.Target.Hosts = []string{h}
	}
	t.Target.Managed = registry.ManagedOf(s.Target.Options) != nil
	if m := registry.ManagedOf(s.Target.Options); m != nil && m.Cluster != nil {
		c := m.Cluster
		t.Target.Cluster = &results.Cluster{Nodes: c.NodeCount(), Mode: c.Mode, ReplicationFactor: c.ReplicationFactor, HostPrefix: c.Hosts}
		t.Target.Hosts = clusterHosts(s, c.Hosts, c.NodeCount())
	}
	t.Analysis = analysisFacts(s.Analysis)
	for _, e := range s.Events {
		t.Events = append(t.Events, results.ScheduledEvent{At: e.At, Action: e.Action, Host: e.Host})
	}
	if s.Lab != nil {
		name := s.Lab.Name
		if name == "" {
			name = s.Name
		}
		t.Lab = &results.LabFacts{Name: name}
		specDir := ""
		if s.File != "" {
			specDir = filepath.Dir(s.File)
		}
		if hosts, _, err := s.Lab.Resolve(specDir); err == nil {
			for _, h := range hosts {
				t.Lab.Hosts = append(t.Lab.Hosts, h.Name)
			}
		}
	}
	if m := s.Analysis.Bottleneck.Map; m != nil {
		t.Numbers = map[string]float64{}
		for _, p := range []string{m.X.Path, m.Y.Path} {
			if v, err := s.Number(p); err == nil {
				t.Numbers[p] = v
			}
		}
	}
	return t
}

// clusterHosts are the lab hosts a cluster's nodes start on: the first n
// whose names start with prefix, in the lab's order (see
// registry.Env.ClusterPlacements).
func clusterHosts(s *spec.Spec, prefix string, n int) []string {
	if s.Lab == nil || prefix == "" {
		return nil
	}
	specDir := ""
	if s.File != "" {
		specDir = filepath.Dir(s.File)
	}
	hosts, _, err := s.Lab.Resolve(specDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, h := range hosts {
		if strings.HasPrefix(h.Name, prefix) && len(out) < n {
			out = append(out, h.Name)
		}
	}
	return out
}

// managedHost is the lab host of the target's managed server ("" when it
// has none).
func managedHost(s *spec.Spec) string { return registry.ManagedHost(s.Target.Options) }

func workloadFacts(w spec.Workload) results.Workload {
	out := results.Workload{Kind: "ycsb", YCSB: strings.ToLower(w.YCSB), RecordCount: w.RecordCount,
		FieldCount: w.FieldCount, FieldLength: w.FieldLength, Distribution: w.RequestDistribution,
		Mix: map[string]float64{}}
	if len(w.Statements) > 0 {
		out = results.Workload{Kind: "statements", Mix: map[string]float64{}}
		for _, st := range w.Statements {
			wt := 1.0
			if st.Weight != nil {
				wt = *st.Weight
			}
			out.Statements = append(out.Statements, st.Name)
			out.Mix[st.Name] += wt
		}
	} else if cfg, err := WorkloadConfig(w, ""); err == nil {
		out.Distribution = string(cfg.RequestDistribution) // the preset's when the spec names none
		for _, op := range cfg.Ops() {
			out.Mix[cfg.OpName(op)] += cfg.Mix[op]
		}
	}
	var sum float64
	for _, x := range out.Mix {
		sum += x
	}
	for op := range out.Mix {
		out.Mix[op] /= sum
	}
	return out
}

func analysisFacts(a spec.Analysis) results.Analysis {
	v := a.Variability
	out := results.Analysis{Variability: results.Variability{RepeatSE: results.Dur(v.RepeatSE.Duration),
		CrossDiff: results.Dur(v.CrossDiff.Duration), Host: v.Host, Hosts: v.Hosts, Equal: v.Equal, Policies: v.Policies,
		Thresholds: v.Thresholds, RepeatPct: v.RepeatPct, CrossPct: v.CrossPct, Alpha: v.Alpha}}
	if v.Trim != nil {
		d := results.Dur(v.Trim.Duration)
		out.Variability.Trim = &d
	}
	e := a.ESL
	out.ESL = results.ESL{Thresholds: e.Thresholds, OpSize: e.OpSize, OpSizesKiB: e.OpSizesKiB, Base: e.Base,
		Rules: results.ESLRules{PersistentThreshold: e.Rules.PersistentThreshold, PersistentTCPTPct: e.Rules.PersistentTCPTPct,
			TransientThreshold: e.Rules.TransientThreshold, TransientMCPT: results.Dur(e.Rules.TransientMCPT.Duration),
			OverProvisionedP99: e.Rules.OverProvisionedP99},
		OptionA: results.ESLOptionA{IOPS: e.OptionA.IOPS}, OptionB: results.ESLOptionB{MaxNodes: e.OptionB.MaxNodes}}
	for _, m := range e.Models {
		out.ESL.Models = append(out.ESL.Models, results.ESLModel{Host: m.Host, Resource: m.Resource, File: m.File})
	}
	for _, p := range e.Pairs {
		out.ESL.Pairs = append(out.ESL.Pairs, results.ESLPair{Provider: p.Provider, Client: p.Client})
	}
	out.Plan = a.Plan.Facts()
	f := a.Failures // analysis.failures (internal/spec/writecheck.go)
	out.Failures = results.Failures{WriteCheck: f.WriteCheck, Tolerance: f.Tolerance, Stable: f.Stable,
		DetectFactor: f.DetectFactor, Steady: results.Dur(f.Steady.Duration)}
	b := a.Bottleneck
	out.Bottleneck = results.Bottleneck{Lambda: results.Dur(b.Lambda.Duration), Alpha: b.Alpha, Epsilon: b.Epsilon,
		Full: b.Full, Partial: b.Partial, PerCore: b.PerCore, Hosts: b.Hosts, SLOFloor: b.SLOFloor,
		UtilFilter: b.UtilFilter, StrictRules: b.StrictRules}
	if m := b.Map; m != nil {
		out.Bottleneck.Map = &results.BottleneckMap{X: results.MapAxis{Path: m.X.Path, Label: m.X.Label},
			Y: results.MapAxis{Path: m.Y.Path, Label: m.Y.Label}}
	}
	return out
}

// limitLog writes the provider's hosts' limits into the store whenever
// they change: when the hosts come up, after each applied event, after the
// events are undone.
type limitLog struct {
	mu   sync.Mutex
	st   *store.Store
	last map[string]results.HostLimits
}

func newLimitLog(st *store.Store) *limitLog {
	return &limitLog{st: st, last: map[string]results.HostLimits{}}
}

// record snapshots every host's facts and writes those whose limits differ
// from the last written (all of them the first time).
func (g *limitLog) record(hosts infra.Hosts, at time.Time, cause string) error {
	if g == nil || len(hosts) == 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	facts := make([]infra.Facts, 0, len(hosts))
	for _, h := range hosts {
		facts = append(facts, h.Facts())
	}
	sort.Slice(facts, func(i, j int) bool { return facts[i].Name < facts[j].Name })
	var rows []store.HostLimitRow
	for _, f := range facts {
		hl := hostLimits(f, at, cause)
		if prev, ok := g.last[f.Name]; ok && sameLimits(prev, hl) {
			continue
		}
		g.last[f.Name] = hl
		row, err := hl.Row()
		if err != nil {
			return err
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil
	}
	return g.st.AddHostLimits(rows)
}

// hostLimits converts a host's facts (its definition with the changes
// events made) into the results model's limits in force from at.
func hostLimits(f infra.Facts, at time.Time, cause string) results.HostLimits {
	out := results.HostLimits{Host: f.Name, From: at, Lab: f.Group, Type: f.Type, Address: f.Address,
		VCPUs: f.VCPUs, MemoryBytes: f.MemoryBytes, NetworkMbit: f.NetworkMbit, PricePerHour: f.PricePerHour,
		Stopped: f.Stopped, LinkDown: f.LinkDown, Cause: cause}
	for _, v := range f.Volumes {
		out.Volumes = append(out.Volumes, results.VolumeLimit{Name: v.Name, Type: v.Type, SizeGiB: v.SizeGiB, IOPS: v.IOPS, MiBps: v.MiBps, MonthlyPrice: v.MonthlyPrice, Stalled: v.Stalled})
	}
	return out
}

func sameLimits(a, b results.HostLimits) bool {
	if a.VCPUs != b.VCPUs || a.MemoryBytes != b.MemoryBytes || a.NetworkMbit != b.NetworkMbit ||
		a.Stopped != b.Stopped || a.LinkDown != b.LinkDown || a.Type != b.Type || a.Lab != b.Lab ||
		len(a.Volumes) != len(b.Volumes) {
		return false
	}
	for i := range a.Volumes {
		if a.Volumes[i] != b.Volumes[i] {
			return false
		}
	}
	return true
}

// settingsOf lists the paths a treatment set with their values.
func settingsOf(t spec.Treatment) []results.Setting {
	out := make([]results.Setting, 0, len(t.Set))
	for i, p := range t.Set {
		v := ""
		if i < len(t.Values) {
			v = t.Values[i]
		}
		out = append(out, results.Setting{Path: p, Value: v})
	}
	return out
}

// recordAllTreatments writes the facts of every treatment the store has
// none of yet, before the first one runs, so that the results of a
// campaign interrupted early still know every treatment it planned. A
// treatment's row is written again, with its target's address, when its
// target opens.
func recordAllTreatments(st *store.Store, s *spec.Spec) error {
	rows, err := st.TreatmentRows()
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, r := range rows {
		have[r.Name] = true
	}
	for i, t := range s.Treatments {
		if have[t.Name] {
			continue
		}
		if err := RecordTreatment(st, t.Spec, t.Name, i, nil, settingsOf(t)); err != nil {
			return err
		}
	}
	return nil
}
