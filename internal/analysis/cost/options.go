package cost

import "fmt"

// DefaultMaxNodes bounds option B's scale-out cluster when
// analysis.esl.option_b.max_nodes is not given.
const DefaultMaxNodes = 100

// Priced is one measured treatment with its deployment priced.
type Priced struct {
	Name       string
	Deployment Deployment
	Throughput float64 // the best level's mean, req/s
	Prices     string  // where the prices come from
}

// Row is seed 000 Table 1 for one change: the base treatment, option A
// (another treatment, measured) and option B (the base scaled out,
// throughput extrapolated).
type Row struct {
	Base, A    string // treatment names
	Comparison Comparison
	Prices     string // where the prices come from
}

// CompareTreatments compares every priced treatment but the base with the
// base (seed-digest §4): option A is the treatment as measured, option B
// the base scaled out linearly to the largest cluster below A's
// throughput, at most maxNodes nodes (0 = DefaultMaxNodes). It needs the
// base among priced and another treatment; a pair that cannot be compared
// is left out with a note saying why.
func CompareTreatments(base string, priced []Priced, maxNodes int) (rows []Row, notes []string) {
	if maxNodes == 0 {
		maxNodes = DefaultMaxNodes
	}
	var b *Priced
	for i := range priced {
		if priced[i].Name == base {
			b = &priced[i]
		}
	}
	if b == nil {
		return nil, nil
	}
	for _, p := range priced {
		if p.Name == base {
			continue
		}
		c, err := CompareWithin(b.Deployment, b.Throughput, p.Deployment, p.Throughput, maxNodes)
		if err != nil {
			notes = append(notes, fmt.Sprintf("cost of %s against %s: %v", p.Name, base, err))
			continue
		}
		from := p.Prices
		if b.Prices != from {
			from = b.Prices + " (base); " + from
		}
		rows = append(rows, Row{Base: base, A: p.Name, Comparison: c, Prices: from})
	}
	return rows, notes
}
