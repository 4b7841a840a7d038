package variability

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
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

// cross is seed-digest §2 (b) at one level: the largest pairwise
// |tau_i - tau_j| over the instances that measured it.
func cross(members []*Instance, level float64, cfg Config) CrossRow {
	c := CrossRow{Level: level, MaxDiff: math.NaN()}
	type tau struct {
		name string
		v    float64
	}
	var taus []tau
	for _, m := range members {
		r := rowAt(m, level)
		if r == nil {
			continue
		}
		c.Instances++
		if r.Tau.N > 0 && !math.IsNaN(r.Tau.Mean) {
			taus = append(taus, tau{m.Name, r.Tau.Mean})
		}
	}
	if len(taus) < 2 {
		return c
	}
	// The largest pairwise difference is between the extremes.
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
	c.Verdict = Fail
	if c.MaxDiff < us(cfg.CrossDiff) {
		c.Verdict = Pass
	}
	return c
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
			case row.Repeatable == Fail:
				why = append(why, fmt.Sprintf("tau_se %s >= %s on %s", ms(row.Tau.SE), ms(us(cfg.RepeatSE)), label(m.Name)))
			case row.Repeatable == Unknown:
				why = append(why, fmt.Sprintf("tau_se undefined on %s (%d repetition(s) with a response time)", label(m.Name), row.Tau.N))
			}
		}
		if len(crossRows) > 0 {
			c := crossRows[k]
			switch c.Verdict {
			case Fail:
				why = append(why, fmt.Sprintf("|tau(%s) - tau(%s)| = %s >= %s", label(c.Pair[0]), label(c.Pair[1]), ms(c.MaxDiff), ms(us(cfg.CrossDiff))))
			case Unknown:
				why = append(why, "the cross-instance difference is undefined (fewer than two instances have a response time)")
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

// ms formats microseconds as milliseconds.
func ms(usec float64) string { return strconv.FormatFloat(usec/1000, 'f', 1, 64) + " ms" }
