package pressure

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/cost"
	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/analysis/slp"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
)

// ModelFile is a model given for one host's resource, e.g. by
// `headroom assess --model db1/volume:data=esl.yaml`.
type ModelFile struct {
	Host, Resource, File string
}

// Options configure FromResults. The zero value takes everything from the
// results (the treatments' analysis.esl included).
type Options struct {
	// Models override every other model, in every treatment.
	Models []ModelFile
	// Thresholds and OpSize, when set, override the settings' (headroom
	// assess --threshold, --op-size).
	Thresholds []float64
	OpSize     string
}

// FromResults assesses the results: Gather, then Analyze. It only reads.
func FromResults(r *results.Results, opt Options) (*Assessment, error) {
	in, set, err := Gather(r, opt)
	if err != nil {
		return nil, err
	}
	return Analyze(in, set)
}

// settingsOf are the analysis.esl settings the assessment uses: the first
// treatment's (the campaign's; treatments keep their own models and
// option_a), with the options' overrides.
func settingsOf(r *results.Results, opt Options) results.ESL {
	var set results.ESL
	if ts := r.Treatments(); len(ts) > 0 {
		set = ts[0].Analysis.ESL
	}
	if len(opt.Thresholds) > 0 {
		set.Thresholds = opt.Thresholds
	}
	if opt.OpSize != "" {
		set.OpSize = opt.OpSize
	}
	return set
}

// Gather reads the inputs of Analyze from the results: the treatments
// with completed runs (without any, one treatment of every sample), each
// with the lab it ran in, the models of its hosts' resources over time,
// their samples, and the provider/client pairs to align.
func Gather(r *results.Results, opt Options) (Input, results.ESL, error) {
	set := settingsOf(r, opt)
	if err := (&Assessment{}).configure(set); err != nil {
		return Input{}, set, err
	}
	in := Input{Campaign: r.Campaign().Name}
	flags, err := loadFlagModels(opt.Models)
	if err != nil {
		return in, set, err
	}
	stored, err := r.ESLModels()
	if err != nil {
		return in, set, err
	}
	specDir := ""
	if f := r.Campaign().SpecFile; f != "" {
		specDir = filepath.Dir(f)
	}
	saved := map[results.ESLModelRow]bool{}
	keep := func(row results.ESLModelRow) {
		if !saved[row] {
			saved[row] = true
			in.FromFiles = append(in.FromFiles, row)
		}
	}
	cache := map[Key][]monitor.Sample{}
	caps, err := cost.Capacities(r)
	if err != nil {
		return in, set, err
	}
	for _, t := range treatmentsOf(r) {
		ti := TreatmentInput{Name: t.Name, Runs: t.runs, Imported: t.imported, OptionA: t.Analysis.ESL.OptionA, Models: map[Key]Timeline{}}
		if c, ok := caps[t.Name]; ok && !t.imported {
			ti.Capacity = &c
		}
		if l, ok := labOf(r, t.runs); ok {
			ti.Lab = &l
			ti.Catalog, ti.CatalogFrom = cost.CatalogFor(l)
			lm, notes, err := labTimelines(r, l, ti.Catalog, ti.CatalogFrom, windowsOf(t.runs))
			if err != nil {
				return in, set, err
			}
			for _, n := range notes {
				ti.Notes = append(ti.Notes, treatmentPrefix(t.Name)+n)
			}
			for k, tl := range lm {
				ti.Models[k] = tl
			}
		}
		if err := addStatic(&ti, t.Treatment, stored, flags, specDir, keep); err != nil {
			return in, set, err
		}
		ti.Samples = map[Key][]monitor.Sample{}
		for k := range ti.Models {
			xs, ok := cache[k]
			if !ok {
				if xs, err = r.Samples(results.SampleFilter{RunID: -1, Host: k.Host, Resource: k.Resource}); err != nil {
					return in, set, err
				}
				cache[k] = xs
			}
			ti.Samples[k] = xs
		}
		in.Treatments = append(in.Treatments, ti)
	}
	if in.Pairs, in.FitNotes, err = pairsOf(r, set.Pairs); err != nil {
		return in, set, err
	}
	return in, set, nil
}

// assessed is a treatment with the runs that are assessed.
type assessed struct {
	results.Treatment
	runs     []results.Run
	imported bool
}

// treatmentsOf lists the treatments with completed runs that have a
// measured phase, in campaign order. Without any such run, one treatment
// covers every sample (imported data), with the first treatment's
// settings.
func treatmentsOf(r *results.Results) []assessed {
	var out []assessed
	for _, t := range r.Treatments() {
		var runs []results.Run
		for _, run := range r.CompletedRuns(t.Name) {
			if !run.Summary.MeasureStart.IsZero() && run.Summary.MeasureEnd.After(run.Summary.MeasureStart) {
				runs = append(runs, run)
			}
		}
		if len(runs) > 0 {
			out = append(out, assessed{Treatment: t, runs: runs})
		}
	}
	if len(out) == 0 {
		t := r.Treatments()[0]
		t.Name = ""
		return []assessed{{Treatment: t, imported: true}}
	}
	return out
}

// labOf is the lab the runs ran in: the last to come up before the first
// of them (each treatment brings its lab up before its runs); without
// runs, the last lab.
func labOf(r *results.Results, runs []results.Run) (results.Lab, bool) {
	if len(runs) == 0 {
		labs := r.Labs()
		if len(labs) == 0 {
			return results.Lab{}, false
		}
		return labs[len(labs)-1], true
	}
	first := runs[0].Start
	for _, run := range runs[1:] {
		if run.Start.Before(first) {
			first = run.Start
		}
	}
	return r.LabAt(first)
}

type modelInfo struct {
	model  esl.Model
	origin string
}

func loadFlagModels(files []ModelFile) (map[Key]modelInfo, error) {
	out := map[Key]modelInfo{}
	for _, f := range files {
		m, err := esl.Load(f.File)
		if err != nil {
			return nil, err
		}
		out[Key{f.Host, f.Resource}] = modelInfo{model: m, origin: "file " + f.File + " (--model)"}
	}
	return out, nil
}

const storedSuffix = "stored with the results"

// addStatic lays the models given for the whole treatment over the lab's;
// later sources override earlier ones: models stored with the results
// (for every treatment, then for this one), the treatment's
// analysis.esl.models files, and the command line's. A model file that
// cannot be read falls back to its stored copy.
func addStatic(ti *TreatmentInput, t results.Treatment, stored []results.ESLModelRow, flags map[Key]modelInfo, specDir string, keep func(results.ESLModelRow)) error {
	set := func(k Key, m esl.Model, origin string) { ti.Models[k] = Timeline{{Model: m, Origin: origin}} }
	useStored := func(sm results.ESLModelRow) {
		m, err := esl.Parse([]byte(sm.Model))
		if err != nil {
			ti.Notes = append(ti.Notes, fmt.Sprintf("the model stored for %s/%s does not parse (%v); it is left out", sm.Host, sm.Resource, err))
			return
		}
		set(Key{sm.Host, sm.Resource}, m, sm.Origin+", "+storedSuffix)
	}
	for _, sm := range stored {
		if sm.Treatment == "" {
			useStored(sm)
		}
	}
	for _, sm := range stored {
		if ti.Name != "" && sm.Treatment == ti.Name {
			useStored(sm)
		}
	}
	for _, mf := range t.Analysis.ESL.Models {
		k := Key{mf.Host, mf.Resource}
		path := mf.File
		if !filepath.IsAbs(path) {
			path = filepath.Join(specDir, path)
		}
		m, err := esl.Load(path)
		if err != nil {
			if prev, ok := ti.Models[k]; ok && len(prev) == 1 && strings.HasSuffix(prev[0].Origin, storedSuffix) {
				ti.Notes = append(ti.Notes, fmt.Sprintf("%s%v; the copy stored with the results is used", treatmentPrefix(ti.Name), err))
				continue
			}
			return fmt.Errorf("analysis.esl.models: %w", err)
		}
		set(k, m, "file "+mf.File)
		if row, err := rowOf(ti.Name, k, m, "file "+mf.File); err == nil {
			keep(row)
		}
	}
	keys := make([]Key, 0, len(flags))
	for k := range flags {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Host+"/"+keys[i].Resource < keys[j].Host+"/"+keys[j].Resource })
	for _, k := range keys {
		v := flags[k]
		set(k, v.model, v.origin)
		if row, err := rowOf("", k, v.model, v.origin); err == nil {
			keep(row)
		}
	}
	return nil
}

// rowOf is a model as the results store keeps it.
func rowOf(treatment string, k Key, m esl.Model, origin string) (results.ESLModelRow, error) {
	doc, err := json.Marshal(m)
	if err != nil {
		return results.ESLModelRow{}, err
	}
	return results.ESLModelRow{Treatment: treatment, Host: k.Host, Resource: k.Resource, Origin: origin, Model: string(doc)}, nil
}

// pairsOf resolves the configured pairs, or, without any, pairs each
// host's only provider-side (CloudWatch) volume series with its only
// client-side one (sampled or iostat), and reads their samples.
func pairsOf(r *results.Results, pairs []results.ESLPair) ([]PairInput, []string, error) {
	series, err := volumeSeries(r)
	if err != nil {
		return nil, nil, err
	}
	var todo []PairInput
	var notes []string
	if len(pairs) > 0 {
		for i, pr := range pairs {
			p, err := resolveRef(pr.Provider, series)
			if err != nil {
				return nil, nil, fmt.Errorf("analysis.esl.pairs[%d].provider: %w", i, err)
			}
			c, err := resolveRef(pr.Client, series)
			if err != nil {
				return nil, nil, fmt.Errorf("analysis.esl.pairs[%d].client: %w", i, err)
			}
			todo = append(todo, PairInput{Provider: p, Client: c})
		}
	} else {
		prov, cli := map[string][]SeriesRef{}, map[string][]SeriesRef{}
		for _, s := range series {
			switch s.Source {
			case monitor.SourceCloudWatch:
				prov[s.Host] = append(prov[s.Host], s)
			case monitor.SourceSampled, monitor.SourceIostat:
				cli[s.Host] = append(cli[s.Host], s)
			}
		}
		hosts := make([]string, 0, len(prov))
		for h := range prov {
			hosts = append(hosts, h)
		}
		sort.Strings(hosts)
		for _, h := range hosts {
			switch {
			case len(prov[h]) == 1 && len(cli[h]) == 1:
				todo = append(todo, PairInput{Provider: prov[h][0], Client: cli[h][0], Auto: true})
			case len(cli[h]) > 1:
				notes = append(notes, fmt.Sprintf("host %s has provider-side volume data and %d client-side volume series; name the pair in analysis.esl.pairs to fit their normalisation", h, len(cli[h])))
			}
		}
	}
	load := func(s SeriesRef) ([]monitor.Sample, error) {
		return r.Samples(results.SampleFilter{RunID: -1, Host: s.Host, Resource: s.Resource, Source: s.Source})
	}
	for i := range todo {
		if todo[i].ProviderSamples, err = load(todo[i].Provider); err != nil {
			return nil, nil, err
		}
		if todo[i].ClientSamples, err = load(todo[i].Client); err != nil {
			return nil, nil, err
		}
	}
	return todo, notes, nil
}

// volumeSeries lists every volume or disk series with operation counts.
func volumeSeries(r *results.Results) ([]SeriesRef, error) {
	samples, err := r.Samples(results.SampleFilter{RunID: -1, Metric: monitor.DiskReadOps})
	if err != nil {
		return nil, err
	}
	seen := map[SeriesRef]bool{}
	var out []SeriesRef
	for _, s := range samples {
		ref := SeriesRef{s.Host, s.Resource, s.Source}
		if IsVolume(s.Resource) && !seen[ref] {
			seen[ref] = true
			out = append(out, ref)
		}
	}
	return out, nil
}

// resolveRef finds the series a HOST/RESOURCE[@SOURCE] names; without a
// source, the resource must have only one.
func resolveRef(ref string, series []SeriesRef) (SeriesRef, error) {
	host, res, src, err := slp.ParseSeries(ref)
	if err != nil {
		return SeriesRef{}, err
	}
	var found []SeriesRef
	for _, s := range series {
		if s.Host == host && s.Resource == res && (src == "" || s.Source == src) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return SeriesRef{}, fmt.Errorf("%s has no volume samples (read_ops_per_s) in the results; check the host, resource and source", ref)
	case 1:
		return found[0], nil
	}
	var srcs []string
	for _, f := range found {
		srcs = append(srcs, f.Source)
	}
	return SeriesRef{}, fmt.Errorf("%s has samples from %s; add @SOURCE to pick one", ref, strings.Join(srcs, " and "))
}
