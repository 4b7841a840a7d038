package pressure

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/cost"
	"github.com/headroom-dev/headroom/internal/analysis/slp"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
)

// Analyze assesses every treatment of in with the settings of
// analysis.esl (zero fields take their defaults): SLP series and their
// summaries per subject, the recommendations with priced actions, the
// cost comparison and the normalisation fits.
func Analyze(in Input, set results.ESL) (*Assessment, error) {
	a := &Assessment{Campaign: in.Campaign, FromFiles: in.FromFiles}
	if err := a.configure(set); err != nil {
		return nil, err
	}
	if set.Base != "" {
		found := false
		var names []string
		for _, t := range in.Treatments {
			found = found || t.Name == set.Base
			names = append(names, fmt.Sprintf("%q", t.Name))
		}
		if !found {
			return nil, fmt.Errorf("analysis.esl.base: %q is not a treatment with completed runs; name one of %s", set.Base, strings.Join(names, ", "))
		}
		a.Base = set.Base
	} else if len(in.Treatments) > 0 {
		a.Base = in.Treatments[0].Name
	}
	for _, tin := range in.Treatments {
		a.Notes = append(a.Notes, tin.Notes...)
		t, err := a.assessTreatment(tin)
		if err != nil {
			return nil, err
		}
		a.Treatments = append(a.Treatments, t)
	}
	a.compareCosts(in.Treatments, set.OptionB.MaxNodes)
	a.Notes = append(a.Notes, in.FitNotes...)
	for _, p := range in.Pairs {
		a.Fits = append(a.Fits, fitPair(p))
	}
	for i := range a.Treatments {
		a.actions(&a.Treatments[i], in.Treatments[i])
	}
	return a, nil
}

func (a *Assessment) note(format string, args ...any) {
	a.Notes = append(a.Notes, fmt.Sprintf(format, args...))
}

// configure fills thresholds, rules and the op-size policy from the
// settings and their defaults.
func (a *Assessment) configure(set results.ESL) error {
	a.Thresholds = set.Thresholds
	if len(a.Thresholds) == 0 {
		a.Thresholds = DefaultThresholds
	}
	for _, c := range a.Thresholds {
		if !(c > 0) || math.IsInf(c, 0) {
			return fmt.Errorf("critical threshold %v is not a positive SLP percentage; use e.g. 70 or 95", c)
		}
	}
	switch set.OpSize {
	case "", OpSizeBest:
		a.Policy = slp.BestSize
	case OpSizeObserved:
		a.Policy = slp.ObservedSize
	default:
		return fmt.Errorf("analysis.esl.op_size: %q is not a policy; use best or observed", set.OpSize)
	}
	a.OpSizesKiB = set.OpSizesKiB
	d := slp.DefaultRules()
	r := set.Rules
	a.Rules = slp.Rules{
		PersistentThreshold: orDefault(r.PersistentThreshold, d.PersistentThreshold),
		PersistentTCPTPct:   orDefault(r.PersistentTCPTPct, d.PersistentTCPTPct),
		TransientThreshold:  orDefault(r.TransientThreshold, d.TransientThreshold),
		TransientMCPT:       d.TransientMCPT,
		OverProvisionedP99:  orDefault(r.OverProvisionedP99, d.OverProvisionedP99),
	}
	if r.TransientMCPT > 0 {
		// Set explicitly: kept, even where the runs are too short for it.
		a.Rules.TransientMCPT, a.Rules.TransientFixed = r.TransientMCPT.D(), true
	}
	return nil
}

func orDefault(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

func treatmentPrefix(name string) string {
	if name == "" {
		return ""
	}
	return "treatment " + name + ": "
}

// assessTreatment builds the subjects, findings and throughput of one
// treatment.
func (a *Assessment) assessTreatment(t TreatmentInput) (Treatment, error) {
	out := Treatment{Name: t.Name, Runs: len(t.Runs), Imported: t.Imported, Lab: t.Lab, Throughput: math.NaN(), Achieved: math.NaN(), AchievedLevel: math.NaN(), Level: math.NaN()}
	if t.Lab != nil {
		var hs []string
		for _, h := range cost.DataHosts(t.Lab.Hosts) {
			hs = append(hs, h.Host+": "+cost.DescribeHost(h))
		}
		out.Hosts = strings.Join(hs, "; ")
	}
	keys := make([]Key, 0, len(t.Models))
	for k := range t.Models {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Host != keys[j].Host {
			return keys[i].Host < keys[j].Host
		}
		return keys[i].Resource < keys[j].Resource
	})
	windows := windowsOf(t.Runs)
	for _, k := range keys {
		tl := t.Models[k]
		for _, sp := range tl {
			if sp.Model != nil {
				out.Models = append(out.Models, ModelEntry{Host: k.Host, Resource: k.Resource, Origin: sp.Origin, From: sp.From, Model: sp.Model})
			}
		}
		samples := inWindows(t.Samples[k], windows)
		if len(samples) == 0 {
			a.note("%s%s %s has a model but no samples in the assessed time; is the host monitored?", treatmentPrefix(t.Name), k.Host, k.Resource)
			continue
		}
		for _, grp := range bySource(samples) {
			subs, err := a.subjects(k, grp, tl)
			if err != nil {
				a.note("%s%s %s: %v", treatmentPrefix(t.Name), k.Host, k.Resource, err)
				continue
			}
			out.Subjects = append(out.Subjects, subs...)
		}
	}
	for _, s := range out.Subjects {
		out.Covered = max(out.Covered, s.Summary.Box.Covered)
	}
	var in []slp.Subject
	for _, s := range out.Subjects {
		if len(s.Series) > 0 {
			in = append(in, slp.Subject{Host: s.Host, Service: s.Service, Quality: s.Quality, Series: s.Series})
		}
	}
	// Say when the runs' windows shortened the transient rule or are too
	// short for it (one note per treatment: the spans are the runs').
	var transient []string
	for _, s := range in {
		if ev, err := slp.TransientEvent(s.Series, a.Rules); err == nil && ev.Note != "" {
			transient = appendNew(transient, treatmentPrefix(t.Name)+ev.Note)
		}
	}
	a.Notes = append(a.Notes, transient...)
	fs, err := slp.Recommend(in, a.Rules)
	if err != nil {
		return out, err
	}
	for _, f := range fs {
		out.Findings = append(out.Findings, Finding{Finding: f, Treatment: t.Name})
	}
	out.Throughput, out.Level = bestThroughput(t.Runs)
	out.Achieved, out.AchievedLevel = out.Throughput, out.Level
	out.OpenLoop = len(t.Runs) > 0 && !slices.ContainsFunc(t.Runs, func(r results.Run) bool { return r.Model != "open" })
	if c := t.Capacity; c != nil {
		out.Throughput, out.Level, out.CostNote = c.Throughput, c.Level, c.Why
	}
	return out, nil
}

type window struct{ from, to time.Time }

func windowsOf(runs []results.Run) []window {
	var ws []window
	for _, r := range runs {
		ws = append(ws, window{r.Summary.MeasureStart, r.Summary.MeasureEnd})
	}
	return ws
}

// inWindows keeps the samples that lie at least half inside one of the
// windows (a 60 s CloudWatch point counts for a window that holds most of
// it); without windows, all of them.
func inWindows(samples []monitor.Sample, ws []window) []monitor.Sample {
	if len(ws) == 0 {
		return samples
	}
	var out []monitor.Sample
	for _, s := range samples {
		end := s.Start.Add(s.Period)
		for _, w := range ws {
			lo, hi := maxTime(s.Start, w.from), minTime(end, w.to)
			if hi.Sub(lo) >= s.Period/2 && s.Period > 0 {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// bySource splits one resource's samples by source, sorted.
func bySource(samples []monitor.Sample) [][]monitor.Sample {
	m := map[string][]monitor.Sample{}
	for _, s := range samples {
		m[s.Source] = append(m[s.Source], s)
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([][]monitor.Sample, len(names))
	for i, n := range names {
		out[i] = m[n]
	}
	return out
}

// bestThroughput is the highest mean throughput over the levels of the
// runs (seed 000 Table 1 divides cost by achieved req/s), and its level;
// of equal means, the lowest level's.
func bestThroughput(runs []results.Run) (float64, float64) {
	type acc struct {
		sum   float64
		n     int
		level float64
	}
	by := map[int]*acc{}
	for _, r := range runs {
		a := by[r.LevelIndex]
		if a == nil {
			a = &acc{level: r.Level}
			by[r.LevelIndex] = a
		}
		a.sum += r.Summary.Throughput
		a.n++
	}
	idx := make([]int, 0, len(by))
	for i := range by {
		idx = append(idx, i)
	}
	sort.Ints(idx) // a tie goes to the lowest level, whatever the map order
	best, level := math.NaN(), math.NaN()
	for _, i := range idx {
		a := by[i]
		if m := a.sum / float64(a.n); math.IsNaN(best) || m > best {
			best, level = m, a.level
		}
	}
	return best, level
}

// compareCosts prices every treatment with a lab and a throughput
// (cost.LabDeployment) and compares each with the base treatment as seed
// 000 Table 1 does (cost.CompareTreatments).
func (a *Assessment) compareCosts(ins []TreatmentInput, maxNodes int) {
	var priced []cost.Priced
	for i := range a.Treatments {
		t, tin := &a.Treatments[i], ins[i]
		switch {
		case t.Lab == nil:
			t.CostNote = "no lab event: its hosts' prices are unknown"
			continue
		case !(t.Throughput > 0):
			if t.CostNote == "" {
				t.CostNote = "no completed run with a throughput"
			}
			continue
		}
		d, from, err := cost.LabDeployment(t.Lab.Hosts, tin.Catalog, tin.CatalogFrom)
		if err != nil {
			t.CostNote = err.Error()
			continue
		}
		o := cost.Option{Deployment: d, Throughput: t.Throughput, MonthlyCost: d.Monthly()}
		o.PerReqPerS = o.MonthlyCost / o.Throughput
		t.Cost = &o
		priced = append(priced, cost.Priced{Name: t.Name, Deployment: d, Throughput: t.Throughput, Prices: from})
	}
	if len(a.Treatments) < 2 {
		return
	}
	rows, notes := cost.CompareTreatments(a.Base, priced, maxNodes)
	a.Costs = rows
	a.Notes = append(a.Notes, notes...)
}

// actions words the change each finding suggests, priced from the lab's
// catalog when it is known (cost.Action), for the hosts as they came up.
func (a *Assessment) actions(t *Treatment, tin TreatmentInput) {
	resource := map[string]string{}
	for _, s := range t.Subjects {
		resource[s.Host+"\x00"+s.Service] = s.Resource
	}
	nodes := 0
	if t.Lab != nil {
		nodes = len(cost.DataHosts(t.Lab.Hosts))
	}
	for i := range t.Findings {
		f := &t.Findings[i]
		in := cost.ActionInput{Resource: resource[f.Host+"\x00"+f.Service], Catalog: tin.Catalog, OptionA: tin.OptionA, Nodes: nodes}
		if t.Lab != nil {
			for j := range t.Lab.Hosts {
				if t.Lab.Hosts[j].Host == f.Host {
					in.Host = &t.Lab.Hosts[j]
				}
			}
		}
		f.Action = cost.Action(f.Finding, in)
	}
}
