// Package comparison renders what internal/analysis/compare found: a table
// per level for the terminal, the same as Markdown for a pull request
// comment, and a versioned JSON document (docs/compare.md). It computes
// nothing: the verdicts, intervals and broken rules come in.
package comparison

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/headroom-dev/headroom/internal/analysis/compare"
	"github.com/headroom-dev/headroom/internal/report/format"
)

// View is a comparison with the --fail-on rules judged.
type View struct {
	compare.Comparison
	Rules []compare.Judged
	// Shown are the figures the tables print (every figure is in the
	// JSON).
	Shown []string
}

// Failed reports whether any rule is broken.
func (v View) Failed() bool {
	for _, r := range v.Rules {
		if len(r.Broken) > 0 {
			return true
		}
	}
	return false
}

// DefaultShown are the figures the tables print unless told otherwise.
var DefaultShown = []string{"throughput", "mean", "p50", "p95", "p99"}

func (v View) shown(c compare.Cell) bool {
	for _, s := range v.Shown {
		if c.Figure.Name == s {
			return true
		}
	}
	for _, r := range v.Rules {
		for _, x := range r.Broken {
			if x.Figure.Name == c.Figure.Name && x.Op == c.Op {
				return true
			}
		}
	}
	return false
}

// group is one level of one pair of treatments.
type group struct {
	title string
	cells []compare.Cell
}

func (v View) groups() []group {
	var out []group
	for _, c := range v.Cells {
		t := levelTitle(v.Model, c)
		if len(out) == 0 || out[len(out)-1].title != t {
			out = append(out, group{title: t})
		}
		out[len(out)-1].cells = append(out[len(out)-1].cells, c)
	}
	return out
}

func levelTitle(model string, c compare.Cell) string {
	var b strings.Builder
	if c.Treatment != "" || c.TreatmentB != "" {
		b.WriteString("treatment " + c.Treatment)
		if c.TreatmentB != "" {
			b.WriteString(" vs " + c.TreatmentB)
		}
		b.WriteString(" · ")
	}
	fmt.Fprintf(&b, "level %d · %s", c.LevelIndex+1, format.LoadText(model, c.LevelA))
	if c.LevelB != c.LevelA {
		fmt.Fprintf(&b, " in A, %s in B", format.LoadText(model, c.LevelB))
	}
	fmt.Fprintf(&b, " · %s and %s", format.Plural(c.Result.NA, "repetition"), format.Plural(c.Result.NB, "repetition"))
	return b.String()
}

func value(s format.Style, f compare.Figure, x float64) string {
	if f.Unit == "µs" {
		return s.Micros(x)
	}
	if math.IsNaN(x) {
		return s.Missing
	}
	return format.Num(x) + " " + f.Unit
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*x)
}

func interval(r compare.Result) string {
	if math.IsNaN(r.Lo) {
		return "-"
	}
	return "[" + pct(r.Lo) + ", " + pct(r.Hi) + "]"
}

// verdictText is the verdict with what could have been detected, or why
// nothing was tested.
func verdictText(r compare.Result) string {
	switch r.Verdict {
	case compare.Untested:
		return "not tested: " + r.Why
	case compare.Same:
		if r.Detectable > 0 && !math.IsNaN(r.Detectable) {
			return fmt.Sprintf("no detectable difference (could detect ±%.1f%%)", 100*r.Detectable)
		}
	}
	return string(r.Verdict)
}

func figureLabel(c compare.Cell) string {
	if c.Figure.OnlyAll || c.Op == "all" {
		return c.Figure.Name
	}
	return c.Figure.Name + " " + c.Op
}

// Terminal writes the comparison for a person at a terminal.
func Terminal(w io.Writer, v View) error {
	s := format.Terminal
	fmt.Fprintf(w, "Comparing B (%s) with the baseline A (%s): each change is B's mean over A's, with its %.0f%% confidence interval (Welch's t-test across repetitions; docs/compare.md)\n",
		v.NameB, v.NameA, 100*v.Confidence)
	for _, a := range v.Accepted {
		fmt.Fprintf(w, "accepted difference: %s\n", a)
	}
	for _, o := range v.OneSided {
		fmt.Fprintf(w, "not compared: %s\n", o)
	}
	for _, g := range v.groups() {
		fmt.Fprintf(w, "\n%s\n", g.title)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "figure\tA\tB\tchange\tinterval\t\t")
		for _, c := range g.cells {
			if !v.shown(c) {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\t%s\n", figureLabel(c), value(s, c.Figure, c.Result.MeanA), value(s, c.Figure, c.Result.MeanB),
				pct(c.Result.Change), interval(c.Result), verdictText(c.Result))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return writeRules(w, v, "\n")
}

func writeRules(w io.Writer, v View, lead string) error {
	if len(v.Rules) == 0 {
		return nil
	}
	fmt.Fprint(w, lead)
	for _, r := range v.Rules {
		how := ""
		if r.Cells > 1 {
			how = fmt.Sprintf(", each of its %d levels judged at %.2f%% so that a false failure over all of them is as rare as at one", r.Cells, 100*r.Confidence)
		}
		if len(r.Broken) == 0 {
			fmt.Fprintf(w, "--fail-on %s: held (no detectable change worse than %.1f%%%s)\n", r.Text, 100*r.Limit, how)
			continue
		}
		var where []string
		for _, c := range r.Broken {
			where = append(where, fmt.Sprintf("level %d (%s)", c.LevelIndex+1, pct(c.Result.Change)))
		}
		if _, err := fmt.Fprintf(w, "--fail-on %s: FAILED at %s%s\n", r.Text, strings.Join(format.Distinct(where), ", "), how); err != nil {
			return err
		}
	}
	return nil
}

// Markdown writes the comparison as a Markdown comment: a table per level
// and the rules.
func Markdown(w io.Writer, v View) error {
	s := format.Page
	fmt.Fprintf(w, "### Headroom: %s compared with %s\n\n", mdEscape(v.NameB), mdEscape(v.NameA))
	fmt.Fprintf(w, "Each change is B's mean over the baseline A's, with its %.0f%% confidence interval (Welch's t-test across repetitions).\n", 100*v.Confidence)
	for _, a := range v.Accepted {
		fmt.Fprintf(w, "\n- accepted difference: %s", mdEscape(a))
	}
	for _, o := range v.OneSided {
		fmt.Fprintf(w, "\n- not compared: %s", mdEscape(o))
	}
	fmt.Fprintln(w)
	for _, g := range v.groups() {
		fmt.Fprintf(w, "\n**%s**\n\n| figure | A | B | change | interval | verdict |\n|---|--:|--:|--:|--:|---|\n", mdEscape(g.title))
		for _, c := range g.cells {
			if !v.shown(c) {
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", mdEscape(figureLabel(c)), value(s, c.Figure, c.Result.MeanA), value(s, c.Figure, c.Result.MeanB),
				pct(c.Result.Change), interval(c.Result), mdEscape(verdictText(c.Result)))
		}
	}
	return writeRules(w, v, "\n")
}

// mdEscape keeps a name from breaking a table or starting markup.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", "\n", " ").Replace(s)
}

// Format is the version of the JSON document; it changes only when a
// field changes meaning or goes away.
const Format = 1

type jsonDoc struct {
	Format     int        `json:"format"`
	Kind       string     `json:"kind"` // "comparison"
	A          string     `json:"a"`
	B          string     `json:"b"`
	Confidence float64    `json:"confidence"`
	Model      string     `json:"model"`
	Accepted   []string   `json:"accepted,omitempty"`
	OneSided   []string   `json:"not_compared,omitempty"`
	Cells      []jsonCell `json:"cells"`
	Rules      []jsonRule `json:"rules,omitempty"`
	Failed     bool       `json:"failed"`
}

type jsonCell struct {
	Treatment  string    `json:"treatment,omitempty"`
	TreatmentB string    `json:"treatment_b,omitempty"`
	Level      int       `json:"level"` // 1-based
	LevelA     float64   `json:"offered_a"`
	LevelB     float64   `json:"offered_b"`
	Op         string    `json:"op"`
	Figure     string    `json:"figure"`
	Unit       string    `json:"unit"`
	A          []*number `json:"a"`
	B          []*number `json:"b"`
	MeanA      *number   `json:"mean_a"`
	MeanB      *number   `json:"mean_b"`
	Change     *number   `json:"change"`
	Lo         *number   `json:"lo"`
	Hi         *number   `json:"hi"`
	P          *number   `json:"p"`
	Detectable *number   `json:"detectable"`
	Verdict    string    `json:"verdict"`
	Why        string    `json:"why,omitempty"`
}

type jsonRule struct {
	Rule       string  `json:"rule"`
	Confidence float64 `json:"confidence"`   // the level each cell was judged at
	Broken     []int   `json:"broken_cells"` // indexes into cells
}

// number is a float that is null when undefined.
type number float64

func num(x float64) *number {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	n := number(x)
	return &n
}

func nums(xs []float64) []*number {
	out := make([]*number, len(xs))
	for i, x := range xs {
		out[i] = num(x)
	}
	return out
}

// JSON writes the versioned JSON document (docs/compare.md).
func JSON(w io.Writer, v View) error {
	d := jsonDoc{Format: Format, Kind: "comparison", A: v.NameA, B: v.NameB, Confidence: v.Confidence, Model: v.Model,
		Accepted: v.Accepted, OneSided: v.OneSided, Cells: []jsonCell{}, Failed: v.Failed()}
	for i := range v.Cells {
		c := &v.Cells[i]
		r := c.Result
		d.Cells = append(d.Cells, jsonCell{Treatment: c.Treatment, TreatmentB: c.TreatmentB, Level: c.LevelIndex + 1, LevelA: c.LevelA, LevelB: c.LevelB,
			Op: c.Op, Figure: c.Figure.Name, Unit: c.Figure.Unit, A: nums(c.A), B: nums(c.B), MeanA: num(r.MeanA), MeanB: num(r.MeanB),
			Change: num(r.Change), Lo: num(r.Lo), Hi: num(r.Hi), P: num(r.P), Detectable: num(r.Detectable), Verdict: string(r.Verdict), Why: r.Why})
	}
	for _, r := range v.Rules {
		jr := jsonRule{Rule: r.Text, Confidence: r.Confidence, Broken: []int{}}
		for _, c := range r.Broken {
			for j := range v.Cells {
				if sameCell(v.Cells[j], c) {
					jr.Broken = append(jr.Broken, j)
				}
			}
		}
		d.Rules = append(d.Rules, jr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

func sameCell(a, b compare.Cell) bool {
	return a.Treatment == b.Treatment && a.TreatmentB == b.TreatmentB && a.LevelIndex == b.LevelIndex && a.Op == b.Op && a.Figure.Name == b.Figure.Name
}
