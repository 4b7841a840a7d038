package pressure

import (
	assess "github.com/headroom-dev/headroom/internal/analysis/pressure"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// ReportSections are the service level pressure sections (docs/esl.md):
// none for a campaign whose resources have no ESL model. A failing
// assessment becomes a section saying why, so that the rest of the report
// is still written. It reads the models stored with the results and the
// model files; it never writes (headroom assess --save stores models).
func ReportSections(r *results.Results) ([]page.Section, error) {
	a, err := assess.FromResults(r, assess.Options{})
	if err != nil {
		return []page.Section{{ID: "slp", Title: "Service level pressure",
			Summary: "The service level pressure analysis could not run.",
			Blocks:  []page.Block{{Note: &page.Note{Level: "warning", Text: err.Error()}}}}}, nil
	}
	return Sections(a), nil
}
