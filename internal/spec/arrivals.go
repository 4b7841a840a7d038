package spec

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/regularfile"
)

// Schedule is load.schedule: an open-loop rate that changes over the run,
// as steps or as a trace file (one of the two). Times count from the start
// of the run (the start of warmup); load.arrival says how arrivals are
// spaced within each stretch of constant rate.
type Schedule struct {
	// RelativeTo "probe" makes the steps' rates fractions of a rate a
	// short probe measures first on the machine at hand (Step.Fraction),
	// as relative levels do (Relative); only steps can be relative.
	RelativeTo string `yaml:"relative_to"`
	// Steps: each rate is held for its duration, the last one until the
	// run ends.
	Steps []Step `yaml:"steps"`
	// Trace is a CSV file of time,rate rows (seconds since the start of
	// the run, requests per second held until the next row), relative to
	// the spec file.
	Trace string `yaml:"trace"`
	// Points are the trace file's rows, read when the spec is checked.
	Points []load.TracePoint `yaml:"-"`
	// Base is the probe's rate that relative steps' fractions multiply,
	// 0 until WithBaseRate; the steps' Rate is set from then on.
	Base float64 `yaml:"-"`
}

// Step is one step of load.schedule.steps.
type Step struct {
	Rate float64 `yaml:"rate"` // requests per second, >= 0 (0 = a pause)
	// Fraction is the step's rate as a fraction of the probe's rate, with
	// relative_to: probe (0 = a pause).
	Fraction float64  `yaml:"fraction"`
	For      Duration `yaml:"for"` // > 0
}

// waitingForBase reports whether the steps are fractions still waiting
// for the probe's rate.
func (sc *Schedule) waitingForBase() bool { return sc.RelativeTo != "" && !(sc.Base > 0) }

// maxSteps bounds a step list; longer shapes belong in a trace file.
const maxSteps = 10000

// Arrivals returns the arrival schedule of one open-loop run: at level
// requests per second with load.arrival's spacing, or load.schedule when
// it is given (its one level is its own mean rate, so level is not used).
// seed fixes a Poisson schedule's gaps.
func (l *Load) Arrivals(level float64, seed uint64) (load.Schedule, error) {
	sp, err := load.SpacingOf(l.Arrival)
	if err != nil {
		return nil, err
	}
	switch sc := l.Schedule; {
	case sc == nil:
		return load.NewSchedule(l.Arrival, level, seed)
	case len(sc.Steps) > 0:
		steps := make([]load.Step, len(sc.Steps))
		for i, st := range sc.Steps {
			rate := st.Rate
			if sc.waitingForBase() {
				// Until the probe runs, the fractions stand in for the
				// rates, so that the plan and the checks see the shape.
				rate = st.Fraction
			}
			steps[i] = load.Step{Rate: rate, For: st.For.Duration}
		}
		return &load.Steps{Steps: steps, Spacing: sp, Seed: seed}, nil
	case sc.Trace != "":
		if len(sc.Points) == 0 {
			return nil, fmt.Errorf("the trace %s has not been read; load the spec with spec.LoadFile or spec.Parse", sc.Trace)
		}
		return &load.Trace{Name: sc.Trace, Points: sc.Points, Spacing: sp, Seed: seed}, nil
	}
	return nil, errors.New("load.schedule has neither steps nor a trace")
}

// ArrivalString says how an open loop's requests arrive: the schedule's
// String() when load.schedule is given (e.g. "poisson steps(100/s for 30s,
// 300/s for 30s)"), else the arrival process, whose rate is each level's.
func (l *Load) ArrivalString() string {
	if l.Model != "open" || l.Schedule == nil {
		return l.Arrival
	}
	if sc := l.Schedule; sc.waitingForBase() {
		parts := make([]string, len(sc.Steps))
		for i, st := range sc.Steps {
			parts[i] = fmt.Sprintf("%sx for %s", num(st.Fraction), shortDuration(st.For.Duration))
		}
		return fmt.Sprintf("%s steps(%s) of the rate a short probe finds first", l.Arrival, strings.Join(parts, ", "))
	}
	sched, err := l.Arrivals(0, 0)
	if err != nil {
		return l.Arrival
	}
	return sched.String()
}

// scheduleLevel is the level of a campaign with a schedule: its mean rate
// over the measured phase, which starts after warmup rounded up to whole
// intervals, as the load engine runs it.
func (s *Spec) scheduleLevel() float64 {
	sched, err := s.Load.Arrivals(0, 0)
	if err != nil {
		return 0
	}
	from, to := s.measuredPhase()
	return sched.MeanRate(from, to)
}

// measuredPhase is where the measured phase lies, from the start of the run.
func (s *Spec) measuredPhase() (from, to time.Duration) {
	iv, warm := s.Interval.Duration, s.Phases.Warmup.Duration
	if iv > 0 && warm > 0 {
		warm = (warm + iv - 1) / iv * iv
	}
	return warm, warm + s.Phases.Measure.Duration
}

// schedule checks load.schedule and reads its trace file.
func (c *checker) schedule(s *Spec) {
	sc := s.Load.Schedule
	const path = "load.schedule"
	before := len(c.errs)
	if c.has("load.rates") {
		c.fail("load.rates", "a schedule sets the rate over the run and replaces rates; remove rates (the run's level is the schedule's mean rate)")
	}
	relative := c.has(path + ".relative_to")
	if relative && sc.RelativeTo != RelativeToProbe {
		c.fail(path+".relative_to", "unknown value %q; the one source of a base rate is relative_to: probe", truncate(sc.RelativeTo, 40))
		return
	}
	switch hasSteps, hasTrace := c.has(path+".steps"), c.has(path+".trace"); {
	case hasSteps && hasTrace:
		c.fail(path, "give steps or a trace, not both")
		return
	case hasTrace && relative:
		c.fail(path+".relative_to", "a trace's rates are requests per second; relative_to works with steps: [{fraction: 0.5, for: 30s}, ...]")
		return
	case hasSteps:
		c.steps(sc.Steps, relative)
	case hasTrace:
		if !c.trace(sc) {
			return
		}
	default:
		c.fail(path, "give steps: [{rate: 100, for: 30s}, {rate: 300, for: 30s}] or trace: load.csv")
		return
	}
	if len(c.errs) > before {
		return
	}
	for i, p := range sc.Points {
		if p.Rate > load.MaxRate {
			c.fail("load.schedule.trace", "row %d asks for %g requests per second, more than the %d the load engine can pace; use at most %d", i+1, p.Rate, load.MaxRate, load.MaxRate)
			return
		}
	}
	from, to := s.measuredPhase()
	switch level := s.scheduleLevel(); {
	case !(level > 0):
		c.fail(path, "sends nothing during the measured phase (%v to %v from the start of the run); give it a positive rate there", from, to)
	case level*(to-from).Seconds() < 1 && !relative:
		c.fail(path, "sends fewer than one request during the measured phase (%v to %v from the start of the run, %g requests per second on average); raise its rates there", from, to, level)
	}
}

// steps checks a step list: rates, or with relative_to fractions of the
// probe's rate.
func (c *checker) steps(steps []Step, relative bool) {
	if len(steps) == 0 {
		c.fail("load.schedule.steps", "the list is empty; give at least one step, e.g. [{rate: 100, for: 30s}]")
		return
	}
	if len(steps) > maxSteps {
		c.fail("load.schedule.steps", "%d steps is more than the %d allowed; put a long shape in a trace file", len(steps), maxSteps)
		return
	}
	for i, st := range steps {
		p := fmt.Sprintf("load.schedule.steps[%d]", i)
		switch {
		case relative && c.has(p+".rate"):
			c.fail(p+".rate", "with relative_to: probe a step gives a fraction of the probe's rate, not a rate; write fraction: 0.5")
		case relative && !c.has(p+".fraction"):
			c.fail(p+".fraction", "required with relative_to: probe; give the step's rate as a fraction of the probe's rate, e.g. fraction: 0.5 (0 pauses)")
		case relative && !(st.Fraction >= 0 && st.Fraction <= maxFraction):
			c.fail(p+".fraction", "must be a fraction of the probe's rate from 0 to %d, got %g", maxFraction, st.Fraction)
		case relative:
		case c.has(p + ".fraction"):
			c.fail(p+".fraction", "a fraction is a share of a rate a probe measures first; add relative_to: probe to load.schedule, or give rate: in requests per second")
		case !c.has(p + ".rate"):
			c.fail(p+".rate", "required; give the step's rate in requests per second, e.g. rate: 100 (0 pauses)")
		case st.Rate < 0 || math.IsInf(st.Rate, 0) || math.IsNaN(st.Rate):
			c.fail(p+".rate", "must be 0 or more requests per second, got %g", st.Rate)
		case st.Rate > load.MaxRate:
			c.fail(p+".rate", "%g requests per second is more than the %d the load engine can pace; use at most %d", st.Rate, load.MaxRate, load.MaxRate)
		}
		switch {
		case !c.has(p + ".for"):
			c.fail(p+".for", "required; give how long the step lasts, e.g. for: 30s")
		case st.For.Duration <= 0:
			c.fail(p+".for", "must be longer than 0, got %v", st.For.Duration)
		case st.For.Duration > maxPhase:
			c.fail(p+".for", "%s is longer than the %s allowed; use %s or less", shortDuration(st.For.Duration), shortDuration(maxPhase), shortDuration(maxPhase))
		}
	}
}

// trace reads the trace file, relative to the spec file, into sc.Points.
// A problem in a row is reported at the trace file's line.
func (c *checker) trace(sc *Schedule) bool {
	name := sc.Trace
	if name == "" {
		c.fail("load.schedule.trace", "must name a CSV file of time,rate rows, e.g. trace: load.csv")
		return false
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(c.file), p)
	}
	f, err := regularfile.Open(p)
	if err != nil {
		reason := err.Error()
		var pe *os.PathError
		if errors.As(err, &pe) {
			reason = pe.Err.Error()
		} else {
			reason = strings.TrimPrefix(reason, p+" ")
		}
		c.fail("load.schedule.trace", "cannot read %s (%s); the path is relative to the spec file", p, reason)
		return false
	}
	defer f.Close()
	pts, err := load.ParseTrace(f)
	if err != nil {
		var te *load.TraceError
		if errors.As(err, &te) {
			c.errs = append(c.errs, &Error{File: p, Line: te.Line, Path: "load.schedule.trace", Msg: te.Msg})
		} else {
			c.fail("load.schedule.trace", "cannot read %s (%v)", p, err)
		}
		return false
	}
	sc.Points = pts
	return true
}
