package results

import (
	"encoding/json"
	"sort"

	"github.com/headroom-dev/headroom/internal/store"
)

// Event kinds a campaign writes for a sweep (spec.Sweep): the sweep's
// settings, once per session of a treatment (campaign-wide event), and its
// verdict on each level once the level's runs have ended (event of the
// level's last run).
const (
	EventSweep      = "sweep"
	EventSweepLevel = "sweep_level"
)

// SweepPlan is a treatment's sweep as the campaign ran it: levels from From
// in steps of Step, capped at Max and MaxLevels (0 = no such cap), which
// gave Levels levels at most; a level saturates when the target's CPU
// reaches CPUPct, more than ErrorPct % of requests fail, or (SLO) the SLO
// fails. CPUOf says whose CPU is judged.
type SweepPlan struct {
	Treatment string  `json:"treatment"`
	Model     string  `json:"model"`
	From      float64 `json:"from"`
	Step      float64 `json:"step"`
	Max       float64 `json:"max,omitempty"`
	MaxLevels int     `json:"max_levels,omitempty"`
	Levels    int     `json:"levels"`
	CPUPct    float64 `json:"cpu_pct"`
	ErrorPct  float64 `json:"error_pct"`
	SLO       bool    `json:"slo"`
	CPUOf     string  `json:"cpu_of"`
}

// SweepVerdict is the sweep's judgement of one level, from the level's
// ended runs (Runs of them): whether it saturated and why (Reasons, one
// sentence each), with the figures judged. CPU is nil when the target's CPU
// could not be judged (Notes say why); SLOPass is nil without an SLO rule.
type SweepVerdict struct {
	Treatment  string   `json:"treatment"`
	LevelIndex int      `json:"level_index"`
	Level      float64  `json:"level"`
	Runs       int      `json:"runs"`
	Saturated  bool     `json:"saturated"`
	Reasons    []string `json:"reasons,omitempty"`
	CPU        *float64 `json:"cpu_pct,omitempty"`
	ErrorPct   float64  `json:"error_pct"`
	SLOPass    *bool    `json:"slo_pass,omitempty"`
	Notes      []string `json:"notes,omitempty"`
}

// Sweep is a treatment's sweep and its verdicts so far.
type Sweep struct {
	Plan SweepPlan
	// Levels holds the latest verdict of each judged level, by level index.
	Levels []SweepVerdict
}

// Stop is the first level that saturated, if one did: the sweep ran no
// level above it.
func (s *Sweep) Stop() (SweepVerdict, bool) {
	for _, v := range s.Levels {
		if v.Saturated {
			return v, true
		}
	}
	return SweepVerdict{}, false
}

// Sweep returns the sweep of a treatment ("" in a campaign without
// treatments), or nil when its levels were a fixed list.
func (r *Results) Sweep(treatment string) (*Sweep, error) {
	evs, err := r.st.Events(-1)
	if err != nil {
		return nil, err
	}
	return SweepOf(evs, treatment), nil
}

// SweepOf reads a treatment's sweep from a store's events (the campaign
// reads it back when it resumes), or nil when it has none.
func SweepOf(evs []store.Event, treatment string) *Sweep {
	var sw *Sweep
	latest := map[int]SweepVerdict{}
	for _, e := range evs {
		switch e.Kind {
		case EventSweep:
			var p SweepPlan
			if json.Unmarshal([]byte(e.Detail), &p) == nil && p.Treatment == treatment {
				sw = &Sweep{Plan: p}
			}
		case EventSweepLevel:
			var v SweepVerdict
			if json.Unmarshal([]byte(e.Detail), &v) == nil && v.Treatment == treatment {
				latest[v.LevelIndex] = v // events come in time order: the last judgement wins
			}
		}
	}
	if sw == nil {
		return nil
	}
	for _, v := range latest {
		sw.Levels = append(sw.Levels, v)
	}
	sort.Slice(sw.Levels, func(i, j int) bool { return sw.Levels[i].LevelIndex < sw.Levels[j].LevelIndex })
	return sw
}

// sweepLevels is how many of a treatment's levels its plan holds: up to
// and including the saturating level of a sweep that stopped, else all.
func (r *Results) sweepLevels(t Treatment, evs []store.Event) int {
	if sw := SweepOf(evs, t.Name); sw != nil {
		if stop, ok := sw.Stop(); ok {
			return min(stop.LevelIndex+1, len(t.Load.Levels))
		}
	}
	if r := t.Load.Relative; r != nil && len(t.Load.Levels) == 0 {
		return len(r.Fractions) // a treatment whose probe has not run yet
	}
	return len(t.Load.Levels)
}
