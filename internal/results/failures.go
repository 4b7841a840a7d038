package results

import (
	"encoding/json"
	"fmt"
	"time"
)

// Failures is analysis.failures: the write check after runs and the
// availability analysis's definitions (internal/analysis/availability).
// Zero values take the analysis's defaults.
type Failures struct {
	WriteCheck   bool    `json:"write_check,omitempty" yaml:"write_check"`
	Tolerance    float64 `json:"tolerance,omitempty" yaml:"tolerance"`
	Stable       int     `json:"stable,omitempty" yaml:"stable"`
	DetectFactor float64 `json:"detect_factor,omitempty" yaml:"detect_factor"`
	Steady       Dur     `json:"steady,omitempty" yaml:"steady"`
}

// EventWriteCheck is the store event kind of a write check
// (internal/campaign/writecheck.go); faults are EventFault (labs.go).
const EventWriteCheck = "write_check"

// Fault is one event of the spec's events: section as the campaign
// applied it during a run (a fault, a recovery, a limit change or a
// cluster change): Time is when it was applied.
type Fault struct {
	RunID  int64
	Time   time.Time
	At     string `json:"at"` // the spec's offset into the measured phase
	Action string `json:"action"`
	Host   string `json:"host,omitempty"`
	Detail string `json:"detail"`
	Error  string `json:"error,omitempty"` // the event failed to apply
}

// Faults returns the events applied during a run, in time order. A record
// whose JSON does not decode is an error naming the run.
func (r *Results) Faults(runID int64) ([]Fault, error) {
	evs, err := r.st.Events(runID)
	if err != nil {
		return nil, err
	}
	var out []Fault
	for _, e := range evs {
		if e.Kind != EventFault {
			continue
		}
		f := Fault{RunID: e.RunID, Time: e.Time}
		if err := json.Unmarshal([]byte(e.Detail), &f); err != nil {
			return nil, fmt.Errorf("run %d: fault event at %v: %w", e.RunID, e.Time, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// WriteCheck is what reading back every acknowledged record after a run
// found (Jepsen's set-full idea): each record is stable (read back), lost
// (acknowledged, not found) or never read (the read failed).
type WriteCheck struct {
	RunID int64
	Time  time.Time
	// Trigger is why the check ran: "cluster_change", "fault" or "spec"
	// ("" in stores written before the check ran after faults: a cluster
	// change).
	Trigger   string   `json:"trigger,omitempty"`
	Checked   int64    `json:"checked"`
	Stable    int64    `json:"stable"`
	Lost      int64    `json:"lost"`
	NeverRead int64    `json:"unreadable"`
	FirstLost []uint64 `json:"first_lost,omitempty"`
	// Strong says the reads went through the target's strongest reads
	// (Cassandra ALL, a PostgreSQL or Redis primary).
	Strong     bool    `json:"strong"`
	Seconds    float64 `json:"seconds"`
	FirstError string  `json:"first_error,omitempty"`
	// HolesForgotten says the run had more failed inserts than the
	// workload generator remembers: some records counted lost may never
	// have been acknowledged.
	HolesForgotten bool `json:"holes_forgotten,omitempty"`
}

// WriteChecks returns every write check of the campaign, in time order.
// Stores written before stable was recorded get it as checked - lost -
// never read.
func (r *Results) WriteChecks() ([]WriteCheck, error) {
	evs, err := r.st.Events(-1)
	if err != nil {
		return nil, err
	}
	var out []WriteCheck
	for _, e := range evs {
		if e.Kind != EventWriteCheck {
			continue
		}
		w := WriteCheck{RunID: e.RunID, Time: e.Time, Stable: -1}
		if err := json.Unmarshal([]byte(e.Detail), &w); err != nil {
			return nil, fmt.Errorf("run %d: write check at %v: %w", e.RunID, e.Time, err)
		}
		if w.Stable < 0 {
			w.Stable = w.Checked - w.Lost - w.NeverRead
		}
		out = append(out, w)
	}
	return out, nil
}
