package page

import (
	"fmt"
	"math"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
	"github.com/headroom-dev/headroom/internal/report/chart"
)

// est prints mean ± standard error; the ± part is left out when there is
// no standard error (one repetition).
func est(e stats.Estimate, decimals int) string {
	if e.N == 0 || math.IsNaN(e.Mean) {
		return "–"
	}
	if e.N < 2 || math.IsNaN(e.SE) {
		return fmt.Sprintf("%.*f", decimals, e.Mean)
	}
	return fmt.Sprintf("%.*f ± %.*f", decimals, e.Mean, decimals, e.SE)
}

func estCell(e stats.Estimate, decimals int) Cell {
	if e.N == 0 {
		return Text("–")
	}
	return Estimate(est(e, decimals), e.Mean, e.SE)
}

// micros prints a latency given in µs in a readable unit.
func micros(us float64) string {
	if math.IsNaN(us) {
		return "–"
	}
	unit, div, dec := microsUnit(us)
	return fmt.Sprintf("%.*f %s", dec, us/div, unit)
}

func microsUnit(us float64) (unit string, div float64, decimals int) {
	switch {
	case math.Abs(us) >= 1e6:
		return "s", 1e6, 2
	case math.Abs(us) >= 1e3:
		return "ms", 1e3, 2
	}
	return "µs", 1, 0
}

// latCell is a latency estimate (µs) as a cell whose value stays in µs; the
// text prints mean and standard error in the mean's unit: "1.50 ± 0.02 ms".
func latCell(e stats.Estimate) Cell {
	if e.N == 0 || math.IsNaN(e.Mean) {
		return Text("–")
	}
	unit, div, dec := microsUnit(e.Mean)
	s := fmt.Sprintf("%.*f %s", dec, e.Mean/div, unit)
	if e.N >= 2 && !math.IsNaN(e.SE) {
		s = fmt.Sprintf("%.*f ± %.*f %s", dec, e.Mean/div, dec, e.SE/div, unit)
	}
	return Estimate(s, e.Mean, e.SE)
}

// latencyUnit picks the unit in which a chart shows latencies whose largest
// value is maxUS microseconds, and the divisor from µs.
func latencyUnit(maxUS float64) (string, float64) {
	switch {
	case maxUS >= 2e6:
		return "s", 1e6
	case maxUS >= 2e3:
		return "ms", 1e3
	}
	return "µs", 1
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

func bytesPerSec(b float64) string {
	switch {
	case math.IsNaN(b):
		return "–"
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB/s", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MiB/s", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB/s", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B/s", b)
}

func pctCell(v float64) Cell {
	if math.IsNaN(v) {
		return Text("–")
	}
	return Number(fmt.Sprintf("%.0f%%", v), v)
}

// loadText prints a load level: "200 req/s" or "8 clients".
func (s setting) loadText(v float64) string {
	return chart.Value(v) + " " + s.loadUnit()
}

func (s setting) loadUnit() string {
	if s.model == "closed" {
		return "clients"
	}
	return "req/s"
}

func (s setting) loadAxis() chart.Axis {
	if s.model == "closed" {
		return chart.Axis{Label: "clients", Unit: "clients"}
	}
	return chart.Axis{Label: "offered load", Unit: "req/s"}
}

// plural prints "1 run" or "3 runs".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// seconds prints a duration in seconds without trailing zeros.
func seconds(secs float64) string {
	return chart.Value(secs) + " s"
}

// truncate shortens s to n runes, marking the cut.
func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
