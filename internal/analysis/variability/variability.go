// Package variability judges how repeatable a campaign's measurements are,
// following seed 001 (seed-digest §2): per load level and instance, the mean
// response time tau of each run and its standard error tau_se across
// repetitions, the target's mean CPU utilisation theta_mean with the start
// and end of each run trimmed away, and the network delay mu; then three
// verdicts: (a) repeatability, tau_se below a threshold; (b) cross-instance
// difference, the largest |tau_i - tau_j| between instances meant to be
// equal below a threshold; (c) the valid modelling range, the highest level
// up to which (a) and (b) hold at every level. It also compares reset
// policies between runs. Analyze is a pure function of the runs and their
// CPU samples; FromResults is its driver over a results model, with the
// campaign's analysis.variability settings (ConfigOf).
package variability

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/analysis/stats"
	"github.com/headroom-dev/headroom/internal/monitor"
)

// Defaults, from seed 001 §II-G and §III (seed-digest §2).
const (
	DefaultRepeatSE  = 5 * time.Millisecond
	DefaultCrossDiff = 30 * time.Millisecond
	DefaultTrim      = 30 * time.Second
)

// Config holds the thresholds and the mapping of runs to instances. The
// zero value means the defaults and one instance per treatment.
type Config struct {
	// RepeatSE is verdict (a)'s threshold: tau_se must be below it
	// (default 5 ms).
	RepeatSE time.Duration
	// CrossDiff is verdict (b)'s threshold: the largest pairwise difference
	// of tau between instances of a group must be below it (default 30 ms).
	CrossDiff time.Duration
	// TrimStart and TrimEnd cut the start and end of each run's measured
	// window before averaging CPU (default 30 s each, as seed 001 samples
	// from t+30 s to t+d-30 s). NoTrim uses the whole window.
	TrimStart, TrimEnd time.Duration
	NoTrim             bool
	// Op is the operation whose response time is tau; "" means all
	// operations together.
	Op string
	// Host is the target host whose CPU is theta; Hosts overrides it per
	// instance. When both are empty, an instance's target is the one host
	// whose CPU was sampled during its runs.
	Host  string
	Hosts map[string]string
	// Groups lists sets of instances (treatment labels) that were created
	// equal, for verdict (b). Nil means every instance is its own group.
	Groups [][]string
	// Policies maps treatment labels to the reset policy their runs used
	// (none, restart, repopulate, restore); nil means no comparison.
	Policies map[string]string
}

func (c Config) withDefaults() (Config, error) {
	if c.RepeatSE == 0 {
		c.RepeatSE = DefaultRepeatSE
	}
	if c.CrossDiff == 0 {
		c.CrossDiff = DefaultCrossDiff
	}
	if c.NoTrim {
		c.TrimStart, c.TrimEnd = 0, 0
	} else {
		if c.TrimStart == 0 {
			c.TrimStart = DefaultTrim
		}
		if c.TrimEnd == 0 {
			c.TrimEnd = DefaultTrim
		}
	}
	switch {
	case c.RepeatSE < 0:
		return c, fmt.Errorf("variability: RepeatSE %v is negative; use a positive duration such as 5ms", c.RepeatSE)
	case c.CrossDiff < 0:
		return c, fmt.Errorf("variability: CrossDiff %v is negative; use a positive duration such as 30ms", c.CrossDiff)
	case c.TrimStart < 0 || c.TrimEnd < 0:
		return c, fmt.Errorf("variability: TrimStart/TrimEnd %v/%v must not be negative; use durations such as 30s, or NoTrim", c.TrimStart, c.TrimEnd)
	}
	return c, nil
}

// Verdict is the outcome of one check.
type Verdict int

// Verdicts. Unknown means the data cannot decide (e.g. one repetition).
const (
	Unknown Verdict = iota
	Pass
	Fail
)

func (v Verdict) String() string {
	switch v {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	}
	return "unknown"
}

// Input is the completed runs with their CPU samples.
type Input struct {
	Runs    []levels.RunData
	Samples map[int64][]monitor.Sample // whole-host CPU utilisation samples by run ID
}

// LevelRow is one instance at one load level.
type LevelRow struct {
	Index int     // level index in the plan
	Level float64 // offered rate lambda (open) or client count (closed)
	Reps  int
	// Tau is the mean response time (µs) across repetitions; Tau.SE is
	// tau_se (seed-digest §2).
	Tau stats.Estimate
	// Theta is the target's mean CPU utilisation (%) per run, trimmed,
	// across repetitions; N = 0 when CPU was not sampled.
	Theta stats.Estimate
	// Mu is the network delay mu (µs): client response time minus server
	// execution time (levels' Network estimate); N = 0 without server times.
	Mu stats.Estimate
	// Repeatable is verdict (a): Tau.SE < Config.RepeatSE; Unknown with
	// fewer than two repetitions.
	Repeatable Verdict
	Notes      []string
}

// Instance is one treatment's profile.
type Instance struct {
	Name   string // treatment label
	Model  string // "open" or "closed"
	Host   string // host whose CPU is theta ("" when none)
	Levels []LevelRow
	Notes  []string
}

// CrossRow is verdict (b) at one level of a group.
type CrossRow struct {
	Level     float64
	Instances int       // instances of the group that measured this level
	MaxDiff   float64   // largest |tau_i - tau_j| (µs); NaN when fewer than two instances have a tau
	Pair      [2]string // the two instances that differ most
	Verdict   Verdict   // Pass when MaxDiff < CrossDiff; Unknown when NaN
}

// Range is verdict (c): the valid modelling range.
type Range struct {
	Valid bool    // at least the lowest level passed
	Level float64 // highest level up to which (a) and (b) held at every level; NaN when not Valid
	// Theta is the mean of the instances' theta_mean at Level (%); NaN when
	// CPU was not sampled.
	Theta float64
	// End is the first level at which a check failed or could not be
	// decided; NaN when every level passed.
	End float64
	// Reason says why the range ends there (empty when it does not end).
	Reason string
	// Statement is the verdict sentence, e.g. "measurements are repeatable
	// up to θ = 50% / λ = 30 req/s".
	Statement string
}

// Group is a set of instances meant to be equal.
type Group struct {
	Instances []string
	Cross     []CrossRow // by level, ascending; empty for a one-instance group
	Range     Range
}

// PolicyRow is tau_se at one level under one reset policy.
type PolicyRow struct {
	Level     float64
	Instances int     // instances of this policy with a tau_se at this level
	TauSE     float64 // mean tau_se across them (µs); NaN when none
	TauSEMax  float64 // largest (µs)
}

// Policy is the variation under one reset policy: its instances form a
// group, judged like any other.
type Policy struct {
	Policy    string
	Instances []string
	Levels    []PolicyRow
	Range     Range
}

// Result is the whole variation report.
type Result struct {
	Config    Config // the effective configuration, defaults filled in
	Instances []Instance
	Groups    []Group
	Policies  []Policy
}

// Analyze computes the variation report.
func Analyze(in Input, cfg Config) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	if len(in.Runs) == 0 {
		return Result{}, fmt.Errorf("variability: the results hold no completed runs; run the campaign (or resume it) before analysing")
	}
	byName := map[string][]levels.RunData{}
	for _, rd := range in.Runs {
		byName[rd.Run.Treatment] = append(byName[rd.Run.Treatment], rd)
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	res := Result{Config: cfg}
	inst := map[string]*Instance{}
	for _, n := range names {
		x, err := instance(n, byName[n], in.Samples, cfg)
		if err != nil {
			return Result{}, err
		}
		res.Instances = append(res.Instances, x)
	}
	for i := range res.Instances {
		inst[res.Instances[i].Name] = &res.Instances[i]
	}
	groups := cfg.Groups
	if groups == nil {
		for _, n := range names {
			groups = append(groups, []string{n})
		}
	}
	for _, g := range groups {
		members, err := lookup(g, inst, "Groups")
		if err != nil {
			return Result{}, err
		}
		res.Groups = append(res.Groups, group(members, cfg))
	}
	if cfg.Policies != nil {
		pol, err := policies(cfg, inst)
		if err != nil {
			return Result{}, err
		}
		res.Policies = pol
	}
	return res, nil
}

func lookup(names []string, inst map[string]*Instance, field string) ([]*Instance, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("variability: %s holds an empty group; list at least one treatment label in it", field)
	}
	out := make([]*Instance, 0, len(names))
	for _, n := range names {
		x := inst[n]
		if x == nil {
			return nil, fmt.Errorf("variability: %s names treatment %q, which has no completed runs; use one of %s", field, n, known(inst))
		}
		out = append(out, x)
	}
	return out, nil
}

func known(inst map[string]*Instance) string {
	var ns []string
	for n := range inst {
		ns = append(ns, strconv.Quote(n))
	}
	sort.Strings(ns)
	return strings.Join(ns, ", ")
}

// instance builds one treatment's per-level rows.
func instance(name string, runs []levels.RunData, samples map[int64][]monitor.Sample, cfg Config) (Instance, error) {
	x := Instance{Name: name, Model: runs[0].Run.Model}
	host, err := targetHost(name, runs, samples, cfg)
	if err != nil {
		return x, err
	}
	x.Host = host
	if host == "" {
		x.Notes = append(x.Notes, "no CPU utilisation was sampled during these runs; theta is unknown")
	}
	sum := levels.Summarize(levels.Input{Model: x.Model, Runs: runs})
	byLevel := map[int][]levels.RunData{}
	for _, rd := range runs {
		byLevel[rd.Run.LevelIndex] = append(byLevel[rd.Run.LevelIndex], rd)
	}
	found := false
	for _, l := range sum.Levels {
		row := LevelRow{Index: l.Index, Level: l.Level, Reps: l.Reps, Tau: stats.Summarize(nil), Mu: stats.Summarize(nil)}
		if op, ok := opRow(l, cfg.Op); ok {
			found = true
			row.Tau, row.Mu = op.Latency.Mean, op.Network
		}
		row.Theta, row.Notes = theta(byLevel[l.Index], samples, host, cfg)
		// seed-digest §2 (a): tau_se across repetitions below the threshold.
		switch {
		case row.Tau.N < 2:
			row.Notes = append(row.Notes, fmt.Sprintf("%d repetition(s) with a response time: tau_se is undefined", row.Tau.N))
		case row.Tau.SE < us(cfg.RepeatSE):
			row.Repeatable = Pass
		default:
			row.Repeatable = Fail
		}
		x.Levels = append(x.Levels, row)
	}
	if cfg.Op != "" && !found {
		return x, fmt.Errorf("variability: operation %q has no response times in treatment %q; set Op to an operation the workload ran, or to \"\" for all", cfg.Op, name)
	}
	return x, nil
}

// targetHost resolves whose CPU is theta.
func targetHost(name string, runs []levels.RunData, samples map[int64][]monitor.Sample, cfg Config) (string, error) {
	if h := cfg.Hosts[name]; h != "" {
		return h, nil
	}
	if cfg.Host != "" {
		return cfg.Host, nil
	}
	seen := map[string]bool{}
	for _, rd := range runs {
		for _, s := range samples[rd.Run.ID] {
			if isCPU(s) {
				seen[s.Host] = true
			}
		}
	}
	hosts := make([]string, 0, len(seen))
	for h := range seen {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	if len(hosts) > 1 {
		return "", fmt.Errorf("variability: treatment %q has CPU samples from hosts %s; set Config.Host (or Config.Hosts[%q]) to the host the target runs on",
			name, strings.Join(hosts, ", "), name)
	}
	if len(hosts) == 0 {
		return "", nil
	}
	return hosts[0], nil
}

func isCPU(s monitor.Sample) bool {
	return s.Resource == monitor.ResourceCPU && s.Metric == monitor.CPUUtilPct
}

// theta is the per-run mean CPU of host over the trimmed measured window
// (seed-digest §2: samples from t+30 s to t+(d-30) s), summarised across
// the level's runs. A run whose trimmed window is empty or holds no sample
// falls back to its whole measured window, with a note.
func theta(runs []levels.RunData, samples map[int64][]monitor.Sample, host string, cfg Config) (stats.Estimate, []string) {
	if host == "" {
		return stats.Summarize(nil), nil
	}
	var per []float64
	var short, empty, missing int
	for _, rd := range runs {
		from, to := rd.Run.Summary.MeasureStart, rd.Run.Summary.MeasureEnd
		if from.IsZero() || !to.After(from) {
			missing++
			continue
		}
		xs := samples[rd.Run.ID]
		a, b := from.Add(cfg.TrimStart), to.Add(-cfg.TrimEnd)
		m, n := meanCPU(xs, host, a, b)
		if n > 0 {
			per = append(per, m)
			continue
		}
		if m, n = meanCPU(xs, host, from, to); n == 0 {
			missing++
			continue
		}
		if !b.After(a) {
			short++
		} else {
			empty++
		}
		per = append(per, m)
	}
	var notes []string
	if short > 0 {
		notes = append(notes, fmt.Sprintf("theta of %d run(s) uses the whole measured window: it is not longer than the trims (%v + %v)", short, cfg.TrimStart, cfg.TrimEnd))
	}
	if empty > 0 {
		notes = append(notes, fmt.Sprintf("theta of %d run(s) uses the whole measured window: no CPU sample of %s fell inside the trimmed window", empty, host))
	}
	if missing > 0 {
		notes = append(notes, fmt.Sprintf("%d run(s) have no CPU sample of %s in their measured window", missing, host))
	}
	return stats.Summarize(per), notes
}

// meanCPU is the mean whole-host CPU utilisation of host over samples
// starting in [from, to), and their count.
func meanCPU(xs []monitor.Sample, host string, from, to time.Time) (float64, int) {
	var sum float64
	var n int
	for _, s := range xs {
		if s.Host == host && isCPU(s) && !s.Start.Before(from) && s.Start.Before(to) {
			sum += s.Value
			n++
		}
	}
	if n == 0 {
		return math.NaN(), 0
	}
	return sum / float64(n), n
}

// opRow is the latency row of op, or of all operations when op is "".
func opRow(l levels.Level, op string) (levels.OpRow, bool) {
	for _, r := range l.Ops {
		if r.Op == op || (op == "" && (r.Op == "all" || len(l.Ops) == 1)) {
			return r, true
		}
	}
	return levels.OpRow{}, false
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
