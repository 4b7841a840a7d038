// Package spec reads experiment campaigns from YAML, checks them strictly
// (unknown keys and wrong types are errors naming file, line and field path),
// fills defaults, and expands them into an ordered plan of runs.
package spec

import (
	"time"

	"github.com/headroom-dev/headroom/internal/lab"
)

// Spec is one experiment campaign as written by the user, after defaults.
type Spec struct {
	Name        string   `yaml:"name"`        // required; [A-Za-z0-9._-]+
	Description string   `yaml:"description"` // optional free text
	Seed        int64    `yaml:"seed"`        // default 1
	Target      Target   `yaml:"target"`      // required
	Workload    Workload `yaml:"workload"`    // required
	Load        Load     `yaml:"load"`        // required
	Phases      Phases   `yaml:"phases"`      // defaults below
	Repetitions int      `yaml:"repetitions"` // default 1, >= 1
	Order       string   `yaml:"order"`       // "sequential" (default) | "randomized"
	OrderSeed   *int64   `yaml:"order_seed"`  // default: Seed
	SLO         *SLO     `yaml:"slo"`         // optional
	Monitor     Monitor  `yaml:"monitor"`     // resource sampling; on by default
	Interval    Duration `yaml:"interval"`    // default 1s; 100ms..60s
	Output      string   `yaml:"output"`      // default "results" (relative to the spec file's directory)
	Reset       string   `yaml:"reset"`       // between runs: none (default) | restart | repopulate | restore
	OnFailure   string   `yaml:"on_failure"`  // after a failed run: continue (default) | stop
	// Lab is the emulated IaaS region the campaign runs in (hosts as
	// network namespaces with cgroup limits); nil = this machine.
	Lab *lab.Definition `yaml:"lab"`
	// Infra lists hosts reached over ssh instead (infra_ssh.go); it
	// excludes Lab.
	Infra *Infra `yaml:"infra"`
	// Kubernetes is where --agents k8s:N launches agents (k8s.go).
	Kubernetes *Kubernetes `yaml:"kubernetes"`
	// Events are faults and changes applied to lab hosts at offsets into
	// every run's measured phase, undone when the run ends.
	Events []lab.Event `yaml:"events"`
	// Controller scales a tier of lab hosts while the load runs
	// (controller.go); nil = the configuration stays as defined.
	Controller *Controller `yaml:"controller"`
	// Treatments are variants of this campaign run one after another
	// (treatments.go); empty = the campaign is one treatment.
	Treatments []Treatment `yaml:"-"`
	// Factors expand into treatments, one per combination of their values
	// (factors.go); they are crossed with Treatments when both are given.
	Factors []Factor `yaml:"-"`
	// TreatmentOrder and Blocking (the blocks: field) say in what order
	// the treatments' runs go (blocks.go): sequential (default) |
	// randomized, and treatment (default: each treatment's whole plan at
	// once) | repetition. Both stay empty without treatments.
	TreatmentOrder string `yaml:"treatment_order"`
	Blocking       string `yaml:"blocks"`
	// Budget raises (or lowers) the runs and hours the campaign may plan
	// (cost.go); nil = the default budget, 10000 runs and 24 hours.
	Budget *Budget `yaml:"budget"`
	// planRuns, when not nil, is what Plan returns: the runs of one block
	// (Block.Spec).
	planRuns []PlannedRun
	// Analysis configures the analyses of the results (analysis.go).
	Analysis Analysis `yaml:"analysis"`

	// File is the path the spec was read from ("" when parsed from bytes
	// without a name); Source is its exact text, stored with the campaign.
	File   string `yaml:"-"`
	Source []byte `yaml:"-"`
}

// Target names the system under test. Every key but "type" belongs to the
// target type's own options (see internal/target/registry), decoded strictly
// into Options.
type Target struct {
	Type    string `yaml:"type"`
	Options any    `yaml:"-"` // pointer returned by the factory's NewOptions, filled
	Line    int    `yaml:"-"` // line of the target section, for errors
}

// Workload selects a YCSB core workload and/or overrides its properties.
// Field names follow YCSB's property names in snake_case (docs/spec.md has
// the mapping).
type Workload struct {
	YCSB                   string             `yaml:"ycsb"`                     // "a".."f" (case-insensitive); optional when operations is given
	RecordCount            int64              `yaml:"record_count"`             // default 1000
	FieldCount             int                `yaml:"field_count"`              // default 10
	FieldLength            int                `yaml:"field_length"`             // default 100 (bytes)
	Operations             map[string]float64 `yaml:"operations"`               // custom weights by op name; replaces the preset mix
	RequestDistribution    string             `yaml:"request_distribution"`     // uniform|zipfian|latest|hotspot|sequential; default from preset, else zipfian
	ZipfianConstant        float64            `yaml:"zipfian_constant"`         // default 0.99
	HotspotDataFraction    float64            `yaml:"hotspot_data_fraction"`    // default 0.2
	HotspotOpnFraction     float64            `yaml:"hotspot_opn_fraction"`     // default 0.8
	MaxScanLength          int                `yaml:"max_scan_length"`          // default 100
	ScanLengthDistribution string             `yaml:"scan_length_distribution"` // uniform (default) | zipfian
	ReadAllFields          *bool              `yaml:"read_all_fields"`          // default true
	WriteAllFields         *bool              `yaml:"write_all_fields"`         // default false
	InsertOrder            string             `yaml:"insert_order"`             // hashed (default) | ordered

	// Statements make this a statement workload for SQL targets (the
	// profiling study's benchmark statements, seed 001 §II-E); Dataset then
	// says how the tables are created and filled.
	Statements []StatementSpec `yaml:"statements"`
	Dataset    *DatasetSpec    `yaml:"dataset"`

	// Consistency adds the consistency workload (consistency.go).
	Consistency *Consistency `yaml:"consistency"`
}

// StatementSpec is one weighted, parameterized SQL statement.
type StatementSpec struct {
	Name   string      `yaml:"name"`   // required, unique
	Weight *float64    `yaml:"weight"` // default 1
	SQL    string      `yaml:"sql"`    // ? placeholders
	Params []ParamSpec `yaml:"params"` // one per placeholder
}

// ParamSpec draws one statement parameter or generated column value. Exactly
// one generator field is set.
type ParamSpec struct {
	Name     string   `yaml:"name"`     // columns only: the column name
	Uniform  []int64  `yaml:"uniform"`  // [min, max]
	Zipfian  []int64  `yaml:"zipfian"`  // [min, max]; min is the most popular
	Choice   []string `yaml:"choice"`   // values, picked uniformly
	String   []int    `yaml:"string"`   // [length] or [min, max] random letters and digits
	Sequence *int64   `yaml:"sequence"` // first value; then +1 per request (or per row)
	Prefix   string   `yaml:"prefix"`   // numeric generators: make text, prefix + number
	Line     int      `yaml:"-"`
}

// DatasetSpec creates and fills the tables of a statement workload.
type DatasetSpec struct {
	Builtin  string           `yaml:"builtin"`  // "tpcw"
	Scale    map[string]int64 `yaml:"scale"`    // builtin scale parameters
	Schema   string           `yaml:"schema"`   // SQL script of CREATE statements, relative to the spec file
	Populate string           `yaml:"populate"` // SQL script of INSERT statements, relative to the spec file
	Tables   []TableSpec      `yaml:"tables"`   // generated rows
}

// TableSpec fills one table (created by the schema script) with rows.
type TableSpec struct {
	Name    string      `yaml:"name"`
	Rows    int64       `yaml:"rows"`
	Columns []ParamSpec `yaml:"columns"` // each with name and one generator
}

// Load is the load model.
type Load struct {
	Model     string   `yaml:"model"`      // required: "open" | "closed"
	Arrival   string   `yaml:"arrival"`    // open: "poisson" (default) | "constant"
	Rates     *Levels  `yaml:"rates"`      // open: required unless schedule is given; requests/s, > 0
	Clients   *Levels  `yaml:"clients"`    // closed: required; integers >= 1
	ThinkTime Duration `yaml:"think_time"` // closed: mean of an exponential think time; 0 (default) = none
	// Schedule makes the open loop's rate change over the run: steps or a
	// trace file (arrivals.go). It replaces rates: the campaign has one
	// level, the schedule's mean rate over the measured phase.
	Schedule *Schedule `yaml:"schedule"`

	MaxInFlight int      `yaml:"max_in_flight"` // open: concurrent request slots; default 256
	LateAfter   Duration `yaml:"late_after"`    // open: a request starting later than this after its intended time is late; default 1ms
	DropAfter   Duration `yaml:"drop_after"`    // open: a request that cannot start within this of its intended time is dropped (not sent); default 100ms; must be > late_after
	Timeout     Duration `yaml:"timeout"`       // per request; default 10s
	DeadAfter   Duration `yaml:"dead_after"`    // a run fails when every request fails with connection errors for this long; default 5s; 0 = never
	Agents      *Agents  `yaml:"agents"`        // load agents on several hosts (agents.go); nil = this process
}

// Levels is a list of load levels, written either as a YAML sequence
// ([100, 200, 400]) or as a range mapping {from: 100, to: 500, step: 100}
// (inclusive of "to" when it falls on a step).
type Levels struct {
	Values []float64
	Line   int    // for errors
	Sweep  *Sweep // {from, step, until: saturated}: Values are the levels up to its cap (sweep.go)
	// Relative is {relative_to: probe, fractions: [...]}: Values are the
	// fractions until the campaign's probe gives the rate they multiply
	// (relative.go).
	Relative *Relative
}

// Phases are the parts of one campaign and run.
type Phases struct {
	Populate *bool    `yaml:"populate"` // load record_count records once before the first run; default true
	Warmup   Duration `yaml:"warmup"`   // load applied, not measured; default 10s
	Measure  Duration `yaml:"measure"`  // measured; default 60s; > 0
	Cooldown Duration `yaml:"cooldown"` // idle pause after each run; default 0
}

// SLO is a latency objective: the Percentile-th percentile latency of the
// measured phase must not exceed Threshold.
type SLO struct {
	Percentile float64  `yaml:"percentile"` // required; 0 < p < 100 (e.g. 99, 99.9)
	Threshold  Duration `yaml:"threshold"`  // required; > 0
	Operation  string   `yaml:"operation"`  // optional op name; default: all operations together
}

// Monitor says which resources to sample while load runs (this host for
// now; lab and remote hosts join through the same section later). Samples
// are taken on the load engine's interval boundaries.
type Monitor struct {
	Enabled    *bool    `yaml:"enabled"`    // default true
	Interval   Duration `yaml:"interval"`   // default: the campaign's interval; 100ms..60s
	CPU        *bool    `yaml:"cpu"`        // total CPU; default true
	PerCore    bool     `yaml:"per_core"`   // also each core; default false
	Memory     *bool    `yaml:"memory"`     // default true
	Disks      []string `yaml:"disks"`      // device names, or ["all"] (default) or [] for none
	Interfaces []string `yaml:"interfaces"` // interface names, or ["all"] (default: all but lo) or [] for none
	Processes  []string `yaml:"processes"`  // "self" (default: the headroom process) or PIDs
	Cgroups    []string `yaml:"cgroups"`    // cgroup paths, e.g. /headroom/db1
}

// Duration is a time.Duration written as a Go duration string ("500ms",
// "10s", "2m"). A bare number is an error unless it is 0.
type Duration struct{ time.Duration }

// PlannedRun is one run of the campaign: one level, one repetition.
type PlannedRun struct {
	Seq        int     // position in execution order, 0-based
	Slot       int     // stable identity: LevelIndex*Repetitions + (Repetition-1)
	LevelIndex int     // index into the level list
	Level      float64 // requests/s (open) or clients (closed)
	Repetition int     // 1-based
}
