package rigor

import (
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// The report's entry points (internal/report.Sections).

// CapacitySections are the load-response sections with knees.
func CapacitySections(r *results.Results) ([]page.Section, error) { return Capacity(r.Store()) }

// VariabilitySections are seed 001's variation verdicts.
func VariabilitySections(r *results.Results) ([]page.Section, error) { return Variability(r.Store()) }

// ScalingSections compare deployments.
func ScalingSections(r *results.Results) ([]page.Section, error) { return Scaling(r.Store()) }

// ProbeSections report the capacity probe.
func ProbeSections(r *results.Results) ([]page.Section, error) { return Probe(r.Store()) }
