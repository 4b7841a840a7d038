package rigor

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/page"
)

// num prints a number with about four significant digits.
func num(v float64) string { return chart.Value(v) }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func loadUnit(model string) string {
	if model == "closed" {
		return "clients"
	}
	return "req/s"
}

// loadText prints a load level: "200 req/s" or "8 clients".
func loadText(model string, v float64) string { return num(v) + " " + loadUnit(model) }

func loadAxis(model string) chart.Axis {
	if model == "closed" {
		return chart.Axis{Label: "clients", Unit: "clients"}
	}
	return chart.Axis{Label: "offered load", Unit: "req/s"}
}

func loadColumn(model string) page.Column {
	return page.Column{Title: loadAxis(model).Label + " (" + loadUnit(model) + ")", Unit: loadUnit(model)}
}

// latencyUnit picks the unit for latencies whose largest value is maxUS
// microseconds, with the divisor from µs (as the load-response section).
func latencyUnit(maxUS float64) (string, float64) {
	switch {
	case maxUS >= 2e6:
		return "s", 1e6
	case maxUS >= 2e3:
		return "ms", 1e3
	}
	return "µs", 1
}

// ms prints microseconds as milliseconds with one decimal, the unit of
// seed 001's thresholds.
func ms(us float64) string {
	if math.IsNaN(us) || math.IsInf(us, 0) {
		return "–"
	}
	return fmt.Sprintf("%.1f ms", us/1000)
}

// ciCell prints a mean with its t confidence interval in brackets; the
// cell keeps the mean and its standard error as numbers.
func ciCell(e stats.Estimate, half float64, decimals int, scale float64) page.Cell {
	if e.N == 0 || math.IsNaN(e.Mean) {
		return page.Text("–")
	}
	text := fmt.Sprintf("%.*f", decimals, e.Mean/scale)
	if !math.IsNaN(half) && !math.IsInf(half, 0) {
		text += fmt.Sprintf(" [%.*f, %.*f]", decimals, (e.Mean-half)/scale, decimals, (e.Mean+half)/scale)
	}
	return page.Estimate(text, e.Mean, e.SE)
}

// seCell prints mean ± standard error (no ± with one value), scaled for
// display while the cell keeps the unscaled numbers.
func seCell(e stats.Estimate, decimals int, scale float64) page.Cell {
	if e.N == 0 || math.IsNaN(e.Mean) {
		return page.Text("–")
	}
	text := fmt.Sprintf("%.*f", decimals, e.Mean/scale)
	if e.N >= 2 && !math.IsNaN(e.SE) {
		text += fmt.Sprintf(" ± %.*f", decimals, e.SE/scale)
	}
	return page.Estimate(text, e.Mean, e.SE)
}

func numCell(v float64, decimals int) page.Cell {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return page.Text("–")
	}
	return page.Number(fmt.Sprintf("%.*f", decimals, v), v)
}

func intCell(n int64) page.Cell { return page.Number(fmt.Sprint(n), float64(n)) }

func verdictCell(text, mark string) page.Cell { return page.Cell{Text: text, Mark: mark} }

func note(level, text string) page.Block {
	return page.Block{Note: &page.Note{Level: level, Text: text}}
}

// sentence ends s with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}

// capital makes a sentence of s: first letter upper case, full stop.
func capital(s string) string {
	s = sentence(s)
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// dedupe keeps the first of equal strings, in order.
func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// us converts a duration to microseconds.
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
