// Package pressure assesses a campaign's results for service level
// pressure (seed 000, AISLE; seed-digest §4): it finds the expected
// service level (ESL) model of every monitored host resource (from the
// lab event, model files or the results store), turns the samples of each
// treatment's measured phases into SLP series, summarises them (boxplots,
// MCPT/TCPT), recommends what to provision, compares the cost of the
// options, and fits the normalisation between provider-side and
// client-side series. It renders the result for the terminal (headroom
// assess) and as report sections.
//
// The analyses are packages esl, slp and cost; this package only gathers
// their inputs from the results store and lays out their findings.
package pressure

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/cost"
	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/analysis/slp"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
)

// ModelFile is a model given for one host's resource, e.g. by
// `headroom assess --model db1/volume:data=esl.yaml`.
type ModelFile struct {
	Host, Resource, File string
}

// Options configure Assess. The zero value reads everything from the
// store (the stored spec's analysis.esl included).
type Options struct {
	// Models override every other model, in every treatment.
	Models []ModelFile
	// SaveModels keeps the models read from files in the results store, so
	// that later reports find them when the files are gone.
	SaveModels bool
	// Settings replace the stored spec's analysis.esl when not nil.
	Settings *spec.ESLAnalysis
	// Thresholds and OpSize, when set, override the settings' (headroom
	// assess --threshold, --op-size).
	Thresholds []float64
	OpSize     string
}

// Assessment is the pressure analysis of one results store.
type Assessment struct {
	Campaign   string
	Thresholds []float64 // critical thresholds c, percent
	Rules      slp.Rules // with defaults filled
	Policy     slp.OpSizePolicy
	OpSizesKiB []float64 // candidate op sizes of the best-size policy; nil = the model's
	Base       string    // the base treatment of the cost comparison
	Treatments []Treatment
	Costs      []CostRow
	Fits       []Fit
	Notes      []string // what a reader should know: models that could not be read, subjects left out
}

// Treatment is the assessment of one treatment's measured phases (the
// whole campaign when it has none; imported data without runs form one
// treatment covering every sample).
type Treatment struct {
	Name       string // "" when the campaign has no treatments
	Runs       int    // completed runs whose measured phases are assessed
	Covered    time.Duration
	Imported   bool // no runs: every sample is assessed
	Lab        *LabRecord
	Hosts      string       // the lab's data hosts in a few words
	Models     []ModelEntry // the ESL model of every host resource, sorted
	Subjects   []Subject
	Findings   []Finding
	Throughput float64 // the highest mean throughput over levels, req/s (NaN without runs)
	Level      float64 // where it was reached
	Cost       *cost.Option
	CostNote   string // why there is no cost
}

// Subject is the SLP series of one quality of one host's service.
type Subject struct {
	Host, Service string // Service is the resource, with " @SOURCE" for data not sampled by Headroom
	Resource      string
	Source        string
	Quality       esl.Quality
	Model         string  // where the ESL model came from
	ESL           string  // the ESL used, with its source
	ESLMean       float64 // NaN when the ESL varies by interval (observed op size)
	Observed      float64 // time-weighted mean observed level
	Unit          string  // of ESLMean and Observed
	Series        slp.Series
	Summary       slp.Summary
}

// Label names the subject in tables: host, service and quality.
func (s Subject) Label() string { return s.Host + " " + s.Service + " " + string(s.Quality) }

// Finding is a recommendation with the change it suggests.
type Finding struct {
	slp.Finding
	Treatment string
	Action    string // the change in words, priced when the catalog allows
}

// ModelEntry is the ESL model a treatment uses for one host's resource.
type ModelEntry struct {
	Host, Resource, Origin string
	Model                  esl.Model
}

// key identifies a host's resource.
type key struct{ host, resource string }

type modelInfo struct {
	model  esl.Model
	origin string
}

// Assess reads st and assesses every treatment.
func Assess(st *store.Store, opt Options) (*Assessment, error) {
	c, err := st.Campaign()
	if err != nil {
		return nil, err
	}
	runs, err := st.Runs()
	if err != nil {
		return nil, err
	}
	evs, err := st.Events(-1)
	if err != nil {
		return nil, err
	}
	a := &Assessment{Campaign: c.Name}
	var sp *spec.Spec
	if c.SpecYAML != "" {
		if sp, err = spec.Parse(c.SpecFile, []byte(c.SpecYAML)); err != nil {
			a.note("the stored spec does not validate with this version (%v); analysis.esl is not read", firstLine(err))
			sp = nil
		}
	}
	set := spec.ESLAnalysis{}
	if sp != nil {
		set = sp.Analysis.ESL
	}
	if opt.Settings != nil {
		set = *opt.Settings
	}
	if len(opt.Thresholds) > 0 {
		set.Thresholds = opt.Thresholds
	}
	if opt.OpSize != "" {
		set.OpSize = opt.OpSize
	}
	if err := a.configure(set); err != nil {
		return nil, err
	}
	trs, err := treatmentsOf(sp, runs)
	if err != nil {
		return nil, err
	}
	if set.Base != "" {
		found := false
		for _, t := range trs {
			found = found || t.name == set.Base
		}
		if !found {
			return nil, fmt.Errorf("analysis.esl.base: %q is not a treatment with completed runs; name one of %s", set.Base, treatmentNames(trs))
		}
		a.Base = set.Base
	} else if len(trs) > 0 {
		a.Base = trs[0].name
	}
	labs, err := LabRecords(evs)
	if err != nil {
		return nil, err
	}
	stored, err := st.ESLModels()
	if err != nil {
		return nil, err
	}
	flagModels, err := loadFlagModels(opt.Models)
	if err != nil {
		return nil, err
	}
	specDir := ""
	if c.SpecFile != "" {
		specDir = filepath.Dir(c.SpecFile)
	}
	cache := map[key][]monitor.Sample{}
	for _, tc := range trs {
		tc.lab = labFor(labs, tc)
		models, err := a.modelsFor(st, tc, stored, flagModels, specDir, opt.SaveModels)
		if err != nil {
			return nil, err
		}
		t, err := a.assessTreatment(st, tc, models, cache)
		if err != nil {
			return nil, err
		}
		a.Treatments = append(a.Treatments, t)
	}
	a.compareCosts(set.OptionB.MaxNodes)
	fits, err := a.fitPairs(st, set.Pairs)
	if err != nil {
		return nil, err
	}
	a.Fits = fits
	for i := range a.Treatments {
		a.actions(&a.Treatments[i], set.OptionA)
	}
	return a, nil
}

func (a *Assessment) note(format string, args ...any) {
	a.Notes = append(a.Notes, fmt.Sprintf(format, args...))
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// configure fills thresholds, rules and the op-size policy from the
// settings and their defaults.
func (a *Assessment) configure(set spec.ESLAnalysis) error {
	a.Thresholds = set.Thresholds
	if len(a.Thresholds) == 0 {
		a.Thresholds = spec.DefaultESLThresholds
	}
	for _, c := range a.Thresholds {
		if !(c > 0) || math.IsInf(c, 0) {
			return fmt.Errorf("critical threshold %v is not a positive SLP percentage; use e.g. 70 or 95", c)
		}
	}
	switch set.OpSize {
	case "", spec.ESLOpSizeBest:
		a.Policy = slp.BestSize
	case spec.ESLOpSizeObserved:
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
	if r.TransientMCPT.Duration > 0 {
		a.Rules.TransientMCPT = r.TransientMCPT.Duration
	}
	return nil
}

func orDefault(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

// treatmentCtx is one treatment's runs and spec while it is assessed.
type treatmentCtx struct {
	name    string
	spec    *spec.Spec // nil when the stored spec is missing or invalid
	runs    []store.Run
	windows []window
	lab     *LabRecord
}

type window struct{ from, to time.Time }

// treatmentsOf lists the treatments with completed runs, in the spec's
// order (else in the order their runs started). Without any completed
// run, one treatment covers every sample (imported data).
func treatmentsOf(sp *spec.Spec, runs []store.Run) ([]*treatmentCtx, error) {
	last := map[int]store.Run{}
	for _, r := range runs {
		if r.Status == store.StatusCompleted && !r.Summary.MeasureStart.IsZero() && r.Summary.MeasureEnd.After(r.Summary.MeasureStart) {
			last[r.Slot] = r // Runs are ordered by ID: a resumed run replaces its earlier try
		}
	}
	byName := map[string]*treatmentCtx{}
	var out []*treatmentCtx
	add := func(name string, s *spec.Spec) *treatmentCtx {
		if t, ok := byName[name]; ok {
			return t
		}
		t := &treatmentCtx{name: name, spec: s}
		byName[name] = t
		out = append(out, t)
		return t
	}
	if sp != nil {
		for _, t := range sp.Treatments {
			add(t.Name, t.Spec)
		}
	}
	for _, r := range runs {
		if lr, ok := last[r.Slot]; !ok || lr.ID != r.ID {
			continue
		}
		t := add(r.Treatment, sp)
		t.runs = append(t.runs, r)
		t.windows = append(t.windows, window{r.Summary.MeasureStart, r.Summary.MeasureEnd})
	}
	if len(last) == 0 {
		return []*treatmentCtx{{spec: sp}}, nil
	}
	kept := out[:0]
	for _, t := range out {
		if len(t.runs) > 0 {
			kept = append(kept, t)
		}
	}
	return kept, nil
}

func treatmentNames(trs []*treatmentCtx) string {
	var names []string
	for _, t := range trs {
		names = append(names, fmt.Sprintf("%q", t.name))
	}
	return strings.Join(names, ", ")
}

// labFor is the lab the treatment ran in: the last lab event before its
// first run (each treatment brings its lab up before its runs); without
// runs, the last lab event.
func labFor(labs []LabRecord, t *treatmentCtx) *LabRecord {
	var out *LabRecord
	for i := range labs {
		if len(t.runs) == 0 || !labs[i].Time.After(t.runs[0].Start) {
			out = &labs[i]
		}
	}
	return out
}

func loadFlagModels(files []ModelFile) (map[key]modelInfo, error) {
	out := map[key]modelInfo{}
	for _, f := range files {
		m, err := esl.Load(f.File)
		if err != nil {
			return nil, err
		}
		out[key{f.Host, f.Resource}] = modelInfo{model: m, origin: "file " + f.File + " (--model)"}
	}
	return out, nil
}

// modelsFor gathers the treatment's models; later sources override
// earlier ones: the lab event, models stored in the results (for every
// treatment, then for this one), the spec's analysis.esl.models files,
// and the command line's. A model file that cannot be read falls back to
// its stored copy.
func (a *Assessment) modelsFor(st *store.Store, t *treatmentCtx, stored []store.ESLModel, flags map[key]modelInfo, specDir string, save bool) (map[key]modelInfo, error) {
	out := map[key]modelInfo{}
	if t.lab != nil {
		lm, notes, err := labModels(t.lab)
		if err != nil {
			return nil, err
		}
		for _, n := range notes {
			a.note("%s%s", treatmentPrefix(t.name), n)
		}
		for k, v := range lm {
			out[k] = v
		}
	}
	useStored := func(sm store.ESLModel) {
		m, err := esl.Parse([]byte(sm.Model))
		if err != nil {
			a.note("the model stored for %s/%s does not parse (%v); it is left out", sm.Host, sm.Resource, err)
			return
		}
		out[key{sm.Host, sm.Resource}] = modelInfo{model: m, origin: sm.Origin + ", stored with the results"}
	}
	for _, sm := range stored {
		if sm.Treatment == "" {
			useStored(sm)
		}
	}
	for _, sm := range stored {
		if t.name != "" && sm.Treatment == t.name {
			useStored(sm)
		}
	}
	if t.spec != nil {
		for _, mf := range t.spec.Analysis.ESL.Models {
			k := key{mf.Host, mf.Resource}
			path := mf.File
			if !filepath.IsAbs(path) {
				path = filepath.Join(specDir, path)
			}
			m, err := esl.Load(path)
			if err != nil {
				if prev, ok := out[k]; ok && strings.HasSuffix(prev.origin, "stored with the results") {
					a.note("%s%v; the copy stored with the results is used", treatmentPrefix(t.name), err)
					continue
				}
				return nil, fmt.Errorf("analysis.esl.models: %w", err)
			}
			out[k] = modelInfo{model: m, origin: "file " + mf.File}
			if save {
				a.save(st, t.name, k, m, "file "+mf.File)
			}
		}
	}
	for k, v := range flags {
		out[k] = v
		if save {
			a.save(st, "", k, v.model, v.origin)
		}
	}
	return out, nil
}

// save keeps a model read from a file in the results store; a store that
// cannot be written (a read-only copy) costs only the note.
func (a *Assessment) save(st *store.Store, treatment string, k key, m esl.Model, origin string) {
	doc, err := json.Marshal(m)
	if err == nil {
		err = st.PutESLModel(store.ESLModel{Treatment: treatment, Host: k.host, Resource: k.resource, Origin: origin, Model: string(doc)})
	}
	if err != nil {
		a.note("the model of %s/%s (%s) could not be kept in the results: %v", k.host, k.resource, origin, err)
	}
}

func treatmentPrefix(name string) string {
	if name == "" {
		return ""
	}
	return "treatment " + name + ": "
}

// assessTreatment builds the subjects, findings and throughput of one
// treatment.
func (a *Assessment) assessTreatment(st *store.Store, t *treatmentCtx, models map[key]modelInfo, cache map[key][]monitor.Sample) (Treatment, error) {
	out := Treatment{Name: t.name, Runs: len(t.runs), Imported: len(t.runs) == 0, Lab: t.lab, Throughput: math.NaN(), Level: math.NaN()}
	if t.lab != nil {
		var hs []string
		for _, h := range dataHosts(t.lab) {
			hs = append(hs, h.Name+": "+describeHost(h))
		}
		out.Hosts = strings.Join(hs, "; ")
	}
	keys := make([]key, 0, len(models))
	for k := range models {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].host != keys[j].host {
			return keys[i].host < keys[j].host
		}
		return keys[i].resource < keys[j].resource
	})
	for _, k := range keys {
		out.Models = append(out.Models, ModelEntry{Host: k.host, Resource: k.resource, Origin: models[k].origin, Model: models[k].model})
		samples, ok := cache[k]
		if !ok {
			var err error
			samples, err = st.Samples(store.SampleFilter{RunID: -1, Host: k.host, Resource: k.resource})
			if err != nil {
				return out, err
			}
			cache[k] = samples
		}
		samples = inWindows(samples, t.windows)
		if len(samples) == 0 {
			a.note("%s%s %s has a model but no samples in the assessed time; is the host monitored?", treatmentPrefix(t.name), k.host, k.resource)
			continue
		}
		for _, grp := range bySource(samples) {
			subs, err := a.subjects(k, grp, models[k])
			if err != nil {
				a.note("%s%s %s: %v", treatmentPrefix(t.name), k.host, k.resource, err)
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
	fs, err := slp.Recommend(in, a.Rules)
	if err != nil {
		return out, err
	}
	for _, f := range fs {
		out.Findings = append(out.Findings, Finding{Finding: f, Treatment: t.name})
	}
	out.Throughput, out.Level = bestThroughput(t.runs)
	return out, nil
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

// isVolume says whether a resource is a block volume, judged with the
// ops/s and bandwidth of a volume model.
func isVolume(resource string) bool {
	return strings.HasPrefix(resource, monitor.ResourceVolumePrefix) || strings.HasPrefix(resource, monitor.ResourceDiskPrefix)
}

// subjects turns one resource's samples of one source into SLP subjects:
// a volume's ops/s and bandwidth (slp.VolumePressure with the op-size
// policy), any other resource's metrics named like the model's qualities
// (slp.FromSamples).
func (a *Assessment) subjects(k key, samples []monitor.Sample, mi modelInfo) ([]Subject, error) {
	src := samples[0].Source
	service := k.resource
	if src != monitor.SourceSampled {
		service += " @" + src
	}
	base := Subject{Host: k.host, Service: service, Resource: k.resource, Source: src, Model: mi.origin}
	hasVolumeQuality := false
	for _, q := range mi.model.Qualities() {
		hasVolumeQuality = hasVolumeQuality || q == esl.OpsPerS || q == esl.BytesPerS
	}
	var out []Subject
	if isVolume(k.resource) && hasVolumeQuality {
		obs, err := slp.VolumeObservations(samples)
		if err != nil {
			return nil, err
		}
		v, err := slp.VolumePressure(obs, mi.model, slp.VolumeOptions{Policy: a.Policy, CandidatesKiB: a.OpSizesKiB})
		if err != nil {
			return nil, err
		}
		var ops, bytes, secs float64
		for _, o := range obs {
			ops += o.Ops * o.Period.Seconds()
			bytes += o.Bytes * o.Period.Seconds()
			secs += o.Period.Seconds()
		}
		for _, q := range []struct {
			q      esl.Quality
			series slp.Series
			e      esl.ESL
			mean   float64
			unit   string
		}{{esl.OpsPerS, v.Ops, v.OpsESL, ops / secs, "ops/s"}, {esl.BytesPerS, v.Bytes, v.BytesESL, bytes / secs, "B/s"}} {
			if q.series == nil {
				continue
			}
			s := base
			s.Quality, s.Series, s.Observed, s.Unit = q.q, q.series, q.mean, q.unit
			s.ESLMean = q.e.Mean()
			s.ESL = fmt.Sprintf("%s (%s)", formatLevel(q.e.Mean(), q.unit), q.e.Source)
			if a.Policy == slp.ObservedSize {
				s.ESLMean = math.NaN()
				s.ESL = "at each interval's mean op size (" + mi.model.Kind() + " model)"
			}
			out = append(out, s)
		}
	} else {
		byMetric := map[string][]monitor.Sample{}
		for _, x := range samples {
			byMetric[x.Metric] = append(byMetric[x.Metric], x)
		}
		for _, q := range mi.model.Qualities() {
			xs := byMetric[string(q)]
			if len(xs) == 0 {
				continue
			}
			e, err := mi.model.ESL(q, 0)
			if err != nil {
				return nil, err
			}
			series, err := slp.FromSamples(xs, e)
			if err != nil {
				return nil, err
			}
			var sum, secs float64
			for _, x := range xs {
				sum += x.Value * x.Period.Seconds()
				secs += x.Period.Seconds()
			}
			unit := unitOf(q)
			s := base
			s.Quality, s.Series, s.Observed, s.Unit, s.ESLMean = q, series, sum/secs, unit, e.Mean()
			s.ESL = fmt.Sprintf("%s (%s)", formatLevel(e.Mean(), unit), e.Source)
			out = append(out, s)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("no samples of the model's qualities (%s); name a quality after a metric of the resource, e.g. util_pct", qualityList(mi.model))
		}
	}
	for i := range out {
		sum, err := slp.Summarize(out[i].Series, a.Thresholds...)
		if err != nil {
			return nil, err
		}
		out[i].Summary = sum
	}
	return out, nil
}

func qualityList(m esl.Model) string {
	var qs []string
	for _, q := range m.Qualities() {
		qs = append(qs, string(q))
	}
	return strings.Join(qs, ", ")
}

// unitOf is the unit of a metric-named quality.
func unitOf(q esl.Quality) string {
	s := string(q)
	switch {
	case strings.HasSuffix(s, "_pct"):
		return "%"
	case strings.HasSuffix(s, "bytes_per_s"):
		return "B/s"
	case strings.HasSuffix(s, "_per_s"):
		return "/s"
	}
	return ""
}

// formatLevel prints a level in its unit: bytes per second in MiB/s.
func formatLevel(v float64, unit string) string {
	if math.IsNaN(v) {
		return "-"
	}
	switch unit {
	case "B/s":
		return fmt.Sprintf("%.4g MiB/s", v/(1<<20))
	case "%":
		return fmt.Sprintf("%.3g%%", v)
	}
	return fmt.Sprintf("%.4g %s", v, unit)
}

// bestThroughput is the highest mean throughput over the levels of the
// runs (seed 000 Table 1 divides cost by achieved req/s), and its level;
// of equal means, the lowest level's.
func bestThroughput(runs []store.Run) (float64, float64) {
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

// errNoCost explains a treatment without a cost.
var errNoCost = errors.New("no lab event: its hosts' prices are unknown")
