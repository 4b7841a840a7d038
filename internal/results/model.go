// Package results is the one reader of a results store that every
// analysis and report uses. It turns the stored rows into typed facts:
// the treatments with their load model, levels, SLO, workload summary,
// target and analysis settings; the runs that count; and every host's
// limits as a time series. It never parses a spec with today's parser: a
// store written at run time carries its facts in the fact tables, and a
// store written before they existed (schema 1 without them) is read by a
// lenient reader of the stored spec text (v1.go). Reading never writes.
package results

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Treatment is one variant of a campaign with the facts an analysis needs.
// A campaign without treatments has one, named "".
type Treatment struct {
	Name  string `json:"name"`
	Index int    `json:"index"` // position in the campaign
	// Set holds the field paths the treatment changed (its set: or its
	// factors' values), with the values as written.
	Set []Setting `json:"set,omitempty"`

	Load     Load             `json:"load"`
	SLO      *SLO             `json:"slo,omitempty"`
	Workload Workload         `json:"workload"`
	Target   Target           `json:"target"`
	Reset    string           `json:"reset"` // none | restart | repopulate | restore
	Analysis Analysis         `json:"analysis"`
	Events   []ScheduledEvent `json:"events,omitempty"` // the spec's events: section
	Lab      *LabFacts        `json:"lab,omitempty"`    // the lab the treatment ran in, as defined; nil without one
	// Numbers are the numeric values of field paths analyses ask about
	// (e.g. a bottleneck map's axes), as the treatment had them.
	Numbers map[string]float64 `json:"numbers,omitempty"`
}

// Setting is one field path a treatment set, with its value.
type Setting struct {
	Path  string `json:"path"`
	Value string `json:"value"`
}

// Load is the load model of a treatment.
type Load struct {
	Model       string        `json:"model"`             // "open" | "closed"
	Arrival     string        `json:"arrival,omitempty"` // open: the arrival schedule as it prints, e.g. "poisson"
	Levels      []float64     `json:"levels"`            // requests/s (open) or clients (closed)
	Repetitions int           `json:"repetitions"`
	Warmup      time.Duration `json:"warmup_ns"`
	Measure     time.Duration `json:"measure_ns"`
	Cooldown    time.Duration `json:"cooldown_ns"`
	Interval    time.Duration `json:"interval_ns"`
	ThinkTime   time.Duration `json:"think_time_ns,omitempty"`
	MaxInFlight int           `json:"max_in_flight,omitempty"`
	Timeout     time.Duration `json:"timeout_ns,omitempty"`
	Order       string        `json:"order,omitempty"` // sequential | randomized | ...
	// Relative is set when the rates were fractions of a rate a short
	// probe measured first (spec relative_to: probe); Levels are then the
	// rates run, empty until the probe gave them.
	Relative *RelativeLevels `json:"relative,omitempty"`
	// Schedule says the offered rate changed within each run: "steps" or
	// "trace" (load.schedule); "" when each run offered one rate.
	Schedule string `json:"schedule,omitempty"`
}

// Varies is the kind of schedule the offered rate followed within each
// run ("" = one rate per run), from Schedule or, in a store written before
// it, from the arrival schedule as it printed.
func (l Load) Varies() string {
	switch {
	case l.Schedule != "":
		return l.Schedule
	case strings.Contains(l.Arrival, " steps("):
		return "steps"
	case strings.Contains(l.Arrival, "trace("):
		return "trace"
	}
	return ""
}

// RelativeLevels says how a treatment's rates were derived from a probe.
type RelativeLevels struct {
	To        string    `json:"to"` // "probe"
	Fractions []float64 `json:"fractions"`
	// Base is the rate the fractions multiply, in req/s; 0 until known.
	// Basis says what it is: BasisEstimate, BasisLowerBound or
	// BasisLowest, and Note why, when it is not the probe's estimate.
	Base    float64 `json:"base,omitempty"`
	Basis   string  `json:"basis,omitempty"`
	ProbeID int64   `json:"probe_id,omitempty"` // the stored probe that measured it
	Note    string  `json:"note,omitempty"`
}

// What the base rate of relative levels is (RelativeLevels.Basis).
const (
	BasisEstimate   = "estimate"          // the probe's estimate: the highest rate that met the SLO
	BasisLowerBound = "highest met"       // the highest rate whose window met the SLO, where the estimate is missing or was not run
	BasisLowest     = "lowest rate tried" // no window met the SLO: the lowest rate the probe tried
)

// Text says where the levels came from in a sentence, e.g. "the levels
// are 0.4, 0.7, 1.1 x 5120 req/s, the highest rate that met the SLO in a
// short probe run first".
func (r RelativeLevels) Text() string {
	fs := make([]string, len(r.Fractions))
	for i, f := range r.Fractions {
		fs[i] = strconv.FormatFloat(f, 'f', -1, 64)
	}
	list := strings.Join(fs, ", ")
	if !(r.Base > 0) {
		return "the levels are " + list + " x the rate a short probe finds first; the probe has not run yet"
	}
	what := "the highest rate that met the SLO in a short probe run first"
	if r.Basis == BasisLowest {
		what = "the lowest rate a short probe run first tried (none met the SLO)"
	}
	s := fmt.Sprintf("the levels are %s x %s req/s, %s", list, strconv.FormatFloat(r.Base, 'f', -1, 64), what)
	if r.Note != "" {
		s += "; " + r.Note
	}
	return s
}

// Open reports whether requests arrive independently of responses.
func (l Load) Open() bool { return l.Model != "closed" }

// LevelUnit is how a level reads: "req/s" or "clients".
func (l Load) LevelUnit() string {
	if l.Open() {
		return "req/s"
	}
	return "clients"
}

// SLO is a latency objective: the Percentile-th percentile of the
// measured phase (of operation Op, "" = all together) within Threshold.
type SLO struct {
	Percentile float64       `json:"percentile"`
	Threshold  time.Duration `json:"threshold_ns"`
	Op         string        `json:"op,omitempty"`
}

// String prints the SLO as the reports write it, e.g. "p99 ≤ 10ms".
func (s SLO) String() string {
	op := ""
	if s.Op != "" {
		op = " of " + s.Op
	}
	return fmt.Sprintf("p%g%s ≤ %v", s.Percentile, op, s.Threshold)
}

// Workload summarises what the requests did.
type Workload struct {
	Kind         string             `json:"kind"`           // "ycsb" | "statements"
	YCSB         string             `json:"ycsb,omitempty"` // preset letter, lower case
	Mix          map[string]float64 `json:"mix,omitempty"`  // op name -> weight (sums to 1)
	RecordCount  int64              `json:"record_count,omitempty"`
	FieldCount   int                `json:"field_count,omitempty"`
	FieldLength  int                `json:"field_length,omitempty"`
	Distribution string             `json:"distribution,omitempty"` // request distribution
	Statements   []string           `json:"statements,omitempty"`   // statement names, for statement workloads
}

// RecordBytes is the payload of one record (fields x field length).
func (w Workload) RecordBytes() int64 { return int64(w.FieldCount) * int64(w.FieldLength) }

// ReadShare is the share of reads among the operations the mix sends to
// the server, counting a read_modify_write as one read and one write and a
// scan as a read; ok is false when the mix is unknown.
func (w Workload) ReadShare() (share float64, ok bool) {
	if len(w.Mix) == 0 {
		return 0, false
	}
	var sum, reads float64
	for op, x := range w.Mix {
		switch op {
		case "read", "scan":
			reads += x
		case "read_modify_write":
			reads += x
			sum += x // its write
		}
		sum += x
	}
	if sum <= 0 {
		return 0, false
	}
	return reads / sum, true
}

// Target is the system under test of a treatment.
type Target struct {
	Type      string `json:"type"`
	InProcess bool   `json:"in_process"` // runs inside Headroom's process (sqlite, disk, null)
	// Address is host:port of a networked target ("" for in-process ones
	// and when unknown); Hosts are the hosts its servers run on (a managed
	// server's lab host), empty when it runs elsewhere.
	Address string   `json:"address,omitempty"`
	Hosts   []string `json:"hosts,omitempty"`
	Managed bool     `json:"managed,omitempty"` // Headroom started the server
	// Cluster describes a managed cluster as it starts (its node count
	// changes only through the run's node_change events); nil for one
	// server.
	Cluster *Cluster `json:"cluster,omitempty"`
}

// Cluster is a managed cluster's definition (managed.cluster).
type Cluster struct {
	Nodes             int    `json:"nodes"`
	Mode              string `json:"mode,omitempty"`               // "" = the target's default
	ReplicationFactor int    `json:"replication_factor,omitempty"` // 0 = the target's default
	HostPrefix        string `json:"host_prefix,omitempty"`        // lab hosts' name prefix; "" = this machine
}

// faultActions are the designed faults (internal/campaign/failure.go):
// after one, a run no longer measures one working system.
var faultActions = []string{"kill", "stop", "link_down", "partition", "stall_disk", "promote"}

// Disturbances names the treatment's designed faults during its runs
// ("kill of db1 at 10s, partition of db2 at 20s"); "" when it has none.
// Cluster changes are not among them: the scaling analysis compares such
// treatments at their starting node count, and says so.
func (t Treatment) Disturbances() string {
	var out []string
	for _, e := range t.Events {
		if !slices.Contains(faultActions, e.Action) {
			continue
		}
		s := e.Action
		if e.Host != "" {
			s += " of " + e.Host
		}
		out = append(out, s+" at "+e.At.String())
	}
	return strings.Join(out, ", ")
}

// ScheduledEvent is one entry of the spec's events: section.
type ScheduledEvent struct {
	At     time.Duration `json:"at_ns"` // offset into the measured phase
	Action string        `json:"action"`
	Host   string        `json:"host,omitempty"`
}

// LabFacts is the lab a treatment was defined to run in.
type LabFacts struct {
	Name  string   `json:"name"`
	Hosts []string `json:"hosts"`
}

// Dur is a duration that reads from JSON nanoseconds and from YAML/JSON
// Go duration strings ("30s"), so that settings written by the spec and
// by the fact tables decode alike.
type Dur time.Duration

// D returns the time.Duration.
func (d Dur) D() time.Duration { return time.Duration(d) }

// MarshalJSON writes nanoseconds.
func (d Dur) MarshalJSON() ([]byte, error) { return json.Marshal(int64(d)) }

// UnmarshalJSON reads nanoseconds or a duration string.
func (d *Dur) UnmarshalJSON(b []byte) error {
	var n int64
	if err := json.Unmarshal(b, &n); err == nil {
		*d = Dur(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is nanoseconds or a string like 30s, not %s", b)
	}
	return d.parse(s)
}

// UnmarshalText reads a Go duration string (YAML scalars decode through
// it); a bare 0 is zero.
func (d *Dur) UnmarshalText(b []byte) error { return d.parse(string(b)) }

func (d *Dur) parse(s string) error {
	s = strings.TrimSpace(s)
	if s == "0" || s == "" {
		*d = 0
		return nil
	}
	x, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Dur(x)
	return nil
}
