package cli

import (
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/report/pressure"
	"github.com/headroom-dev/headroom/internal/store"
)

// The service level pressure sections (docs/esl.md): none for a campaign
// whose resources have no ESL model. A failing assessment becomes a
// section saying why, so that the rest of the report is still written.
func init() { registerSection(500, pressureSections) }

func pressureSections(st *store.Store) ([]page.Section, error) {
	// Models read from files are kept in the store while the files are at
	// hand (right after headroom run).
	a, err := pressure.Assess(st, pressure.Options{SaveModels: true})
	if err != nil {
		return []page.Section{{ID: "slp", Title: "Service level pressure",
			Summary: "The service level pressure analysis could not run.",
			Blocks:  []page.Block{{Note: &page.Note{Level: "warning", Text: err.Error()}}}}}, nil
	}
	return pressure.Sections(a), nil
}
