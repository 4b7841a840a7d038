package bottleneck

import (
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// ReportSections are the bottleneck sections (docs/bottleneck.md): per run
// the multi-bottleneck classification, per treatment the utilisation
// densities and the intervention analysis, and the maps over tier sizes.
func ReportSections(r *results.Results) ([]page.Section, error) {
	if len(r.Runs()) == 0 {
		return nil, nil // imported data: no runs to analyse
	}
	a, err := Analyze(r.Store())
	if err != nil {
		// The rest of the report stands without this section.
		return []page.Section{{ID: "bottlenecks", Title: "Bottlenecks", Summary: "No bottleneck analysis: " + err.Error()}}, nil
	}
	return Sections(a), nil
}
