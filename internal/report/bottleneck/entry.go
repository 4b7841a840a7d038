// Package bottleneck renders the bottleneck analysis of a campaign
// (docs/bottleneck.md) as report sections and as terminal text: per run
// the multi-bottleneck classification with its plain-language finding, per
// treatment the utilisation densities and the intervention analysis, and
// the maximum-throughput and bottleneck maps over tier sizes. The analysis
// itself, and the reading of its inputs from the results model, are
// internal/analysis/bottleneck's (FromResults); this package only lays the
// results out.
package bottleneck

import (
	ab "github.com/headroom-dev/headroom/internal/analysis/bottleneck"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// ReportSections are the bottleneck sections (docs/bottleneck.md): per run
// the multi-bottleneck classification, per treatment the utilisation
// densities and the intervention analysis, and the maps over tier sizes.
func ReportSections(r *results.Results) ([]page.Section, error) {
	if len(r.Runs()) == 0 {
		// Imported monitoring data only: classify it instead.
		return importedSections(r)
	}
	a, err := ab.FromResults(r)
	if err != nil {
		// The rest of the report stands without this section.
		return []page.Section{{ID: "bottlenecks", Title: "Bottlenecks", Summary: "No bottleneck analysis: " + err.Error()}}, nil
	}
	return Sections(a), nil
}
