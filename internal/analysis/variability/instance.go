package variability

import (
	"fmt"
	"math"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/analysis/stats"
)

// instance builds one treatment's per-level rows with verdict (a).
func instance(name string, runs []levels.RunData, in Input, cfg Config) (Instance, error) {
	x := Instance{Name: name, Model: runs[0].Run.Model}
	src, err := thetaSource(name, runs, in, cfg)
	if err != nil {
		return x, err
	}
	x.Host, x.LessClient = src.host, src.lessClient
	if src.note != "" {
		x.Notes = append(x.Notes, src.note)
	}
	sum := levels.Summarize(levels.Input{Model: x.Model, Runs: runs})
	byLevel := map[int][]levels.RunData{}
	for _, rd := range runs {
		byLevel[rd.Run.LevelIndex] = append(byLevel[rd.Run.LevelIndex], rd)
	}
	found := false
	for _, l := range sum.Levels {
		row := LevelRow{Index: l.Index, Level: l.Level, Reps: l.Reps, Tau: stats.Summarize(nil), Mu: stats.Summarize(nil), RelSE: math.NaN()}
		if op, ok := opRow(l, cfg.Op); ok {
			found = true
			row.Tau, row.Mu = op.Latency.Mean, op.Network
			row.Taus = runTaus(x.Model, byLevel[l.Index], cfg.Op)
		}
		if row.Tau.N >= 2 && row.Tau.Mean > 0 {
			row.RelSE = row.Tau.SE / row.Tau.Mean
		}
		row.Theta, row.Notes = theta(byLevel[l.Index], in.Samples, src, cfg)
		row.Repeatable = repeatable(row, cfg)
		if row.Tau.N < 2 {
			row.Notes = append(row.Notes, fmt.Sprintf("%d repetition(s) with a response time: tau_se is undefined", row.Tau.N))
		}
		x.Levels = append(x.Levels, row)
	}
	if cfg.Op != "" && !found {
		return x, fmt.Errorf("variability: operation %q has no response times in treatment %q; set Op to an operation the workload ran, or to \"\" for all", cfg.Op, name)
	}
	return x, nil
}

// repeatable is verdict (a) (seed-digest §2): tau_se across repetitions
// below the threshold, as a share of tau (relative) or as a duration
// (absolute, seed 001's 5 ms).
func repeatable(r LevelRow, cfg Config) Verdict {
	switch {
	case r.Tau.N < 2:
		return Unknown
	case cfg.Thresholds == Absolute:
		if r.Tau.SE < us(cfg.RepeatSE) {
			return Pass
		}
		return Fail
	case math.IsNaN(r.RelSE):
		return Unknown
	case r.RelSE < cfg.RepeatPct/100:
		return Pass
	}
	return Fail
}

// runTaus are the repetitions' own tau: each run summarised alone with the
// same code that summarises the level, so that Welch's test and Tau see
// one definition of tau.
func runTaus(model string, runs []levels.RunData, op string) []float64 {
	var out []float64
	for _, rd := range runs {
		one := levels.Summarize(levels.Input{Model: model, Runs: []levels.RunData{rd}})
		for _, l := range one.Levels {
			if r, ok := opRow(l, op); ok && r.Latency.Mean.N > 0 && !math.IsNaN(r.Latency.Mean.Mean) {
				out = append(out, r.Latency.Mean.Mean)
			}
		}
	}
	return out
}
