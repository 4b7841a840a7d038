// Package store is Headroom's results database: one SQLite file per campaign
// holding the campaign (spec copy, seed, host facts, tool version), its runs,
// per-interval statistics with encoded HdrHistograms, and events. Everything
// after a run reads only this store. The schema is documented in
// docs/results-schema.md.
package store

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Run statuses.
const (
	StatusRunning     = "running"
	StatusCompleted   = "completed"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)

// Campaign is the header row of a results file.
type Campaign struct {
	Name        string
	SpecFile    string // path the spec was read from
	SpecYAML    string // exact spec text
	Seed        int64
	HostJSON    string // host facts as JSON (hostname, kernel, cpus, memory, go version)
	ToolVersion string
	CreatedAt   time.Time
}

// Run is one execution of one planned run (level x repetition). A planned run
// that was interrupted and later resumed has several Run rows; the last one
// with status completed counts.
type Run struct {
	ID         int64
	Seq        int     // plan position (spec.PlannedRun.Seq)
	Slot       int     // plan identity (spec.PlannedRun.Slot)
	Treatment  string  // treatment label, "" when the campaign has one treatment
	Model      string  // "open" | "closed"
	LevelIndex int     //
	Level      float64 // target rate (req/s) or client count
	Repetition int     // 1-based
	Start      time.Time
	End        time.Time // zero while running
	Status     string
	Message    string // why it failed or was interrupted
	Summary    RunSummary
}

// RunSummary holds run-level totals over the measured phase, written when a
// run ends (completed, interrupted or failed).
type RunSummary struct {
	Sent          int64     // requests started
	Completed     int64     // requests that returned without error
	Errors        int64     // requests that returned an error
	Late          int64     // open loop: started later than late_after after intended time
	Dropped       int64     // open loop: not sent, could not start within drop_after
	Unfinished    int64     // still in flight when the run ended
	MeasureStart  time.Time // wall clock at the start of the measured window
	MeasureEnd    time.Time // wall clock at its end (earlier than planned when interrupted)
	MeasureSecs   float64   // length of the measured phase actually run
	Throughput    float64   // successful completions inside the measured window / MeasureSecs
	ClientCPU     float64   // client process CPU utilisation, % of one core, over the measured phase
	ClientLimited bool      // the engine judged the client itself to be the limit
	ClientNote    string    // why (one sentence), empty when not limited
}

// Interval is the statistics of one operation type over one interval of one
// run. Latency is in microseconds and covers successful requests only.
type Interval struct {
	RunID      int64
	Phase      string    // "warmup" | "measure" | "drain"
	Op         string    // operation type name, e.g. "read"
	Start      time.Time // interval start (wall clock, from the engine's monotonic base)
	Duration   time.Duration
	Count      int64 // successful requests completed in the interval
	Errors     int64
	Late       int64
	Dropped    int64
	ErrorKinds map[string]int64 // errors by kind; sums to Errors
	Hist       *hdrhistogram.Histogram
	// sparse are Hist's non-zero buckets when Store.EachInterval decoded
	// it (MergeInto); nil otherwise.
	sparse []histPair
}

// Event is something that happened during a campaign (a phase change, a
// fault, a configuration change).
type Event struct {
	RunID  int64 // 0 when not tied to a run
	Time   time.Time
	Kind   string // e.g. "phase", "populate", "interrupt"
	Detail string // JSON or free text
}
