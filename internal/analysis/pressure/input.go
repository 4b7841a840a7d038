package pressure

import (
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/cost"
	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
)

// Input is everything Analyze reads, gathered by FromResults (or built by
// hand in a test).
type Input struct {
	Campaign   string
	Treatments []TreatmentInput // in campaign order
	Pairs      []PairInput      // the provider/client series to align
	// FitNotes say which series could not be paired automatically.
	FitNotes  []string
	FromFiles []results.ESLModelRow
}

// Key names one host's resource.
type Key struct{ Host, Resource string }

// Span is an ESL model in force from From on (until the next span). A nil
// Model means the resource promises nothing then (a volume without
// provisioned IOPS) and its samples are not assessed.
type Span struct {
	From   time.Time
	Model  esl.Model
	Origin string
}

// Timeline is a resource's models in time order. A model given for the
// whole treatment (a file, a stored model) is one span from the zero time;
// one derived from a host's limits has a span per change of the limits.
// The first span also holds before its From.
type Timeline []Span

// at returns the index of the span in force at t.
func (tl Timeline) at(t time.Time) int {
	i := 0
	for j := range tl {
		if !tl[j].From.After(t) {
			i = j
		}
	}
	return i
}

// TreatmentInput is one treatment's part of the input.
type TreatmentInput struct {
	Name     string
	Runs     []results.Run // completed runs with a measured phase, level then repetition order
	Imported bool          // no runs at all in the campaign: every sample is assessed
	Lab      *results.Lab  // the lab that was up for its runs
	Catalog  *results.Catalog
	// CatalogFrom says where Catalog came from (cost.CatalogFor).
	CatalogFrom string
	Models      map[Key]Timeline
	// Samples are every sample of each modelled resource; Analyze keeps
	// those in the measured phases of Runs.
	Samples map[Key][]monitor.Sample
	OptionA results.ESLOptionA
	Notes   []string // from gathering the models
	// Capacity is the treatment's one capacity figure, which its cost per
	// req/s divides by (cost.Capacities); nil in an input built by hand,
	// which then uses the highest mean throughput over its levels.
	Capacity *cost.Capacity
}

// PairInput is one provider-side and one client-side series of a volume
// with their samples.
type PairInput struct {
	Provider, Client               SeriesRef
	Auto                           bool
	ProviderSamples, ClientSamples []monitor.Sample
}

// SeriesRef names one host's resource as one source saw it.
type SeriesRef struct{ Host, Resource, Source string }

func (r SeriesRef) String() string { return r.Host + "/" + r.Resource + "@" + r.Source }
