package page

import (
	"fmt"
	"math"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
	"github.com/headroom-dev/headroom/internal/report/format"
)

// The words and numbers the page shares with the terminal and the
// analyses' sections are in internal/report/format; these make cells.

func estCell(e stats.Estimate, decimals int) Cell {
	if e.N == 0 {
		return Text("–")
	}
	return Estimate(format.Page.Est(e, decimals), e.Mean, e.SE)
}

// latCell is a latency estimate (µs) as a cell whose value stays in µs; the
// text prints mean and standard error in the mean's unit: "1.50 ± 0.02 ms".
func latCell(e stats.Estimate) Cell {
	if e.N == 0 || math.IsNaN(e.Mean) {
		return Text("–")
	}
	unit, div, dec := format.MicrosUnit(e.Mean)
	s := fmt.Sprintf("%.*f %s", dec, e.Mean/div, unit)
	if e.N >= 2 && !math.IsNaN(e.SE) {
		s = fmt.Sprintf("%.*f ± %.*f %s", dec, e.Mean/div, dec, e.SE/div, unit)
	}
	return Estimate(s, e.Mean, e.SE)
}

func pctCell(v float64) Cell {
	if math.IsNaN(v) {
		return Text("–")
	}
	return Number(format.Page.Percent(v, 0), v)
}

// wantLog says whether values spread over more than two decades, where a
// linear axis would flatten the low end (latency under rising load).
func wantLog(values []float64) bool {
	lo, hi := math.Inf(1), 0.0
	for _, v := range values {
		if v > 0 && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return hi > 0 && hi/lo > 100
}
