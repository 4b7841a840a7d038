// Package format writes the numbers, durations and words the report's
// renderers share, so that the page, the terminal summary and the
// analyses' sections print a load level, a latency, a count or a plural
// the same way. Where the page and the terminal differ on purpose (the
// mark of a missing value, a gap before a latency's unit), a Style says
// how.
package format

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
	"github.com/headroom-dev/headroom/internal/report/chart"
)

// Style is how one medium writes what the formatters print: the mark of a
// missing value and the gap between a latency and its unit.
type Style struct {
	Missing string
	UnitGap string
}

var (
	// Page is the HTML/JSON report's style: "–" and "1.50 ms".
	Page = Style{Missing: "–", UnitGap: " "}
	// Terminal is the terminal summary's: ASCII "-" (its tables are
	// aligned by tabwriter) and "1.50ms".
	Terminal = Style{Missing: "-", UnitGap: ""}
)

// Est prints mean ± standard error with the given decimals; the ± part is
// left out when there is no standard error (one repetition).
func (s Style) Est(e stats.Estimate, decimals int) string {
	if e.N == 0 || math.IsNaN(e.Mean) {
		return s.Missing
	}
	if e.N < 2 || math.IsNaN(e.SE) {
		return fmt.Sprintf("%.*f", decimals, e.Mean)
	}
	return fmt.Sprintf("%.*f ± %.*f", decimals, e.Mean, decimals, e.SE)
}

// Micros prints a latency given in µs in a readable unit: "850µs",
// "1.50ms", "2.10s" (with the style's gap before the unit).
func (s Style) Micros(us float64) string {
	if math.IsNaN(us) {
		return s.Missing
	}
	unit, div, dec := MicrosUnit(us)
	return fmt.Sprintf("%.*f%s%s", dec, us/div, s.UnitGap, unit)
}

// BytesPerSec prints a rate in binary units: "512 B/s", "1.5 KiB/s".
func (s Style) BytesPerSec(b float64) string {
	switch {
	case math.IsNaN(b):
		return s.Missing
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB/s", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MiB/s", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB/s", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B/s", b)
}

// Percent prints a value already in percent: "42%", "42.5%".
func (s Style) Percent(v float64, decimals int) string {
	if math.IsNaN(v) {
		return s.Missing
	}
	return fmt.Sprintf("%.*f%%", decimals, v)
}

// MicrosUnit picks the unit in which one latency of us microseconds reads
// best, the divisor from µs and the decimals to print.
func MicrosUnit(us float64) (unit string, div float64, decimals int) {
	switch {
	case math.Abs(us) >= 1e6:
		return "s", 1e6, 2
	case math.Abs(us) >= 1e3:
		return "ms", 1e3, 2
	}
	return "µs", 1, 0
}

// LatencyUnit picks the unit of an axis or column of latencies whose
// largest value is maxUS microseconds, and the divisor from µs. It moves
// to the larger unit only from 2 of it, so that a scale does not show
// 0.0x values.
func LatencyUnit(maxUS float64) (string, float64) {
	switch {
	case maxUS >= 2e6:
		return "s", 1e6
	case maxUS >= 2e3:
		return "ms", 1e3
	}
	return "µs", 1
}

// Num prints a number with four significant digits and no trailing zeros:
// 1235, 12.35, 0.01235.
func Num(v float64) string { return chart.Value(v) }

// Seconds prints seconds without trailing zeros: "10 s", "2.5 s".
func Seconds(secs float64) string { return Num(secs) + " s" }

// SecondsRounded prints seconds rounded half away from zero to the given
// decimals, in the shortest form: SecondsRounded(7.25, 1) is "7.3 s". For
// times counted in whole intervals, where four significant digits would
// print a long series' noise. Like %g, it writes an exponent from 1e6 s
// (11.6 days) on, as the pressure tables always have.
func SecondsRounded(secs float64, decimals int) string {
	p := math.Pow(10, float64(decimals))
	return strconv.FormatFloat(math.Round(secs*p)/p, 'g', -1, 64) + " s"
}

// Exact prints a number with every digit it has and no exponent: a
// setting the user wrote (0.95, 1e-6) reads as written.
func Exact(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Plural prints "1 run" or "3 runs".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %s", n, plural(word))
}

// plural is the plural of an English noun, for the nouns reports count:
// "series" stays, a noun ending in s, x, ch or sh takes "es", one ending
// in a consonant and y takes "ies", any other an "s".
func plural(word string) string {
	switch {
	case strings.HasSuffix(word, "series"):
		return word
	case strings.HasSuffix(word, "s"), strings.HasSuffix(word, "x"), strings.HasSuffix(word, "ch"), strings.HasSuffix(word, "sh"):
		return word + "es"
	case len(word) >= 2 && word[len(word)-1] == 'y' && !strings.ContainsRune("aeiou", rune(word[len(word)-2])):
		return word[:len(word)-1] + "ies"
	}
	return word + "s"
}

// Capitalize upper-cases the first letter of s: an analysis' finding
// ("cpu of db1 saturates first") opening a sentence.
func Capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// Sentence ends s, trimmed, with a full stop unless it has one or is
// empty.
func Sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}

// Distinct keeps the first of equal strings, in order, so that a note or a
// source is said once.
func Distinct(xs []string) []string {
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

// Truncate shortens s to n runes, marking the cut with "…".
func Truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// ID maps a treatment name (letters, digits, '.', '_', '-') to the
// characters of an HTML id: lower-case letters, digits and '-' ("Fast.2"
// is "fast-2"). Names that differ only in case or in '.', '_' and '-'
// map to the same ID.
func ID(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '-'
	}, name)
}

// LoadUnit is how a load level of the model ("open" or "closed") reads:
// "req/s" or "clients".
func LoadUnit(model string) string {
	if model == "closed" {
		return "clients"
	}
	return "req/s"
}

// LoadText prints a load level: "200 req/s" or "8 clients".
func LoadText(model string, level float64) string { return Num(level) + " " + LoadUnit(model) }

// LoadAxis is the axis of load levels in a chart.
func LoadAxis(model string) chart.Axis {
	if model == "closed" {
		return chart.Axis{Label: "clients", Unit: "clients"}
	}
	return chart.Axis{Label: "offered load", Unit: "req/s"}
}
