package cli

import (
	bnreport "github.com/headroom-dev/headroom/internal/report/bottleneck"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/store"
)

// The bottleneck sections (docs/bottleneck.md): per run the
// multi-bottleneck classification, per treatment the utilisation densities
// and the intervention analysis, and the maps over tier sizes.
func init() {
	registerSection(600, func(st *store.Store) ([]page.Section, error) {
		c, err := st.Campaign()
		if err != nil || c.SpecYAML == "" {
			return nil, err // imported data: no runs to analyse
		}
		a, err := bnreport.Analyze(st)
		if err != nil {
			// The rest of the report stands without this section.
			return []page.Section{{ID: "bottlenecks", Title: "Bottlenecks", Summary: "No bottleneck analysis: " + err.Error()}}, nil
		}
		return bnreport.Sections(a), nil
	})
}
