// Package pressure assesses a campaign's results for service level
// pressure (seed 000, AISLE; seed-digest §4). FromResults gathers the
// inputs from the results model: the expected service level (ESL) model
// of every monitored host resource over time (from the hosts' limits in
// force, model files and the models stored with the results), the samples
// of each treatment's measured phases, prices and throughputs. Analyze,
// the pure core, turns them into SLP series, summaries (boxplots,
// MCPT/TCPT), recommendations with priced actions, the cost of the
// options, and the normalisation fits between provider-side and
// client-side series. The formulas are those of packages esl, slp and
// cost; internal/report/pressure renders the result. Nothing here writes.
package pressure

import (
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/cost"
	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/analysis/slp"
	"github.com/headroom-dev/headroom/internal/results"
)

// DefaultThresholds are the critical SLP thresholds when
// analysis.esl.thresholds is not given, percent.
var DefaultThresholds = []float64{70, 95}

// Op-size policies as analysis.esl.op_size and --op-size write them.
const (
	OpSizeBest     = "best"
	OpSizeObserved = "observed"
)

// Assessment is the pressure analysis of one results store.
type Assessment struct {
	Campaign   string
	Thresholds []float64 // critical thresholds c, percent
	Rules      slp.Rules // with defaults filled
	Policy     slp.OpSizePolicy
	OpSizesKiB []float64 // candidate op sizes of the best-size policy; nil = the model's
	Base       string    // the base treatment of the cost comparison
	Treatments []Treatment
	Costs      []cost.Row
	Fits       []Fit
	Notes      []string // what a reader should know: models that could not be read, subjects left out
	// FromFiles are the models read from files (analysis.esl.models and
	// --model) as the results store keeps them: headroom assess --save
	// writes them, so that later reports work without the files.
	FromFiles []results.ESLModelRow
}

// Treatment is the assessment of one treatment's measured phases (the
// whole campaign when it has none; imported data without runs form one
// treatment covering every sample).
type Treatment struct {
	Name       string // "" when the campaign has no treatments
	Runs       int    // completed runs whose measured phases are assessed
	Covered    time.Duration
	Imported   bool         // no runs: every sample is assessed
	Lab        *results.Lab // the lab as it came up for the treatment; nil outside one
	Hosts      string       // the lab's data hosts in a few words
	Models     []ModelEntry // the ESL model of every host resource, sorted, each span of a changing one
	Subjects   []Subject
	Findings   []Finding
	Throughput float64 // the capacity figure its cost divides by (cost.Capacities), req/s (NaN without one)
	// Achieved is the highest mean throughput over its levels whatever
	// the SLO, req/s: what a comparison falls back on when no level met
	// the SLO (NaN without runs).
	Achieved      float64
	AchievedLevel float64 // the level Achieved was reached at
	// OpenLoop says every assessed run was open loop: a level is then the
	// offered req/s.
	OpenLoop bool
	Level    float64 // where it was reached
	Cost     *cost.Option
	CostNote string // why there is no cost
}

// Subject is the SLP series of one quality of one host's service.
type Subject struct {
	Host, Service string // Service is the resource, with " @SOURCE" for data not sampled by Headroom
	Resource      string
	Source        string
	Quality       esl.Quality
	Model         string  // where the ESL model came from
	ESL           string  // the ESL used, with its source
	ESLMean       float64 // NaN when the ESL varies over the intervals (observed op size, limits changed)
	Observed      float64 // time-weighted mean observed level
	Unit          string  // of ESLMean and Observed
	Series        slp.Series
	Summary       slp.Summary
}

// Label names the subject in tables: host, service and quality.
func (s Subject) Label() string { return s.Host + " " + s.Service + " " + string(s.Quality) }

// Finding is a recommendation with the change it suggests.
type Finding struct {
	slp.Finding
	Treatment string
	Action    string // the change in words, priced when the catalog allows
}

// ModelEntry is the ESL model a treatment uses for one host's resource
// from From on (zero: for the whole treatment).
type ModelEntry struct {
	Host, Resource, Origin string
	From                   time.Time
	Model                  esl.Model
}

// Fit is the alignment of a provider-side and a client-side series of one
// volume (seed-digest §4, seed 000 §5.3): the factor k with provider ~ k x
// client for ops/s and for bandwidth, and the normalized-op unit with
// which the client's operations reproduce the provider's op count.
type Fit struct {
	Provider, Client string // HOST/RESOURCE@SOURCE
	Auto             bool   // paired because they were the only two series of their host
	Ops, Bytes       *slp.Fit
	OpsErr, BytesErr string
	Unit             *slp.UnitFit
	Units            []slp.UnitFit
	UnitErr          string
}
