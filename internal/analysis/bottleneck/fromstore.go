package bottleneck

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/store"
)

// The functions below only read the inputs of the analyses from a results
// store; the analyses themselves stay pure.

// CompletedRuns returns, for every plan slot, its last completed run
// (the rule of levels.FromStore), restricted to one treatment. treatment ""
// selects every run and is refused when the campaign has several
// treatments, since their sweeps must be analysed apart.
func CompletedRuns(st *store.Store, treatment string) ([]store.Run, error) {
	runs, err := st.Runs()
	if err != nil {
		return nil, err
	}
	last := map[int]store.Run{}
	treatments := map[string]bool{}
	for _, r := range runs {
		if r.Status != store.StatusCompleted {
			continue
		}
		treatments[r.Treatment] = true
		if treatment != "" && r.Treatment != treatment {
			continue
		}
		last[r.Slot] = r // Runs are ordered by ID: a later run replaces an earlier one
	}
	if treatment == "" && len(treatments) > 1 {
		names := make([]string, 0, len(treatments))
		for t := range treatments {
			names = append(names, fmt.Sprintf("%q", t))
		}
		sort.Strings(names)
		return nil, fmt.Errorf("bottleneck: the campaign has treatments %s; choose one to analyse", strings.Join(names, ", "))
	}
	out := make([]store.Run, 0, len(last))
	for _, r := range last {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Level != out[j].Level {
			return out[i].Level < out[j].Level
		}
		return out[i].Repetition < out[j].Repetition
	})
	return out, nil
}

// RunSeries reads run r's samples and builds the utilisation series of its
// resources (FromSamples) over its measured window, with FromSamples'
// notes.
func RunSeries(st *store.Store, r store.Run, caps Capacities, cfg Config) ([]Series, Window, []string, error) {
	w := Window{From: r.Summary.MeasureStart, To: r.Summary.MeasureEnd}
	if w.From.IsZero() || !w.To.After(w.From) {
		return nil, Window{}, nil, fmt.Errorf("bottleneck: run %d has no measured window; analyse a completed run", r.ID)
	}
	samples, err := st.Samples(store.SampleFilter{RunID: r.ID, From: w.From.Add(-cfg.Lambda), To: w.To})
	if err != nil {
		return nil, Window{}, nil, err
	}
	series, notes, err := FromSamples(samples, caps, cfg)
	if err != nil {
		return nil, Window{}, nil, fmt.Errorf("run %d: %w", r.ID, err)
	}
	return series, w, notes, nil
}

// ClassifyRun is Classify on run r's samples over its measured window.
func ClassifyRun(st *store.Store, r store.Run, caps Capacities, cfg Config) (Result, error) {
	series, w, notes, err := RunSeries(st, r, caps, cfg)
	if err != nil {
		return Result{}, err
	}
	res, err := Classify(series, w, cfg)
	if err != nil {
		return Result{}, fmt.Errorf("run %d: %w", r.ID, err)
	}
	res.Notes = append(notes, res.Notes...)
	return res, nil
}

// TrialsFromStore builds the trials of an intervention analysis: one per
// completed run of the treatment (CompletedRuns), with its SLO
// satisfaction as levels computes it (the percentage of offered requests
// that succeeded within the threshold) and the mean of every sampled metric
// over the measured window, keyed "host/resource metric", plus the
// capacity-derived utilisations as "<series> util_pct". Only the hosts of
// cfg.Hosts count (all when empty); the rest of cfg is not used.
func TrialsFromStore(st *store.Store, treatment string, slo levels.SLO, caps Capacities, cfg Config) ([]Trial, error) {
	runs, err := CompletedRuns(st, treatment)
	if err != nil {
		return nil, err
	}
	var out []Trial
	for _, r := range runs {
		ivs, err := st.Intervals(r.ID, "measure")
		if err != nil {
			return nil, err
		}
		sum := levels.Summarize(levels.Input{Model: r.Model, Runs: []levels.RunData{{Run: r, Intervals: ivs}}, SLO: &slo})
		if len(sum.Levels) != 1 || sum.Levels[0].SLO == nil || math.IsNaN(sum.Levels[0].SLO.Within.Mean) {
			return nil, fmt.Errorf("bottleneck: run %d (level %v, repetition %d) offered no request, so its SLO satisfaction is undefined; re-run it or leave it out",
				r.ID, r.Level, r.Repetition)
		}
		t := Trial{Level: r.Level, Repetition: r.Repetition, Satisfaction: 100 * sum.Levels[0].SLO.Within.Mean, Metrics: map[string]float64{}}
		from, to := r.Summary.MeasureStart, r.Summary.MeasureEnd
		if !from.IsZero() && to.After(from) {
			samples, err := st.Samples(store.SampleFilter{RunID: r.ID, From: from, To: to})
			if err != nil {
				return nil, err
			}
			kept := samples[:0:0]
			for _, s := range samples {
				if cfg.hostIncluded(s.Host) {
					kept = append(kept, s)
				}
			}
			for k, v := range metricMeans(kept) {
				t.Metrics[k] = v
			}
			series, _, err := FromSamples(kept, caps, Config{})
			if err != nil {
				return nil, fmt.Errorf("run %d: %w", r.ID, err)
			}
			for _, s := range series {
				if isDerived(s.Resource, caps) {
					var sum float64
					for _, p := range s.Points {
						sum += p.Util
					}
					t.Metrics[s.Resource+" "+monitor.CPUUtilPct] = sum / float64(len(s.Points))
				}
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// metricMeans is the mean of every (host, resource, metric) over samples.
func metricMeans(samples []monitor.Sample) map[string]float64 {
	type acc struct {
		sum float64
		n   int
	}
	accs := map[string]*acc{}
	for _, s := range samples {
		if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
			continue
		}
		k := ResourceID(s.Host, s.Resource) + " " + s.Metric
		a := accs[k]
		if a == nil {
			a = &acc{}
			accs[k] = a
		}
		a.sum += s.Value
		a.n++
	}
	out := make(map[string]float64, len(accs))
	for k, a := range accs {
		out[k] = a.sum / float64(a.n)
	}
	return out
}

// isDerived reports whether a series comes from a capacity (its samples
// carry no util_pct of their own).
func isDerived(id string, caps Capacities) bool {
	if _, ok := caps.Link[id]; ok {
		return true
	}
	for _, suffix := range []string{SuffixIOPS, SuffixBandwidth, SuffixCores} {
		if strings.HasSuffix(id, suffix) {
			return true
		}
	}
	return false
}

// DensityFromStore is the utilisation density map of one resource (a
// series name, e.g. "db1/disk:vda") over the workload levels of a
// treatment: at each level, the lambda-interval values of all its
// completed runs, pooled.
func DensityFromStore(st *store.Store, treatment, resource string, caps Capacities, cfg Config, dcfg DensityConfig) (DensityMap, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return DensityMap{}, err
	}
	runs, err := CompletedRuns(st, treatment)
	if err != nil {
		return DensityMap{}, err
	}
	byLevel := map[float64][]float64{}
	for _, r := range runs {
		series, w, _, err := RunSeries(st, r, caps, cfg)
		if err != nil {
			return DensityMap{}, err
		}
		for _, s := range series {
			if s.Resource != resource {
				continue
			}
			rs, err := Resample([]Series{s}, w, cfg.Lambda)
			if err != nil {
				return DensityMap{}, fmt.Errorf("run %d: %w", r.ID, err)
			}
			for _, p := range rs[0].Points {
				byLevel[r.Level] = append(byLevel[r.Level], p.Util)
			}
		}
	}
	if len(byLevel) == 0 {
		return DensityMap{}, fmt.Errorf("bottleneck: no run has utilisation samples of %s; name a resource as host/resource, e.g. db1/cpu", resource)
	}
	var lv []LevelValues
	for l, vs := range byLevel {
		lv = append(lv, LevelValues{Level: l, Values: vs})
	}
	return Density(resource, lv, dcfg)
}
