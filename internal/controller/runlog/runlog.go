// Package runlog is how a controller run is recorded (issue 19, seed 003
// ch. 8): one store event per decision, with what the sensor read, which
// path the controller took, what it asked the ODS or why it fell back, and
// what it changed. The campaign writes the entries while the run goes on;
// the judge and the report read them back. The configuration over time is
// not repeated here: it is the run's node_change events.
package runlog

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
)

// EventKind is the store event kind of one decision, SetupKind that of
// the controller's configuration, written once when a run starts.
const (
	EventKind = "controller_decision"
	SetupKind = "controller_setup"
)

// Setup is how a run's controller was configured.
type Setup struct {
	Controller string        `json:"controller"` // "empirical" or "hpa"
	Tier       string        `json:"tier"`       // lab host name prefix
	Period     time.Duration `json:"period"`     // between decisions: controller.period, or the HPA's compressed sync period
	Min        int           `json:"min"`
	Max        int           `json:"max"`
	// Nodes is the tier's hosts when the measured phase began.
	Nodes []string `json:"nodes"`
	// Sensitive and Normal are the sensor's thresholds; Normal is the
	// SLA the run is judged by.
	Sensitive time.Duration `json:"sensitive"`
	Normal    time.Duration `json:"normal"`
	// NodeCapacity is req/s one node serves within the SLA; 0 = unknown
	// (no elasticity metrics).
	NodeCapacity float64 `json:"node_capacity"`
	// ODSRecords is how many measured seconds seeded the ODS.
	ODSRecords int `json:"ods_records"`
	// Cooldown is the empirical controller's cool-down after an action
	// (0 = none, the seed's; the HPA has none).
	Cooldown time.Duration `json:"cooldown,omitempty"`
	// Tiers are every scaled tier of a controller of several (controller.
	// tiers); Tier, Min, Max, Nodes and NodeCapacity above repeat the
	// first. A run of one tier leaves it empty.
	Tiers []TierSetup `json:"tiers,omitempty"`
}

// TierSetup is one scaled tier as a run began.
type TierSetup struct {
	Tier         string   `json:"tier"` // lab host name prefix
	Min          int      `json:"min"`
	Max          int      `json:"max"`
	Nodes        []string `json:"nodes"`
	NodeCapacity float64  `json:"node_capacity"` // req/s a node serves within the SLA; 0 = unknown
}

// AllTiers are the run's scaled tiers, one or several.
func (s Setup) AllTiers() []TierSetup {
	if len(s.Tiers) > 0 {
		return s.Tiers
	}
	return []TierSetup{{Tier: s.Tier, Min: s.Min, Max: s.Max, Nodes: s.Nodes, NodeCapacity: s.NodeCapacity}}
}

// TierState is one tier at a decision: its nodes, the count the decision
// asked for, and its mean CPU over the last period (−1 = not monitored).
type TierState struct {
	Tier        string  `json:"tier"`
	Nodes       int     `json:"nodes"`
	Target      int     `json:"target"`
	Utilisation float64 `json:"utilisation"`
}

// Entry is one decision of a controller.
type Entry struct {
	Controller string    `json:"controller"` // "empirical" or "hpa"
	At         time.Time `json:"at"`
	Tier       string    `json:"tier"`  // the scaled tier: its lab hosts' name prefix
	Nodes      int       `json:"nodes"` // the tier's nodes when the decision was taken
	Target     int       `json:"target"`
	// What the controller observed over the last period.
	Requests    int64   `json:"requests"`
	Sensitive   float64 `json:"sensitive"`   // share within the sensitive threshold (0..1)
	Normal      float64 `json:"normal"`      // share within the normal threshold (0..1)
	Utilisation float64 `json:"utilisation"` // the tier's mean CPU over the period (0..1; -1 = not monitored)
	Throughput  float64 `json:"throughput"`  // requests answered per second over the period
	// Path is the empirical controller's sensor path (scale-up,
	// scale-down, hold); empty for the HPA.
	Path string `json:"path,omitempty"`
	// Action: hold, configure (the ODS's answer), fallback (the horizontal
	// model), scale (the HPA's desired count), or limit (a wanted change
	// the tier's bounds refused).
	Action   string  `json:"action"`
	Forecast float64 `json:"forecast,omitempty"` // the forecast total req/s the ODS was asked about
	Config   string  `json:"config,omitempty"`   // configure: the configuration the ODS chose
	// Records is how many ODS records lay within the query's radius, and
	// Support how many the chosen configuration had.
	Records int    `json:"records,omitempty"`
	Support int    `json:"support,omitempty"`
	Reason  string `json:"reason"`
	// Error is set when carrying the decision out failed.
	Error string `json:"error,omitempty"`
	// Tiers are every tier of a controller of several; Tier, Nodes,
	// Target and Utilisation above repeat the first tier the decision
	// changed (or the first tier). A run of one tier leaves it empty.
	Tiers []TierState `json:"tiers,omitempty"`
}

// AllTiers are the decision's tiers, one or several.
func (e Entry) AllTiers() []TierState {
	if len(e.Tiers) > 0 {
		return e.Tiers
	}
	return []TierState{{Tier: e.Tier, Nodes: e.Nodes, Target: e.Target, Utilisation: e.Utilisation}}
}

// Changed says whether the decision asked for a different node count of
// any tier.
func (e Entry) Changed() bool {
	for _, t := range e.AllTiers() {
		if t.Target != t.Nodes {
			return true
		}
	}
	return false
}

// Encode is the event detail of e.
func (e Entry) Encode() string { return encode(e) }

func encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Entries and setups hold only plain values; this cannot happen.
		panic(fmt.Sprintf("runlog: encoding: %v", err))
	}
	return string(b)
}

// Encode is the event detail of s.
func (s Setup) Encode() string { return encode(s) }

// Read returns a run's controller setup (ok false: the run had no
// controller) and its decisions in time order.
func Read(r *results.Results, runID int64) (setup Setup, entries []Entry, ok bool, err error) {
	evs, err := r.Events(runID)
	if err != nil {
		return Setup{}, nil, false, err
	}
	for _, ev := range evs {
		switch ev.Kind {
		case SetupKind:
			if err := json.Unmarshal([]byte(ev.Detail), &setup); err != nil {
				return Setup{}, nil, false, fmt.Errorf("run %d: a %s event is not a controller setup: %w", runID, SetupKind, err)
			}
			ok = true
		case EventKind:
			var e Entry
			if err := json.Unmarshal([]byte(ev.Detail), &e); err != nil {
				return Setup{}, nil, false, fmt.Errorf("run %d: a %s event is not a decision: %w", runID, EventKind, err)
			}
			entries = append(entries, e)
		}
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].At.Before(entries[j].At) })
	return setup, entries, ok, nil
}
