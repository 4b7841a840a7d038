package explore

import (
	"fmt"
	"math"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/elasticity"
	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/results"
)

// RunView is one run as the drill-down lists it.
type RunView struct {
	ID            int64     `json:"id"`
	Treatment     string    `json:"treatment"`
	Level         float64   `json:"level"`
	Repetition    int       `json:"repetition"`
	Status        string    `json:"status"`
	Message       string    `json:"message,omitempty"`
	Start         time.Time `json:"start"`
	End           time.Time `json:"end"`
	Throughput    float64   `json:"throughput"` // successful requests/s in the measured phase
	Sent          int64     `json:"sent"`
	Errors        int64     `json:"errors"`
	Late          int64     `json:"late"`
	Dropped       int64     `json:"dropped"`
	ClientLimited bool      `json:"client_limited"`
	// Counted is set for the runs the point's figures are computed from
	// (the last completed run of each repetition); other runs of the same
	// configuration and level (failed, interrupted, superseded) are listed
	// unset.
	Counted bool `json:"counted"`
}

func runView(r results.Run, counted bool) RunView {
	return RunView{ID: r.ID, Treatment: r.Treatment, Level: r.Level, Repetition: r.Repetition, Status: r.Status, Message: r.Message,
		Start: r.Start, End: r.End, Throughput: r.Summary.Throughput, Sent: r.Summary.Sent, Errors: r.Summary.Errors,
		Late: r.Summary.Late, Dropped: r.Summary.Dropped, ClientLimited: r.Summary.ClientLimited, Counted: counted}
}

// Runs lists the runs a point is computed from (ids, of one store), then
// every other run of the same treatment at the same level.
func (s *source) Runs(ids []int64) ([]RunView, error) {
	counted := map[int64]bool{}
	for _, id := range ids {
		counted[id] = true
	}
	var first *results.Run
	all := s.r.Runs()
	for i := range all {
		if counted[all[i].ID] {
			first = &all[i]
			break
		}
	}
	if first == nil {
		return nil, fmt.Errorf("store %s has none of the runs %v", s.name, ids)
	}
	var out []RunView
	for _, r := range all {
		if counted[r.ID] || r.Treatment == first.Treatment && r.Level == first.Level {
			out = append(out, runView(r, counted[r.ID]))
		}
	}
	return out, nil
}

// TimelinePoint is one interval of a run, every operation type together.
type TimelinePoint struct {
	T          float64  `json:"t"`   // seconds from the run's start to the interval's start
	Dur        float64  `json:"dur"` // seconds
	Phase      string   `json:"phase"`
	Throughput float64  `json:"throughput"` // successful requests/s
	P99MS      *float64 `json:"p99_ms"`     // null when no request succeeded
	SLOMiss    bool     `json:"slo_miss"`
}

// EventView is one event of a run on its timeline.
type EventView struct {
	T      float64 `json:"t"`
	Kind   string  `json:"kind"`
	Detail string  `json:"detail"`
}

// RunDetail is a run's per-interval timeline and events.
type RunDetail struct {
	Run      RunView         `json:"run"`
	Store    int             `json:"store"`
	SLO      string          `json:"slo,omitempty"`
	Interval float64         `json:"interval"` // the nominal interval, seconds
	Timeline []TimelinePoint `json:"timeline"`
	// Skipped counts partial intervals (shorter than half the nominal one)
	// left out of the timeline.
	Skipped int         `json:"skipped"`
	Events  []EventView `json:"events"`
	Report  string      `json:"report"` // the store's report page
}

// phases are the load phases in the order a run goes through them.
var phases = []string{"warmup", "measure", "drain"}

// Run is the timeline of run id: each phase's intervals folded over the
// operation types as the elasticity timeline folds them (throughput =
// successful requests per second, p99 of the merged histogram).
func (s *source) Run(id int64) (RunDetail, error) {
	var run *results.Run
	all := s.r.Runs()
	for i := range all {
		if all[i].ID == id {
			run = &all[i]
		}
	}
	if run == nil {
		return RunDetail{}, fmt.Errorf("store %s has no run %d", s.name, id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, _ := s.r.Treatment(run.Treatment)
	d := RunDetail{Run: runView(*run, false), Store: s.index, Interval: t.Load.Interval.Seconds(), Timeline: []TimelinePoint{},
		Events: []EventView{}, Report: fmt.Sprintf("/report/%d", s.index)}
	for _, c := range s.r.CompletedRuns(run.Treatment) {
		if c.ID == id {
			d.Run.Counted = true
		}
	}
	if t.SLO != nil {
		d.SLO = t.SLO.String()
	}
	// The measured phase of a completed run as the load response folded
	// it (computed once per store, when the explorer warms it); the other
	// phases, and runs it leaves out, streamed from the store.
	var folded *levels.RunData
	if in, _, err := levels.FromResults(s.r, run.Treatment); err == nil {
		for i := range in.Runs {
			if in.Runs[i].Run.ID == id {
				folded = &in.Runs[i]
			}
		}
	}
	for _, ph := range phases {
		var pts []elasticity.Point
		var skipped int
		var err error
		if ph == "measure" && folded != nil {
			pts, skipped = elasticity.TimelineOfPoints(folded.Points, t.SLO, t.Load.Interval)
		} else if pts, skipped, err = elasticity.PhaseTimeline(s.r, *run, ph, t.SLO, t.Load.Interval); err != nil {
			return RunDetail{}, err
		}
		d.Skipped += skipped
		for _, p := range pts {
			d.Timeline = append(d.Timeline, TimelinePoint{T: p.Start.Sub(run.Start).Seconds(), Dur: p.Dur.Seconds(), Phase: ph,
				Throughput: p.Throughput, P99MS: finite(p.P99 / 1000), SLOMiss: p.SLOMiss})
		}
	}
	evs, err := s.r.Events(id)
	if err != nil {
		return RunDetail{}, err
	}
	for _, ev := range evs {
		d.Events = append(d.Events, EventView{T: ev.Time.Sub(run.Start).Seconds(), Kind: ev.Kind, Detail: ev.Detail})
	}
	return d, nil
}

// finite is x, or nil (JSON null: the page draws a gap) when x is not a
// number.
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
