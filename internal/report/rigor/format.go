package rigor

import (
	"fmt"
	"math"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
)

// Numbers, load levels, latency units and plurals are printed by
// internal/report/format, as on the rest of the page; these make the
// rigor sections' cells and sentences.

func loadColumn(model string) page.Column {
	return page.Column{Title: format.LoadAxis(model).Label + " (" + format.LoadUnit(model) + ")", Unit: format.LoadUnit(model)}
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
	shown := stats.Estimate{Mean: e.Mean / scale, SE: e.SE / scale, N: e.N}
	return page.Estimate(format.Page.Est(shown, decimals), e.Mean, e.SE)
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

// capital makes a sentence of s: first letter upper case, full stop.
func capital(s string) string { return format.Capitalize(format.Sentence(s)) }

// us converts a duration to microseconds.
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
