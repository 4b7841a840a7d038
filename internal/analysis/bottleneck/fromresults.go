package bottleneck

import (
	"fmt"
	"math"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// The functions below only read the inputs of the analyses from the
// results model; the analyses themselves stay pure.

// RunSeries reads run's samples and builds the utilisation series of its
// resources (FromSamplesOver) over its measured window, with the hosts'
// capacities as they were in force (RunCapacities), and FromSamplesOver's
// notes.
func RunSeries(r *results.Results, run results.Run, cfg Config) ([]Series, Window, []string, error) {
	w := Window{From: run.Summary.MeasureStart, To: run.Summary.MeasureEnd}
	if w.From.IsZero() || !w.To.After(w.From) {
		return nil, Window{}, nil, fmt.Errorf("bottleneck: run %d has no measured window; analyse a completed run", run.ID)
	}
	from := w.From.Add(-cfg.Lambda)
	samples, err := r.Samples(results.SampleFilter{RunID: run.ID, From: from, To: w.To})
	if err != nil {
		return nil, Window{}, nil, err
	}
	series, notes, err := FromSamplesOver(samples, RunCapacities(r, run, from, w.To), cfg)
	if err != nil {
		return nil, Window{}, nil, fmt.Errorf("run %d: %w", run.ID, err)
	}
	return series, w, notes, nil
}

// ClassifyRun is Classify on run's samples over its measured window.
func ClassifyRun(r *results.Results, run results.Run, cfg Config) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	series, w, notes, err := RunSeries(r, run, cfg)
	if err != nil {
		return Result{}, err
	}
	res, err := Classify(series, w, cfg)
	if err != nil {
		return Result{}, fmt.Errorf("run %d: %w", run.ID, err)
	}
	res.Notes = append(notes, res.Notes...)
	return res, nil
}

// Trials builds the trials of an intervention analysis: one per completed
// run of the treatment, with its SLO satisfaction as levels computes it
// (the percentage of offered requests that succeeded within the threshold)
// and the mean of every sampled metric over the measured window, keyed
// "host/resource metric", plus the capacity-derived utilisations as
// "<series> util_pct". Only the hosts of cfg.Hosts count (all when empty);
// the rest of cfg is not used.
func Trials(r *results.Results, treatment string, slo levels.SLO, cfg Config) ([]Trial, error) {
	var out []Trial
	// The runs as the load response folded them (computed once per
	// results); a run it does not hold is folded here.
	in, _, err := levels.FromResults(r, treatment)
	if err != nil {
		return nil, err
	}
	folded := map[int64]levels.RunData{}
	for _, rd := range in.Runs {
		folded[rd.Run.ID] = rd
	}
	for _, run := range r.CompletedRuns(treatment) {
		rd, ok := folded[run.ID]
		if !ok {
			f := levels.NewFolder(run, &slo)
			if err := r.EachInterval(run.ID, "measure", func(iv *store.Interval) error {
				f.Add(iv)
				return nil
			}); err != nil {
				return nil, err
			}
			rd = f.Done()
		}
		sum := levels.Summarize(levels.Input{Model: run.Model, Runs: []levels.RunData{rd}, SLO: &slo})
		if len(sum.Levels) != 1 || sum.Levels[0].SLO == nil || math.IsNaN(sum.Levels[0].SLO.Within.Mean) {
			return nil, fmt.Errorf("bottleneck: run %d (level %v, repetition %d) offered no request, so its SLO satisfaction is undefined; re-run it or leave it out",
				run.ID, run.Level, run.Repetition)
		}
		t := Trial{Level: run.Level, Repetition: run.Repetition, Satisfaction: 100 * sum.Levels[0].SLO.Within.Mean, Metrics: map[string]float64{}}
		from, to := run.Summary.MeasureStart, run.Summary.MeasureEnd
		if !from.IsZero() && to.After(from) {
			samples, err := r.Samples(results.SampleFilter{RunID: run.ID, From: from, To: to})
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
			sched := RunCapacities(r, run, from, to)
			series, _, err := FromSamplesOver(kept, sched, Config{})
			if err != nil {
				return nil, fmt.Errorf("run %d: %w", run.ID, err)
			}
			for _, s := range series {
				if isDerived(s.Resource, sched) {
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
func isDerived(id string, sched CapacitySchedule) bool {
	if sched.IsLink(id) {
		return true
	}
	for _, suffix := range []string{SuffixIOPS, SuffixBandwidth, SuffixCores} {
		if strings.HasSuffix(id, suffix) {
			return true
		}
	}
	return false
}

// TreatmentDensity is the utilisation density map of one resource (a
// series name, e.g. "db1/volume:data#iops") over the workload levels of a
// treatment: at each level, the lambda-interval values of all its
// completed runs, pooled.
func TreatmentDensity(r *results.Results, treatment, resource string, cfg Config, dcfg DensityConfig) (DensityMap, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return DensityMap{}, err
	}
	byLevel := map[float64][]float64{}
	for _, run := range r.CompletedRuns(treatment) {
		series, w, _, err := RunSeries(r, run, cfg)
		if err != nil {
			return DensityMap{}, err
		}
		for _, s := range series {
			if s.Resource != resource {
				continue
			}
			rs, err := Resample([]Series{s}, w, cfg.Lambda)
			if err != nil {
				return DensityMap{}, fmt.Errorf("run %d: %w", run.ID, err)
			}
			for _, p := range rs[0].Points {
				byLevel[run.Level] = append(byLevel[run.Level], p.Util)
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
