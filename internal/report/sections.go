package report

import (
	"github.com/headroom-dev/headroom/internal/report/answer"
	"github.com/headroom-dev/headroom/internal/report/bottleneck"
	"github.com/headroom-dev/headroom/internal/report/consistency"
	"github.com/headroom-dev/headroom/internal/report/controller"
	"github.com/headroom-dev/headroom/internal/report/failures"
	"github.com/headroom-dev/headroom/internal/report/lab"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/report/plan"
	"github.com/headroom-dev/headroom/internal/report/pressure"
	"github.com/headroom-dev/headroom/internal/report/regions"
	"github.com/headroom-dev/headroom/internal/report/rigor"
	"github.com/headroom-dev/headroom/internal/report/sweep"
	"github.com/headroom-dev/headroom/internal/results"
)

// Builder makes report sections from a results model. Each analysis that
// joins the report is one; a builder renders what its analysis computed
// and never writes to the store.
type Builder func(r *results.Results) ([]page.Section, error)

// Sections are the analyses' sections in report order, after the ones
// page.Build makes (campaign, runs, load response, intervals, events).
var Sections = []Builder{
	rigor.CapacitySections,
	sweep.ReportSections,
	rigor.VariabilitySections,
	rigor.StallSections,
	rigor.ScalingSections,
	rigor.NodeScalingSections,
	rigor.ElasticitySections,
	rigor.ProbeSections,
	pressure.ReportSections,
	bottleneck.ReportSections,
	consistency.ReportSections,
	failures.ReportSections,
	regions.ReportSections,
	plan.ReportSections,
	controller.ReportSections,
	lab.ReportSections,
}

// Build makes the whole report of a results model: the answer card, then
// page.Build's sections, then every analysis's.
func Build(r *results.Results) (*page.Report, error) {
	rep, err := page.Build(r)
	if err != nil {
		return nil, err
	}
	for _, b := range Sections {
		secs, err := b(r)
		if err != nil {
			return nil, err
		}
		rep.Add(secs...)
	}
	card, err := answer.Build(r)
	if err != nil {
		return nil, err
	}
	rep.PutAnswer(card) // the first section, linking to the ones above
	return rep, nil
}
