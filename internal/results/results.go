package results

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/store"
)

// The row types of the store that analyses read as they are.
type (
	Run            = store.Run
	RunSummary     = store.RunSummary
	Interval       = store.Interval
	Event          = store.Event
	ServerInterval = store.ServerInterval
	Probe          = store.Probe
	ProbeWindow    = store.ProbeWindow
	ESLModelRow    = store.ESLModel
	SampleFilter   = store.SampleFilter
	Sample         = monitor.Sample
	CampaignRow    = store.Campaign
)

// Run statuses.
const (
	StatusCompleted   = store.StatusCompleted
	StatusRunning     = store.StatusRunning
	StatusInterrupted = store.StatusInterrupted
	StatusFailed      = store.StatusFailed
)

// Results is a results store read as typed facts. Campaign facts, runs,
// treatments and host limits are read once when it is made; intervals,
// samples and events are read on demand. Its methods never write.
type Results struct {
	st         *store.Store
	campaign   store.Campaign
	runs       []store.Run
	treatments []Treatment
	hosts      map[string]hostSeries
	labs       []Lab
	// Legacy is set when the facts come from the stored spec text (a file
	// written before the fact tables), with what could not be read.
	legacy     bool
	legacyNote string
	memo       memo // analyses computed once over this snapshot (Memo)
}

// Open opens the results database at path and reads it. Close closes it.
func Open(path string) (*Results, error) {
	st, err := store.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := New(st)
	if err != nil {
		st.Close()
		return nil, err
	}
	return r, nil
}

// Close closes the underlying store.
func (r *Results) Close() error { return r.st.Close() }

// New reads an open store. The store stays the caller's.
func New(st *store.Store) (*Results, error) {
	c, err := st.Campaign()
	if err != nil {
		return nil, err
	}
	runs, err := st.Runs()
	if err != nil {
		return nil, err
	}
	r := &Results{st: st, campaign: c, runs: runs, hosts: map[string]hostSeries{}}
	evs, err := st.Events(-1)
	if err != nil {
		return nil, err
	}
	r.labs = labsOf(evs)
	has, err := st.HasFacts()
	if err != nil {
		return nil, err
	}
	if has {
		if err := r.readFacts(); err != nil {
			return nil, err
		}
	} else {
		r.legacy = true
		r.treatments, r.legacyNote = legacyTreatments(c)
		for _, hl := range legacyHostLimits(r.labs, evs) {
			r.hosts[hl.Host] = append(r.hosts[hl.Host], hl)
		}
	}
	r.attachComputeUnits()
	r.addRunOnlyTreatments()
	return r, nil
}

func (r *Results) readFacts() error {
	rows, err := r.st.TreatmentRows()
	if err != nil {
		return err
	}
	for _, row := range rows {
		var t Treatment
		if err := json.Unmarshal([]byte(row.Facts), &t); err != nil {
			return fmt.Errorf("results database %s: the facts of treatment %q are damaged: %v", r.st.Path(), row.Name, err)
		}
		t.Name = row.Name
		r.treatments = append(r.treatments, t)
	}
	limits, err := r.st.HostLimitRows()
	if err != nil {
		return err
	}
	for _, row := range limits {
		hl := HostLimits{Host: row.Host, From: row.From, Lab: row.Lab, Type: row.Type, Address: row.Address,
			VCPUs: row.VCPUs, MemoryBytes: row.MemoryBytes, NetworkMbit: row.NetworkMbit, PricePerHour: row.PricePerHour,
			Stopped: row.Stopped, LinkDown: row.LinkDown, Cause: row.Cause}
		if row.Volumes != "" {
			if err := json.Unmarshal([]byte(row.Volumes), &hl.Volumes); err != nil {
				return fmt.Errorf("results database %s: the volumes of host %s are damaged: %v", r.st.Path(), row.Host, err)
			}
		}
		r.hosts[row.Host] = append(r.hosts[row.Host], hl)
	}
	return nil
}

// addRunOnlyTreatments adds a treatment for every label only the runs
// know (a store whose facts are missing or partial), with the run's model.
func (r *Results) addRunOnlyTreatments() {
	seen := map[string]bool{}
	for _, t := range r.treatments {
		seen[t.Name] = true
	}
	for _, run := range r.runs {
		if seen[run.Treatment] {
			continue
		}
		seen[run.Treatment] = true
		r.treatments = append(r.treatments, Treatment{Name: run.Treatment, Index: len(r.treatments),
			Load: Load{Model: run.Model}})
	}
	if len(r.treatments) == 0 {
		r.treatments = []Treatment{{Load: Load{Model: "open"}}}
	}
}

// Store is the underlying store, for readers of tables the model does not
// wrap yet. Analyses should not need it.
func (r *Results) Store() *store.Store { return r.st }

// Path is the results database's path.
func (r *Results) Path() string { return r.st.Path() }

// Campaign is the campaign's header row (name, spec text, seed, host
// facts, tool version).
func (r *Results) Campaign() store.Campaign { return r.campaign }

// Legacy reports whether the facts were read from the stored spec text of
// a file written before the fact tables, and what could not be read ("" if
// everything could).
func (r *Results) Legacy() (bool, string) { return r.legacy, r.legacyNote }

// Treatments returns the campaign's treatments in campaign order (a
// campaign without treatments has one, named "").
func (r *Results) Treatments() []Treatment { return r.treatments }

// Treatment returns the named treatment.
func (r *Results) Treatment(name string) (Treatment, bool) {
	for _, t := range r.treatments {
		if t.Name == name {
			return t, true
		}
	}
	return Treatment{}, false
}

// SLO returns the named treatment's SLO (nil when it has none).
func (r *Results) SLO(treatment string) *SLO {
	t, ok := r.Treatment(treatment)
	if !ok {
		return nil
	}
	return t.SLO
}

// Runs returns every run row in ID order, whatever its status.
func (r *Results) Runs() []store.Run { return r.runs }

// CompletedRuns returns, for every plan slot of the treatment, its last
// completed run (a slot run again after an interruption counts once), in
// level then repetition order.
func (r *Results) CompletedRuns(treatment string) []store.Run {
	last := map[int]int{} // slot -> index into r.runs
	for i, run := range r.runs {
		if run.Treatment == treatment && run.Status == store.StatusCompleted {
			last[run.Slot] = i // runs are in ID order: a later one replaces an earlier one
		}
	}
	out := make([]store.Run, 0, len(last))
	for _, i := range last {
		out = append(out, r.runs[i])
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.LevelIndex != b.LevelIndex {
			return a.LevelIndex < b.LevelIndex
		}
		if a.Repetition != b.Repetition {
			return a.Repetition < b.Repetition
		}
		return a.ID < b.ID
	})
	return out
}

// AllCompletedRuns is CompletedRuns over every treatment, in treatment
// order.
func (r *Results) AllCompletedRuns() []store.Run {
	var out []store.Run
	for _, t := range r.treatments {
		out = append(out, r.CompletedRuns(t.Name)...)
	}
	return out
}

// Incomplete counts the runs that did not complete (interrupted, failed or
// still running) in the treatment.
func (r *Results) Incomplete(treatment string) int {
	n := 0
	for _, run := range r.runs {
		if run.Treatment == treatment && run.Status != store.StatusCompleted {
			n++
		}
	}
	return n
}

// HostNames lists the hosts with recorded limits, sorted.
func (r *Results) HostNames() []string {
	out := make([]string, 0, len(r.hosts))
	for h := range r.hosts {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// HostLimits returns the limits of host in force at t: the last entry at
// or before t. ok is false when the host has none by then.
func (r *Results) HostLimits(host string, at time.Time) (HostLimits, bool) {
	return r.hosts[host].at(at)
}

// HostLimitSeries returns every entry of host's limits in time order: the
// limits it came up with, then each change.
func (r *Results) HostLimitSeries(host string) []HostLimits {
	return append([]HostLimits(nil), r.hosts[host]...)
}

// Labs lists the labs that came up during the campaign, in time order.
func (r *Results) Labs() []Lab { return r.labs }

// LabAt returns the lab that was up at t: the last to come up at or before
// t.
func (r *Results) LabAt(t time.Time) (Lab, bool) {
	var found *Lab
	for i := range r.labs {
		if !r.labs[i].Up.After(t) {
			found = &r.labs[i]
		}
	}
	if found == nil {
		return Lab{}, false
	}
	return *found, true
}

// Intervals returns a run's intervals of one phase ("" = every phase).
func (r *Results) Intervals(runID int64, phase string) ([]store.Interval, error) {
	return r.st.Intervals(runID, phase)
}

// EachInterval calls fn with each of a run's intervals of one phase in
// time order, one decoded at a time (store.Store.EachInterval): the
// interval is valid only during the call.
func (r *Results) EachInterval(runID int64, phase string, fn func(*store.Interval) error) error {
	return r.st.EachInterval(runID, phase, fn)
}

// Samples returns the resource samples matching f.
func (r *Results) Samples(f store.SampleFilter) ([]monitor.Sample, error) { return r.st.Samples(f) }

// Events returns the events of one run (0 = not tied to a run, -1 = all).
func (r *Results) Events(runID int64) ([]store.Event, error) { return r.st.Events(runID) }

// ServerTimes returns the server-side execution times of one run.
func (r *Results) ServerTimes(runID int64) ([]store.ServerInterval, error) {
	return r.st.ServerTimes(runID)
}

// Probes returns the probes of the campaign.
func (r *Results) Probes() ([]store.Probe, error) { return r.st.Probes() }

// ProbeWindows returns a probe's windows with their seconds.
func (r *Results) ProbeWindows(probeID int64) ([]store.ProbeWindow, error) {
	return r.st.ProbeWindows(probeID)
}

// ESLModels returns the ESL models saved in the store.
func (r *Results) ESLModels() ([]store.ESLModel, error) { return r.st.ESLModels() }
