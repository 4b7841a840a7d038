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

// Defaults of the absolute thresholds, from seed 001 §II-G and §III
// (seed-digest §2).
const (
	DefaultRepeatSE  = 5 * time.Millisecond
	DefaultCrossDiff = 30 * time.Millisecond
	DefaultTrim      = 30 * time.Second
)

// How verdicts (a) and (b) are judged.
const (
	// Relative judges tau_se and |Δtau| as shares of tau, and (b) also by
	// Welch's t-test across repetitions: the default, because seed 001's
	// durations were set for queries of a few hundred ms and let a 12x
	// difference between 1.2 ms and 14.7 ms pass as "equal".
	Relative = "relative"
	// Absolute is seed 001's rule: tau_se < 5 ms, |Δtau| < 30 ms.
	Absolute = "absolute"
)

// Defaults of the relative thresholds. Seed 001's absolute thresholds,
// taken against the tau of the levels it accepted (a few hundred ms for
// its complex query), are 2-3% for tau_se and 10-20% for |Δtau|; Headroom
// runs fewer and shorter repetitions (3-5 of a minute rather than 20 of
// three), so it takes the loose end of each: 5% and 20%. Alpha is the
// usual 5% level of Welch's test.
const (
	DefaultRepeatPct = 5.0
	DefaultCrossPct  = 20.0
	DefaultAlpha     = 0.05
)

// Config holds the thresholds and the mapping of runs to instances. The
// zero value means the defaults and one instance per treatment.
type Config struct {
	// Thresholds is Relative or Absolute; "" means Absolute when RepeatSE
	// or CrossDiff is set, else Relative.
	Thresholds string
	// RepeatPct is relative verdict (a)'s threshold: tau_se / tau must be
	// below it, in percent (default 5).
	RepeatPct float64
	// CrossPct is relative verdict (b)'s margin: instances are equal at a
	// level when |Δtau| / tau (the smaller tau of the pair) is below it, in
	// percent (default 20), and Welch's test shows the difference to be
	// within it (see cross).
	CrossPct float64
	// Alpha is the level of Welch's test (default 0.05).
	Alpha float64
	// RepeatSE is absolute verdict (a)'s threshold: tau_se must be below it
	// (default 5 ms).
	RepeatSE time.Duration
	// CrossDiff is absolute verdict (b)'s threshold: the largest pairwise
	// difference of tau between instances of a group must be below it
	// (default 30 ms).
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
	if c.Thresholds == "" {
		c.Thresholds = Relative
		if c.RepeatSE != 0 || c.CrossDiff != 0 {
			c.Thresholds = Absolute
		}
	}
	if c.RepeatPct == 0 {
		c.RepeatPct = DefaultRepeatPct
	}
	if c.CrossPct == 0 {
		c.CrossPct = DefaultCrossPct
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultAlpha
	}
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
	case c.Thresholds != Relative && c.Thresholds != Absolute:
		return c, fmt.Errorf("variability: Thresholds %q is neither %q nor %q", c.Thresholds, Relative, Absolute)
	case !(c.RepeatPct > 0) || !(c.CrossPct > 0) || math.IsInf(c.RepeatPct, 0) || math.IsInf(c.CrossPct, 0):
		return c, fmt.Errorf("variability: RepeatPct %v and CrossPct %v must be positive percentages of tau, such as 5 and 20", c.RepeatPct, c.CrossPct)
	case !(c.Alpha > 0 && c.Alpha < 0.5):
		return c, fmt.Errorf("variability: Alpha %v is not a significance level in (0, 0.5); use e.g. 0.05", c.Alpha)
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

// Input is the completed runs with their CPU samples and what theta needs
// to know to leave the load generator's CPU out.
type Input struct {
	Runs    []levels.RunData
	Samples map[int64][]monitor.Sample // whole-host CPU utilisation samples by run ID
	// Generator is the machine that ran the load generator; its CPU is
	// never theta (seed-digest §2: theta is the CPU of the server's host).
	Generator Generator
	// InProcess names the treatments whose target ran inside the load
	// generator's own process (SQLite, say): their CPU cannot be told
	// apart from the generator's.
	InProcess map[string]bool
}

// Generator is the load generator's machine as the campaign recorded it.
type Generator struct {
	Host string // host name in its CPU samples; "" when unknown (imported data)
	CPUs int    // its CPU count, to turn the client process's CPU (% of one core) into a share of the host
}

// LevelRow is one instance at one load level.
type LevelRow struct {
	Index int     // level index in the plan
	Level float64 // offered rate lambda (open) or client count (closed)
	Reps  int
	// Tau is the mean response time (µs) across repetitions; Tau.SE is
	// tau_se (seed-digest §2).
	Tau stats.Estimate
	// Taus are the repetitions' own tau (µs), for Welch's test in (b).
	Taus []float64
	// RelSE is tau_se / tau; NaN when either is undefined.
	RelSE float64
	// Theta is the target's mean CPU utilisation (%) per run, trimmed,
	// across repetitions; N = 0 when CPU was not sampled.
	Theta stats.Estimate
	// Mu is mu (µs): client response time minus server execution time
	// (levels' Network estimate), that is the network and the queueing on
	// both sides, since every server-time source Headroom reads counts
	// execution only; N = 0 without server times. A negative mean is
	// within measurement error (MuWithinError).
	Mu stats.Estimate
	// Repeatable is verdict (a): tau_se / tau < RepeatPct% (relative) or
	// tau_se < RepeatSE (absolute); Unknown with fewer than two
	// repetitions.
	Repeatable Verdict
	Notes      []string
}

// Instance is one treatment's profile.
type Instance struct {
	Name  string // treatment label
	Model string // "open" or "closed"
	Host  string // host whose CPU is theta ("" when none)
	// LessClient says that Host also ran the load generator, so theta is
	// its CPU less the generator process's share.
	LessClient bool
	Levels     []LevelRow
	Notes      []string
}

// CrossRow is verdict (b) at one level of a group.
type CrossRow struct {
	Level     float64
	Instances int       // instances of the group that measured this level
	MaxDiff   float64   // largest |tau_i - tau_j| (µs); NaN when fewer than two instances have a tau
	Pair      [2]string // the two instances that differ most (the higher tau first)
	// Rel is MaxDiff as a share of the pair's smaller tau (1 = 100%); NaN
	// with MaxDiff.
	Rel float64
	// Welch is Welch's t-test of the pair's repetitions (tau of Pair[0]
	// minus tau of Pair[1]); Tested is false when it is undefined (fewer
	// than two repetitions on a side, or no spread at all).
	Welch  stats.Welch
	Tested bool
	// Verdict is Pass when every pair of the level is equal by the rule in
	// force (see cross), Fail when one differs, Unknown when one cannot be
	// decided; Why says why it is not Pass.
	Verdict Verdict
	Why     string
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
		x, err := instance(n, byName[n], in, cfg)
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
