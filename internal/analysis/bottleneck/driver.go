package bottleneck

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/results"
)

// Settings are the analyses' parameters, from a treatment's
// analysis.bottleneck and slo facts.
type Settings struct {
	Classify     Config
	Intervention InterventionConfig
	// SLO judges each run's requests for the intervention analysis; nil
	// when the treatment has none (then there is no intervention analysis).
	SLO *levels.SLO
	Map *results.BottleneckMap
}

// SettingsOf reads the settings of one treatment (zero fields take the
// analyses' defaults).
func SettingsOf(t results.Treatment) Settings {
	b := t.Analysis.Bottleneck
	set := Settings{
		Classify: Config{Lambda: b.Lambda.D(), Alpha: b.Alpha, Full: b.Full, Partial: b.Partial, Epsilon: b.Epsilon,
			PerCore: b.PerCore, Hosts: b.Hosts},
		Intervention: InterventionConfig{Floor: b.SLOFloor, UtilFilter: b.UtilFilter, StrictRules: b.StrictRulesOn()},
		Map:          b.Map,
	}
	if set.Classify.Lambda == 0 {
		set.Classify.Lambda = DefaultLambda
	}
	if t.SLO != nil {
		set.SLO = &levels.SLO{Percentile: t.SLO.Percentile, Threshold: t.SLO.Threshold, Op: t.SLO.Op}
	}
	return set
}

// Analysis is everything the bottleneck analysis found in a campaign.
type Analysis struct {
	Campaign   string
	Treatments []*Treatment
	Map        *Map     // nil when the treatments ask for none
	Notes      []string // what could not be analysed, and why
}

// Treatment is one treatment's analyses (the whole campaign when it has no
// treatments; Name is then "").
type Treatment struct {
	Name     string
	Settings Settings
	Runs     []*Run // by level, then repetition
	// Resources are the resources that were a bottleneck resource in at
	// least one run, most often saturated first.
	Resources []string
	// Density is the utilisation density per level of each of Resources
	// (at most maxDensity of them; or the busiest resources when none was a
	// bottleneck).
	Density []DensityMap
	// Intervention is the analysis of the sweep; nil when it could not be
	// made (InterventionNote says why).
	Intervention     *Intervention
	InterventionNote string
	// MaxThroughput is the highest mean throughput of a level (ok/s) and
	// MaxLevel that level; MaxLabel names the primary bottleneck there.
	MaxThroughput float64
	MaxLevel      float64
	MaxLabel      string
	Notes         []string
}

// Run is one run's classification.
type Run struct {
	Run    results.Run
	Result Result
	Err    string // why it could not be classified ("" when it was)
}

// Map is the maximum-throughput and bottleneck maps over the treatments.
type Map struct {
	Axes results.BottleneckMap
	Map  ConfigMap
	// Treatment names the treatment of each cell's configuration.
	Treatment map[string]string
	Err       string // why there is no map ("" when there is one)
}

// maxDensity bounds the density heat maps per treatment.
const maxDensity = 6

// FromResults analyses every treatment of a campaign with its own
// settings: each completed run's classification, the treatment's
// densities, intervention analysis and maximum throughput, and the maps
// when the treatments name their axes.
//
// It is computed once per Results (results.Memo): the answer card, the
// bottleneck section and the interval charts all ask for it, and each
// reads every run's samples. The value is shared and must not be changed.
func FromResults(r *results.Results) (*Analysis, error) {
	v, err := r.Memo("bottleneck.FromResults", func() (any, error) { return fromResults(r) })
	if err != nil {
		return nil, err
	}
	return v.(*Analysis), nil
}

func fromResults(r *results.Results) (*Analysis, error) {
	c := r.Campaign()
	a := &Analysis{Campaign: c.Name}
	if len(r.Runs()) == 0 && c.SpecYAML == "" {
		a.Notes = append(a.Notes, "the store holds imported resource data only, with no runs to analyse")
		return a, nil
	}
	if legacy, note := r.Legacy(); legacy && note != "" {
		a.Notes = append(a.Notes, "some settings could not be read and take their defaults: "+note)
	}
	var axes *results.BottleneckMap
	for _, t := range r.Treatments() {
		if axes == nil {
			axes = t.Analysis.Bottleneck.Map
		}
		ta, err := analyzeTreatment(r, t.Name, SettingsOf(t))
		if err != nil {
			return nil, err
		}
		if ta != nil {
			a.Treatments = append(a.Treatments, ta)
		}
	}
	if axes != nil {
		a.Map = buildMap(*axes, r.Treatments(), a.Treatments)
	}
	return a, nil
}

// analyzeTreatment classifies every completed run of a treatment and makes
// its densities and intervention analysis; nil when it has no completed run.
func analyzeTreatment(r *results.Results, name string, set Settings) (*Treatment, error) {
	runs := r.CompletedRuns(name)
	if len(runs) == 0 {
		return nil, nil
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if runs[i].Level != runs[j].Level {
			return runs[i].Level < runs[j].Level
		}
		return runs[i].Repetition < runs[j].Repetition
	})
	top := runs[len(runs)-1].Level
	t := &Treatment{Name: name, Settings: set, MaxThroughput: math.NaN(), MaxLevel: math.NaN()}
	cfg := set.Classify
	// Each level's lambda-interval utilisations, pooled over its runs, per
	// resource: the densities' input.
	values := map[string]map[float64][]float64{}
	freq := map[string]float64{} // highest f_R of each bottleneck resource
	means := map[string]float64{}
	for _, run := range runs {
		ra := &Run{Run: run}
		t.Runs = append(t.Runs, ra)
		series, w, notes, err := RunSeries(r, run, cfg)
		if err == nil {
			ra.Result, err = Classify(series, w, cfg)
		}
		if err != nil {
			ra.Err = err.Error()
			continue
		}
		ra.Result.Notes = append(notes, ra.Result.Notes...)
		for _, rs := range ra.Result.Resources {
			if rs.Saturation != SaturationNone {
				freq[rs.Resource] = math.Max(freq[rs.Resource], rs.F)
			}
			if run.Level >= top {
				means[rs.Resource] = math.Max(means[rs.Resource], rs.Mean)
			}
		}
		rs, err := Resample(series, w, cfg.Lambda)
		if err != nil {
			continue
		}
		for _, s := range rs {
			if values[s.Resource] == nil {
				values[s.Resource] = map[float64][]float64{}
			}
			for _, p := range s.Points {
				values[s.Resource][run.Level] = append(values[s.Resource][run.Level], p.Util)
			}
		}
	}
	for id := range freq {
		t.Resources = append(t.Resources, id)
	}
	sort.Slice(t.Resources, func(i, j int) bool {
		a, b := t.Resources[i], t.Resources[j]
		if freq[a] != freq[b] {
			return freq[a] > freq[b]
		}
		return a < b
	})
	dens := t.Resources
	if len(dens) == 0 {
		// No bottleneck resource: the busiest resources at the highest
		// level show how far each one was from saturation.
		for id := range means {
			dens = append(dens, id)
		}
		sort.Slice(dens, func(i, j int) bool {
			if means[dens[i]] != means[dens[j]] {
				return means[dens[i]] > means[dens[j]]
			}
			return dens[i] < dens[j]
		})
		dens = dens[:min(3, len(dens))]
	}
	if len(dens) > maxDensity {
		t.Notes = append(t.Notes, fmt.Sprintf("utilisation densities are drawn for the %d most often saturated of %d bottleneck resources", maxDensity, len(dens)))
		dens = dens[:maxDensity]
	}
	for _, id := range dens {
		var lv []LevelValues
		for l, vs := range values[id] {
			lv = append(lv, LevelValues{Level: l, Values: vs})
		}
		if len(lv) == 0 {
			continue
		}
		dm, err := Density(id, lv, DensityConfig{Step: 2})
		if err != nil {
			return nil, err
		}
		t.Density = append(t.Density, dm)
	}
	t.intervention(r)
	t.maxThroughput()
	return t, nil
}

// intervention runs the intervention analysis of the treatment's sweep.
func (t *Treatment) intervention(r *results.Results) {
	set := t.Settings
	if set.SLO == nil {
		t.InterventionNote = "the intervention analysis needs an SLO (slo: in the spec) to judge each run's requests"
		return
	}
	lv := map[float64]bool{}
	for _, run := range t.Runs {
		lv[run.Run.Level] = true
	}
	if len(lv) < 2 {
		t.InterventionNote = "the intervention analysis needs a sweep over at least two load levels"
		return
	}
	trials, err := Trials(r, t.Name, *set.SLO, set.Classify)
	if err == nil {
		var iv Intervention
		if iv, err = AnalyzeIntervention(trials, set.Intervention); err == nil {
			t.Intervention = &iv
			return
		}
	}
	t.InterventionNote = "the intervention analysis could not be made: " + err.Error()
}

// maxThroughput finds the level with the highest mean throughput and the
// primary bottleneck of its runs.
func (t *Treatment) maxThroughput() {
	sum := map[float64]float64{}
	n := map[float64]int{}
	for _, r := range t.Runs {
		sum[r.Run.Level] += r.Run.Summary.Throughput
		n[r.Run.Level]++
	}
	for l, s := range sum {
		m := s / float64(n[l])
		if math.IsNaN(t.MaxThroughput) || m > t.MaxThroughput || m == t.MaxThroughput && l < t.MaxLevel {
			t.MaxThroughput, t.MaxLevel = m, l
		}
	}
	votes := map[string]int{}
	for _, r := range t.Runs {
		if r.Run.Level == t.MaxLevel && r.Err == "" {
			votes[PrimaryLabel(r.Result)]++
		}
	}
	best := -1
	for l, v := range votes {
		if v > best || v == best && l < t.MaxLabel {
			t.MaxLabel, best = l, v
		}
	}
}

// Config is the classification's parameters with their defaults, as the
// treatment's runs were classified.
func (t *Treatment) Config() Config {
	for _, r := range t.Runs {
		if r.Err == "" {
			return r.Result.Config
		}
	}
	cfg := t.Settings.Classify
	if cfg.Alpha == 0 {
		cfg.Alpha = DefaultAlpha
	}
	return cfg
}

// PrimaryLabel names a run's primary bottleneck by tier and kind
// (Bottleneck.Label, e.g. "APP_CPU" or "DB_CPU+DB_IO (oscillatory)"),
// "none" when the run had no bottleneck resource.
func PrimaryLabel(r Result) string {
	var ls []string
	seen := map[string]bool{}
	for _, b := range r.Primary() {
		// Tied primaries of one tier and kind (the CPUs of app1 and app2)
		// have one label.
		if l := b.Label(); !seen[l] {
			seen[l] = true
			ls = append(ls, l)
		}
	}
	if len(ls) == 0 {
		return "none"
	}
	sort.Strings(ls)
	return strings.Join(ls, " | ")
}

// buildMap lays the treatments out on the map's two axes; each
// treatment's position is the value its facts hold for each axis's path
// (Treatment.Numbers).
func buildMap(axes results.BottleneckMap, ts []results.Treatment, analysed []*Treatment) *Map {
	m := &Map{Axes: axes, Treatment: map[string]string{}}
	if len(ts) < 2 {
		m.Err = "the maps need a campaign with at least two treatments that vary the tier sizes"
		return m
	}
	byName := map[string]*Treatment{}
	for _, t := range analysed {
		byName[t.Name] = t
	}
	var points []ConfigPoint
	for _, tr := range ts {
		x, okX := tr.Numbers[axes.X.Path]
		y, okY := tr.Numbers[axes.Y.Path]
		if !okX || !okY {
			missing := axes.X.Path
			if okX {
				missing = axes.Y.Path
			}
			m.Err = fmt.Sprintf("treatment %s has no tier size on an axis: no number at %s", tr.Name, missing)
			return m
		}
		cfg := num(x) + "/" + num(y)
		p := ConfigPoint{Config: cfg, MaxThroughput: math.NaN()}
		if t := byName[tr.Name]; t != nil {
			p.MaxThroughput, p.Bottleneck = t.MaxThroughput, t.MaxLabel
		}
		if prev, dup := m.Treatment[cfg]; dup {
			m.Err = fmt.Sprintf("treatments %s and %s have the same tier sizes (%s = %s, %s = %s); the map shows one treatment per cell, so give treatments that differ in other settings a map of their own",
				prev, tr.Name, axes.X.Path, num(x), axes.Y.Path, num(y))
			return m
		}
		m.Treatment[cfg] = tr.Name
		points = append(points, p)
	}
	cm, err := Maps(points, 0, 1, []string{AxisLabel(axes.X), AxisLabel(axes.Y)})
	if err != nil {
		m.Err = err.Error()
		return m
	}
	m.Map = cm
	return m
}

// AxisLabel is how a map axis reads: its label, else its path.
func AxisLabel(a results.MapAxis) string {
	if a.Label != "" {
		return a.Label
	}
	return a.Path
}
