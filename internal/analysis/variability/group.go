package variability

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
)

// group judges instances meant to be equal: verdict (b) per level and the
// valid range (c).
func group(members []*Instance, cfg Config) Group {
	g := Group{}
	for _, m := range members {
		g.Instances = append(g.Instances, m.Name)
	}
	values := levelValues(members)
	if len(members) > 1 {
		for _, v := range values {
			g.Cross = append(g.Cross, cross(members, v, cfg))
		}
	}
	g.Range = validRange(members, values, g.Cross, cfg)
	return g
}

// levelValues is the union of the members' level values, ascending.
func levelValues(members []*Instance) []float64 {
	seen := map[float64]bool{}
	var out []float64
	for _, m := range members {
		for _, r := range m.Levels {
			if !seen[r.Level] {
				seen[r.Level] = true
				out = append(out, r.Level)
			}
		}
	}
	sort.Float64s(out)
	return out
}

func rowAt(m *Instance, level float64) *LevelRow {
	for i := range m.Levels {
		if m.Levels[i].Level == level {
			return &m.Levels[i]
		}
	}
	return nil
}

// cross is seed-digest §2 (b) at one level: every pair of the instances
// that measured it is compared (pair), and the level takes the worst
// verdict. MaxDiff, Rel and Welch describe the extremes, the pair with the
// largest difference and ratio.
func cross(members []*Instance, level float64, cfg Config) CrossRow {
	c := CrossRow{Level: level, MaxDiff: math.NaN(), Rel: math.NaN()}
	type tau struct {
		name string
		v    float64
		reps []float64
	}
	var taus []tau
	for _, m := range members {
		r := rowAt(m, level)
		if r == nil {
			continue
		}
		c.Instances++
		if r.Tau.N > 0 && !math.IsNaN(r.Tau.Mean) {
			taus = append(taus, tau{m.Name, r.Tau.Mean, r.Taus})
		}
	}
	if len(taus) < 2 {
		c.Why = "the cross-instance difference is undefined (fewer than two instances have a response time)"
		return c
	}
	lo, hi := taus[0], taus[0]
	for _, t := range taus[1:] {
		if t.v < lo.v {
			lo = t
		}
		if t.v > hi.v {
			hi = t
		}
	}
	c.MaxDiff, c.Pair = hi.v-lo.v, [2]string{hi.name, lo.name}
	if lo.v > 0 {
		c.Rel = c.MaxDiff / lo.v
	}
	c.Welch, c.Tested = stats.WelchTest(hi.reps, lo.reps)
	c.Verdict = Pass
	for i := range taus {
		for j := i + 1; j < len(taus); j++ {
			a, b := taus[i], taus[j]
			if a.v < b.v {
				a, b = b, a
			}
			v, why := pair(a.name, b.name, a.v, b.v, a.reps, b.reps, cfg)
			if v == Fail || (v == Unknown && c.Verdict == Pass) {
				c.Verdict, c.Why = v, why
			}
		}
	}
	return c
}

// pair judges two instances at one level (a has the higher tau, ta >= tb).
//
// Absolute (seed 001): equal when |Δtau| < CrossDiff.
//
// Relative: with margin m = CrossPct% of the smaller tau,
//   - Fail when |Δtau| >= m: the point estimates differ materially,
//     whatever the noise (1.18 ms against 14.7 ms is never "equal");
//   - Pass when Welch's test shows the difference to lie within the
//     margin: the 1-2·Alpha confidence interval of Δtau (Welch–
//     Satterthwaite) is inside (-m, m), which is the two one-sided tests
//     of equivalence at level Alpha;
//   - Unknown otherwise: the repetitions are too few or too variable to
//     show equality (the difference is small, but so might it not be).
//
// A difference that is real but inside the margin passes: instances are
// "equal" within the margin the user accepts, and more repetitions do not
// make a 3% difference fail.
func pair(na, nb string, ta, tb float64, ra, rb []float64, cfg Config) (Verdict, string) {
	d := ta - tb
	if cfg.Thresholds == Absolute {
		if d < us(cfg.CrossDiff) {
			return Pass, ""
		}
		return Fail, fmt.Sprintf("|tau(%s) - tau(%s)| = %s >= %s", label(na), label(nb), ms(d), ms(us(cfg.CrossDiff)))
	}
	if !(tb > 0) {
		return Unknown, fmt.Sprintf("tau of %s is not positive; the relative difference is undefined", label(nb))
	}
	m := cfg.CrossPct / 100 * tb
	if d >= m {
		return Fail, fmt.Sprintf("tau(%s) = %s is %s above tau(%s) = %s (>= %s)", label(na), ms(ta), pct(d/tb), label(nb), ms(tb), pct(cfg.CrossPct/100))
	}
	w, ok := stats.WelchTest(ra, rb)
	if !ok {
		if len(ra) >= 2 && len(rb) >= 2 {
			return Pass, "" // no spread on either side: the difference is exact
		}
		return Unknown, fmt.Sprintf("tau(%s) and tau(%s) differ by %s, but Welch's test needs two repetitions on each", label(na), label(nb), pct(d/tb))
	}
	level := 1 - 2*cfg.Alpha
	lo, hi := w.CI(level)
	if lo > -m && hi < m {
		return Pass, ""
	}
	return Unknown, fmt.Sprintf("tau(%s) and tau(%s) differ by %s, but the repetitions are too variable to show it is under %s (Welch %.0f%% interval of Δtau %s to %s)",
		label(na), label(nb), pct(d/tb), pct(cfg.CrossPct/100), 100*level, ms(lo), ms(hi))
}

// validRange is seed-digest §2 (c): walk the levels upwards; the range ends
// before the first level at which any member's (a) or the group's (b) does
// not pass (fails or cannot be decided).
func validRange(members []*Instance, values []float64, crossRows []CrossRow, cfg Config) Range {
	model := members[0].Model
	r := Range{Level: math.NaN(), Theta: math.NaN(), End: math.NaN()}
	for k, v := range values {
		var why []string
		for _, m := range members {
			row := rowAt(m, v)
			switch {
			case row == nil:
				why = append(why, "not measured on "+label(m.Name))
			case row.Repeatable == Fail && cfg.Thresholds == Absolute:
				why = append(why, fmt.Sprintf("tau_se %s >= %s on %s", ms(row.Tau.SE), ms(us(cfg.RepeatSE)), label(m.Name)))
			case row.Repeatable == Fail:
				why = append(why, fmt.Sprintf("tau_se %s = %s of tau >= %s on %s", ms(row.Tau.SE), pct(row.RelSE), pct(cfg.RepeatPct/100), label(m.Name)))
			case row.Repeatable == Unknown:
				why = append(why, fmt.Sprintf("tau_se undefined on %s (%d repetition(s) with a response time)", label(m.Name), row.Tau.N))
			}
		}
		if len(crossRows) > 0 {
			if c := crossRows[k]; c.Verdict != Pass {
				why = append(why, c.Why)
			}
		}
		if len(why) > 0 {
			r.End = v
			r.Reason = fmt.Sprintf("at %s: %s", load(model, v), strings.Join(why, "; "))
			break
		}
		r.Valid, r.Level = true, v
	}
	if !r.Valid {
		r.Statement = fmt.Sprintf("measurements are not repeatable even at the lowest level, %s", r.Reason)
		return r
	}
	var thetas []float64
	for _, m := range members {
		if row := rowAt(m, r.Level); row != nil && row.Theta.N > 0 {
			thetas = append(thetas, row.Theta.Mean)
		}
	}
	if len(thetas) > 0 {
		var s float64
		for _, t := range thetas {
			s += t
		}
		r.Theta = s / float64(len(thetas))
		r.Statement = fmt.Sprintf("measurements are repeatable up to θ = %s%% / %s", strconv.FormatFloat(r.Theta, 'f', 0, 64), load(model, r.Level))
	} else {
		r.Statement = fmt.Sprintf("measurements are repeatable up to %s (CPU not sampled)", load(model, r.Level))
	}
	if math.IsNaN(r.End) {
		r.Statement += " (the highest level measured)"
	}
	return r
}

// policies compares reset policies: each policy's instances form a group.
func policies(cfg Config, inst map[string]*Instance) ([]Policy, error) {
	byPolicy := map[string][]string{}
	for t, p := range cfg.Policies {
		if p == "" {
			return nil, fmt.Errorf("variability: Policies[%q] is empty; name the reset policy its runs used (none, restart, repopulate or restore)", t)
		}
		byPolicy[p] = append(byPolicy[p], t)
	}
	names := make([]string, 0, len(byPolicy))
	for p := range byPolicy {
		names = append(names, p)
	}
	sort.Strings(names)
	var out []Policy
	for _, p := range names {
		ts := byPolicy[p]
		sort.Strings(ts)
		members, err := lookup(ts, inst, "Policies")
		if err != nil {
			return nil, err
		}
		pol := Policy{Policy: p, Instances: ts, Range: group(members, cfg).Range}
		for _, v := range levelValues(members) {
			row := PolicyRow{Level: v, TauSE: math.NaN(), TauSEMax: math.NaN()}
			var sum float64
			for _, m := range members {
				if lr := rowAt(m, v); lr != nil && lr.Tau.N >= 2 {
					sum += lr.Tau.SE
					row.Instances++
					if row.Instances == 1 || lr.Tau.SE > row.TauSEMax {
						row.TauSEMax = lr.Tau.SE
					}
				}
			}
			if row.Instances > 0 {
				row.TauSE = sum / float64(row.Instances)
			}
			pol.Levels = append(pol.Levels, row)
		}
		out = append(out, pol)
	}
	return out, nil
}

func label(name string) string {
	if name == "" {
		return "the single treatment"
	}
	return name
}

// load names a level: λ in req/s (open loop) or N clients (closed).
func load(model string, v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if model == "closed" {
		return "N = " + s + " clients"
	}
	return "λ = " + s + " req/s"
}

// ms formats microseconds as milliseconds with three significant digits
// below 10 ms, so that sub-millisecond taus do not all read "0.0 ms".
func ms(usec float64) string {
	d := 1
	switch a := math.Abs(usec); {
	case a < 1000:
		d = 3
	case a < 10000:
		d = 2
	}
	return strconv.FormatFloat(usec/1000, 'f', d, 64) + " ms"
}

// pct formats a ratio as a percentage.
func pct(r float64) string {
	if r >= 10 {
		return strconv.FormatFloat(100*r, 'f', 0, 64) + "%"
	}
	return strconv.FormatFloat(100*r, 'f', 1, 64) + "%"
}
