package spec

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/headroom-dev/headroom/internal/workload"
)

// checker applies the rules that hold between fields once a spec has
// decoded, placing each error at the line of the field it names.
type checker struct {
	stmts []string // statement names of a statement workload
	file  string
	lines map[string]int // from the decoder: path -> line, for written values only
	errs  Errors
}

// check returns every rule a decoded spec breaks.
func check(s *Spec, file string, lines map[string]int) Errors {
	c := &checker{file: file, lines: lines}
	for _, st := range s.Workload.Statements {
		c.stmts = append(c.stmts, st.Name)
	}
	c.top(s)
	// The target section checks its own contents while it decodes.
	if !c.has("target") {
		c.missing("target", fmt.Sprintf("add target: {type: %s}", exampleTargetType()))
	}
	if c.has("workload") {
		c.workload(&s.Workload)
	} else {
		c.missing("workload", "add workload: {ycsb: a}")
	}
	if c.has("load") {
		c.load(s)
	} else {
		c.missing("load", "add load: {model: open, rates: [100, 200, 400]}")
	}
	c.phases(s)
	c.bounds(s)
	c.planSize(s)
	c.budget(s.Budget) // cost.go; the plan is checked against it in Parse
	if s.SLO != nil {
		c.slo(s.SLO)
	}
	c.monitor(&s.Monitor)
	if s.Infra != nil {
		c.infra(s)
	} else {
		c.lab(s)
	}
	if s.Kubernetes != nil {
		c.kubernetes(s.Kubernetes) // k8s.go
	}
	if s.Controller != nil {
		c.controller(s) // controller.go
	}
	c.analysis(s)
	return c.errs
}

// monitor checks the monitor section.
func (c *checker) monitor(m *Monitor) {
	if iv := m.Interval.Duration; iv != 0 && (iv < 100*time.Millisecond || iv > time.Minute) {
		c.fail("monitor.interval", "%v is out of range; use 100ms to 60s (or leave it out to sample on the campaign's interval)", iv)
	}
	for i, p := range m.Processes {
		if p == "self" {
			continue
		}
		if n, err := strconv.Atoi(p); err != nil || n <= 0 {
			c.fail(fmt.Sprintf("monitor.processes[%d]", i), "%q is not a process; use self (Headroom itself) or a process ID", truncate(p, 40))
		}
	}
	for i, g := range m.Cgroups {
		if !strings.HasPrefix(g, "/") {
			c.fail(fmt.Sprintf("monitor.cgroups[%d]", i), "%q must be a path from the cgroup root, e.g. /headroom/db1", truncate(g, 40))
		}
	}
}

func (c *checker) has(path string) bool {
	_, ok := c.lines[path]
	return ok
}

func (c *checker) fail(path, format string, args ...any) {
	add(&c.errs, &Error{File: c.file, Line: lineOf(c.lines, path), Path: path, Msg: fmt.Sprintf(format, args...)})
}

// missing reports a required top-level section that is not there; such an
// error has no line.
func (c *checker) missing(path, fix string) {
	c.errs = append(c.errs, &Error{File: c.file, Path: path, Msg: "required section is missing; " + fix})
}

// oneOf checks an enumerated value and suggests the nearest allowed one.
func (c *checker) oneOf(path, got string, allowed ...string) {
	if slices.Contains(allowed, got) {
		return
	}
	if s := closest(got, allowed); s != "" {
		c.fail(path, "unknown value %q; did you mean %q?", got, s)
		return
	}
	c.fail(path, "unknown value %q; use %s", truncate(got, 40), orList(allowed))
}

func (c *checker) atLeast(path string, v, lo int64) {
	if v < lo {
		c.fail(path, "must be %d or more, got %d", lo, v)
	}
}

func (c *checker) notNegative(path string, d Duration) {
	if d.Duration < 0 {
		c.fail(path, "must not be negative, got %v", d.Duration)
	}
}

// forbid reports fields that were written but mean nothing under the model.
func (c *checker) forbid(other string, paths ...string) {
	for _, p := range paths {
		if c.has(p) {
			c.fail(p, "only applies to the %s model; remove it or set load.model: %s", other, other)
		}
	}
}

// maxRuns bounds levels x repetitions: a typo there would otherwise plan
// (and allocate) an impossible campaign.
const maxRuns = 100000

// planSize checks that the campaign's run count is sane.
func (c *checker) planSize(s *Spec) {
	levels := len(s.Levels())
	if s.Repetitions > maxRuns || levels*max(s.Repetitions, 1) > maxRuns {
		c.fail("repetitions", "%d levels x %d repetitions is more than the %d runs a campaign may have; use fewer repetitions or levels", levels, s.Repetitions, maxRuns)
	}
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

const (
	minInterval = 100 * time.Millisecond
	maxInterval = 60 * time.Second
)

func (c *checker) top(s *Spec) {
	switch {
	case !c.has("name") || s.Name == "":
		c.fail("name", "required; add a name made of letters, digits, '.', '_' or '-', e.g. name: quickstart")
	case utf8.RuneCountInString(s.Name) > maxNameLen:
		c.fail("name", "is %d characters long, more than the %d allowed (it names the results and the lab); use a shorter name, e.g. %q", utf8.RuneCountInString(s.Name), maxNameLen, suggestName(s.Name))
	case !nameRE.MatchString(s.Name) || s.Name == "." || s.Name == "..":
		c.fail("name", "%q is not a valid name; use only letters, digits, '.', '_' and '-', e.g. %q", truncate(s.Name, 40), suggestName(s.Name))
	}
	c.atLeast("repetitions", int64(s.Repetitions), 1)
	c.oneOf("order", s.Order, "sequential", "randomized")
	if iv := s.Interval.Duration; iv < minInterval || iv > maxInterval {
		c.fail("interval", "must be between %v and %v, got %v", minInterval, maxInterval, iv)
	}
	if s.Output == "" {
		c.fail("output", "must not be empty; leave it out to use %q", defaultOutput)
	}
	c.oneOf("reset", s.Reset, "none", "restart", "repopulate", "restore")
	c.oneOf("on_failure", s.OnFailure, "continue", "stop")
	if s.Reset == "repopulate" && s.Phases.Populate != nil && !*s.Phases.Populate {
		c.fail("reset", "repopulate reloads the data before every run, but phases.populate is false; set populate: true or choose reset: restart or none")
	}
}

// suggestName turns an invalid name into a valid one for the error message.
func suggestName(name string) string {
	var b strings.Builder
	for _, r := range truncate(name, 40) {
		switch {
		case r < 128 && nameRE.MatchString(string(r)):
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-.")
	if out == "" {
		return "my-campaign"
	}
	return out
}

func (c *checker) phases(s *Spec) {
	p := s.Phases
	c.notNegative("phases.warmup", p.Warmup)
	c.notNegative("phases.cooldown", p.Cooldown)
	switch iv := s.Interval.Duration; {
	case p.Measure.Duration <= 0:
		c.fail("phases.measure", "must be greater than 0, got %v", p.Measure.Duration)
	case iv >= minInterval && iv <= maxInterval && p.Measure.Duration < iv:
		c.fail("phases.measure", "%v is shorter than one interval (%v); measure for at least %v or shorten interval", p.Measure.Duration, iv, iv)
	}
}

func (c *checker) slo(o *SLO) {
	if !c.has("slo.percentile") {
		c.fail("slo.percentile", "required; add percentile: 99 (or 99.9, ...)")
	} else if !(o.Percentile > 0 && o.Percentile < 100) {
		c.fail("slo.percentile", "must be between 0 and 100 (exclusive), got %g; write 99.9 for the 99.9th percentile", o.Percentile)
	}
	if !c.has("slo.threshold") {
		c.fail("slo.threshold", "required; add a latency such as threshold: 50ms")
	} else if o.Threshold.Duration <= 0 {
		c.fail("slo.threshold", "must be greater than 0, got %v", o.Threshold.Duration)
	}
	if o.Operation != "" {
		c.opName("slo.operation", o.Operation)
	}
}

// opName checks an operation name against the workload's op types.
func (c *checker) opName(path, name string) bool {
	names := workload.OpTypeNames()
	if len(c.stmts) > 0 {
		names = c.stmts
	}
	if slices.Contains(names, name) {
		return true
	}
	if len(c.errs) >= maxKept {
		c.fail(path, "unknown operation") // only counted: no suggestion needed
		return false
	}
	if s := closest(name, names); s != "" {
		c.fail(path, "unknown operation %q; did you mean %q?", name, s)
	} else {
		c.fail(path, "unknown operation %q; use %s", truncate(name, 40), orList(names))
	}
	return false
}
