package rigor

// The report's entry points (internal/report.Sections) are
// CapacitySections (capacity.go), VariabilitySections (variability.go),
// ScalingSections (scaling.go), NodeScalingSections (nodescaling.go),
// ElasticitySections (elasticity.go) and ProbeSections (probe.go); each takes
// the results model and only renders what the analyses' drivers compute.
