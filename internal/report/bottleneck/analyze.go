// Package bottleneck turns a campaign's results into its bottleneck report
// (docs/bottleneck.md): per run the multi-bottleneck classification with
// its plain-language finding, per treatment the utilisation densities and
// the intervention analysis, and for campaigns whose treatments vary tier
// sizes the maximum-throughput and bottleneck maps (seed-digest §6). The
// analyses are internal/analysis/bottleneck's; this package reads their
// inputs from the store and the campaign's spec, and lays out the results
// as report sections and as terminal text.
package bottleneck

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	ab "github.com/headroom-dev/headroom/internal/analysis/bottleneck"
	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
)

// Settings are the analyses' parameters, from a spec's analysis.bottleneck
// and slo sections.
type Settings struct {
	Classify     ab.Config
	Intervention ab.InterventionConfig
	// SLO judges each run's requests for the intervention analysis; nil
	// when the spec has none (then there is no intervention analysis).
	SLO *levels.SLO
	Map *spec.BottleneckMap
}

// SettingsOf reads the settings of one treatment's spec (or the campaign's).
func SettingsOf(s *spec.Spec) Settings {
	b := s.Analysis.Bottleneck
	set := Settings{
		Classify: ab.Config{Lambda: b.Lambda.Duration, Alpha: b.Alpha, Full: b.Full, Partial: b.Partial, Epsilon: b.Epsilon,
			PerCore: b.PerCore, Hosts: b.Hosts},
		Intervention: ab.InterventionConfig{Floor: b.SLOFloor, UtilFilter: b.UtilFilter, StrictRules: b.StrictRulesOn()},
		Map:          b.Map,
	}
	if set.Classify.Lambda == 0 {
		set.Classify.Lambda = ab.DefaultLambda
	}
	if s.SLO != nil {
		set.SLO = &levels.SLO{Percentile: s.SLO.Percentile, Threshold: s.SLO.Threshold.Duration, Op: s.SLO.Operation}
	}
	return set
}

// Analysis is everything the bottleneck report shows.
type Analysis struct {
	Campaign   string
	Treatments []*Treatment
	Map        *Map     // nil when the spec asks for none
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
	Density []ab.DensityMap
	// Intervention is the analysis of the sweep; nil when it could not be
	// made (InterventionNote says why).
	Intervention     *ab.Intervention
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
	Run    store.Run
	Result ab.Result
	Err    string // why it could not be classified ("" when it was)
}

// Map is the maximum-throughput and bottleneck maps over the treatments.
type Map struct {
	Axes spec.BottleneckMap
	Map  ab.ConfigMap
	// Treatment names the treatment of each cell's configuration.
	Treatment map[string]string
	Err       string // why there is no map ("" when there is one)
}

// maxDensity bounds the density heat maps per treatment.
const maxDensity = 6

// Analyze reads the campaign's spec from the store and analyses every
// treatment. Targets must be registered for the stored spec to parse.
func Analyze(st *store.Store) (*Analysis, error) {
	c, err := st.Campaign()
	if err != nil {
		return nil, err
	}
	if c.SpecYAML == "" {
		return &Analysis{Campaign: c.Name, Notes: []string{"the store holds imported resource data only, with no runs to analyse"}}, nil
	}
	s, err := spec.Parse(c.SpecFile, []byte(c.SpecYAML))
	if err != nil {
		return nil, fmt.Errorf("the spec stored with the campaign does not validate with this version (%v), so the bottleneck analysis cannot read its settings", err)
	}
	return AnalyzeSpec(st, s)
}

// AnalyzeSpec analyses the store's runs with the settings of s.
func AnalyzeSpec(st *store.Store, s *spec.Spec) (*Analysis, error) {
	a := &Analysis{Campaign: s.Name}
	type named struct {
		name string
		s    *spec.Spec
	}
	var ts []named
	if len(s.Treatments) == 0 {
		ts = append(ts, named{"", s})
	}
	for _, t := range s.Treatments {
		ts = append(ts, named{t.Name, t.Spec})
	}
	evs, err := st.Events(0)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		ta, err := analyzeTreatment(st, evs, t.name, SettingsOf(t.s))
		if err != nil {
			return nil, err
		}
		if ta != nil {
			a.Treatments = append(a.Treatments, ta)
		}
	}
	if m := s.Analysis.Bottleneck.Map; m != nil {
		a.Map = buildMap(*m, s, a.Treatments)
	}
	return a, nil
}

// analyzeTreatment classifies every completed run of a treatment and makes
// its densities and intervention analysis; nil when it has no completed run.
func analyzeTreatment(st *store.Store, evs []store.Event, name string, set Settings) (*Treatment, error) {
	runs, err := ab.CompletedRuns(st, name)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, nil
	}
	t := &Treatment{Name: name, Settings: set, MaxThroughput: math.NaN(), MaxLevel: math.NaN()}
	cfg := set.Classify
	// Each level's lambda-interval utilisations, pooled over its runs, per
	// resource: the densities' input.
	values := map[string]map[float64][]float64{}
	freq := map[string]float64{} // highest f_R of each bottleneck resource
	means := map[string]float64{}
	for _, r := range runs {
		ra := &Run{Run: r}
		t.Runs = append(t.Runs, ra)
		caps, err := ab.CapacitiesAt(evs, r.Start)
		if err != nil {
			ra.Err = err.Error()
			continue
		}
		series, w, notes, err := ab.RunSeries(st, r, caps, cfg)
		if err == nil {
			ra.Result, err = ab.Classify(series, w, cfg)
		}
		if err != nil {
			ra.Err = err.Error()
			continue
		}
		ra.Result.Notes = append(notes, ra.Result.Notes...)
		for _, rs := range ra.Result.Resources {
			if rs.Saturation != ab.SaturationNone {
				freq[rs.Resource] = math.Max(freq[rs.Resource], rs.F)
			}
			if r.Level >= runs[len(runs)-1].Level {
				means[rs.Resource] = math.Max(means[rs.Resource], rs.Mean)
			}
		}
		rs, err := ab.Resample(series, w, cfg.Lambda)
		if err != nil {
			continue
		}
		for _, s := range rs {
			if values[s.Resource] == nil {
				values[s.Resource] = map[float64][]float64{}
			}
			for _, p := range s.Points {
				values[s.Resource][r.Level] = append(values[s.Resource][r.Level], p.Util)
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
		var lv []ab.LevelValues
		for l, vs := range values[id] {
			lv = append(lv, ab.LevelValues{Level: l, Values: vs})
		}
		if len(lv) == 0 {
			continue
		}
		dm, err := ab.Density(id, lv, ab.DensityConfig{Step: 2})
		if err != nil {
			return nil, err
		}
		t.Density = append(t.Density, dm)
	}
	t.intervention(st, name)
	t.maxThroughput()
	return t, nil
}

// intervention runs the intervention analysis of the treatment's sweep.
func (t *Treatment) intervention(st *store.Store, name string) {
	set := t.Settings
	if set.SLO == nil {
		t.InterventionNote = "the intervention analysis needs an SLO (slo: in the spec) to judge each run's requests"
		return
	}
	lv := map[float64]bool{}
	for _, r := range t.Runs {
		lv[r.Run.Level] = true
	}
	if len(lv) < 2 {
		t.InterventionNote = "the intervention analysis needs a sweep over at least two load levels"
		return
	}
	caps, err := ab.TreatmentCapacities(st, name)
	if err == nil {
		var trials []ab.Trial
		trials, err = ab.TrialsFromStore(st, name, *set.SLO, caps, set.Classify)
		if err == nil {
			var iv ab.Intervention
			if iv, err = ab.AnalyzeIntervention(trials, set.Intervention); err == nil {
				t.Intervention = &iv
				return
			}
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

// PrimaryLabel names a run's primary bottleneck by tier and kind
// (Bottleneck.Label, e.g. "APP_CPU" or "DB_CPU+DB_IO (oscillatory)"),
// "none" when the run had no bottleneck resource.
func PrimaryLabel(r ab.Result) string {
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

// buildMap lays the treatments out on the map's two axes.
func buildMap(axes spec.BottleneckMap, s *spec.Spec, ts []*Treatment) *Map {
	m := &Map{Axes: axes, Treatment: map[string]string{}}
	if len(s.Treatments) < 2 {
		m.Err = "the maps need a campaign with at least two treatments that vary the tier sizes"
		return m
	}
	byName := map[string]*Treatment{}
	for _, t := range ts {
		byName[t.Name] = t
	}
	var points []ab.ConfigPoint
	for _, tr := range s.Treatments {
		x, errX := tr.Spec.Number(axes.X.Path)
		y, errY := tr.Spec.Number(axes.Y.Path)
		if errX != nil || errY != nil {
			m.Err = fmt.Sprintf("treatment %s has no tier size on an axis: %v", tr.Name, firstErr(errX, errY))
			return m
		}
		cfg := num(x) + "/" + num(y)
		p := ab.ConfigPoint{Config: cfg, MaxThroughput: math.NaN()}
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
	cm, err := ab.Maps(points, 0, 1, []string{axisLabel(axes.X), axisLabel(axes.Y)})
	if err != nil {
		m.Err = err.Error()
		return m
	}
	m.Map = cm
	return m
}

func axisLabel(a spec.MapAxis) string {
	if a.Label != "" {
		return a.Label
	}
	return a.Path
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
