// Package sweep renders a campaign's sweeps (seed 001's way of raising the
// load until the target saturates, spec.Sweep): where each sweep stopped
// and why, and the verdict on every level it ran. The verdicts are the
// campaign's, read from the results model; nothing is judged here.
package sweep

import (
	"fmt"
	"strings"

	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// Text says in one sentence where a sweep stopped and why (or that it
// reached its cap, or is unfinished), with the notes a reader needs about
// the level it names (a rule that could not apply).
func Text(sw *results.Sweep) (string, []string) {
	p := sw.Plan
	if stop, ok := sw.Stop(); ok {
		return fmt.Sprintf("saturated at %s (level %d of at most %d, from %s by %s): %s",
			format.LoadText(p.Model, stop.Level), stop.LevelIndex+1, p.Levels, format.Num(p.From), format.Num(p.Step), strings.Join(stop.Reasons, "; ")), stop.Notes
	}
	n := len(sw.Levels)
	switch {
	case n == 0:
		return fmt.Sprintf("no level has been judged yet (from %s by %s, at most %d levels)", format.Num(p.From), format.Num(p.Step), p.Levels), nil
	case n >= p.Levels:
		last := sw.Levels[n-1]
		return fmt.Sprintf("reached its cap at %s without saturating (%d levels from %s by %s)", format.LoadText(p.Model, last.Level), n, format.Num(p.From), format.Num(p.Step)), last.Notes
	}
	last := sw.Levels[n-1]
	return fmt.Sprintf("unfinished: %d of at most %d levels judged, up to %s, none saturated", n, p.Levels, format.LoadText(p.Model, last.Level)), nil
}

// ReportSections is the report's sweep section: one sentence and one table
// of verdicts per sweeping treatment; none when no treatment swept.
func ReportSections(r *results.Results) ([]page.Section, error) {
	sec := page.Section{ID: "sweep", Title: "Sweep: raising the load until the target saturates"}
	var summary []string
	for i, t := range r.Treatments() {
		sw, err := r.Sweep(t.Name)
		if err != nil {
			return nil, err
		}
		if sw == nil {
			continue
		}
		text, notes := Text(sw)
		if t.Name != "" {
			text = t.Name + ": " + text
		}
		summary = append(summary, format.Capitalize(format.Sentence(text)))
		sec.Blocks = append(sec.Blocks, page.Block{Table: table(sw, i, t.Name)})
		for _, n := range notes {
			sec.Blocks = append(sec.Blocks, page.Block{Note: &page.Note{Level: "info", Text: format.Capitalize(format.Sentence(n))}})
		}
	}
	if len(summary) == 0 {
		return nil, nil
	}
	sec.Summary = strings.Join(summary, " ")
	return []page.Section{sec}, nil
}

// table lists the verdict on every level the sweep judged.
func table(sw *results.Sweep, i int, name string) *page.Table {
	p := sw.Plan
	title := "Sweep verdict per level"
	if name != "" {
		title += " · " + name
	}
	rules := []string{}
	if p.CPUPct > 0 {
		of := p.CPUOf
		if of == "" {
			of = "not judged for this target"
		}
		rules = append(rules, fmt.Sprintf("the target's CPU (%s) reaches %s%%", of, format.Num(p.CPUPct)))
	}
	if p.ErrorPct > 0 {
		rules = append(rules, fmt.Sprintf("more than %s%% of requests fail", format.Num(p.ErrorPct)))
	}
	if p.SLO {
		rules = append(rules, "the SLO fails")
	}
	tbl := &page.Table{ID: fmt.Sprintf("sweep-levels-%d", i), Title: title,
		Source: fmt.Sprintf("the campaign's verdict on each level once its runs ended, over all their measured phases; a level saturates when %s", strings.Join(rules, ", or ")),
		Columns: []page.Column{{Title: "level (" + format.LoadUnit(p.Model) + ")", Unit: format.LoadUnit(p.Model)}, {Title: "runs"},
			{Title: "target CPU (%)", Unit: "%"}, {Title: "errors (%)", Unit: "%"}, {Title: "SLO"}, {Title: "verdict"}}}
	for _, v := range sw.Levels {
		cpu := page.Text("-")
		if v.CPU != nil {
			cpu = page.Number(fmt.Sprintf("%.1f", *v.CPU), *v.CPU)
		}
		slo := page.Text("-")
		if v.SLOPass != nil {
			slo = page.Cell{Text: "met", Mark: "pass"}
			if !*v.SLOPass {
				slo = page.Cell{Text: "failed", Mark: "fail"}
			}
		}
		verdict := page.Text("not saturated")
		if v.Saturated {
			verdict = page.Cell{Text: "saturated: " + strings.Join(v.Reasons, "; "), Mark: "fail"}
		}
		tbl.Rows = append(tbl.Rows, []page.Cell{page.Number(format.Num(v.Level), v.Level), page.Number(fmt.Sprint(v.Runs), float64(v.Runs)),
			cpu, page.Number(fmt.Sprintf("%.2f", v.ErrorPct), v.ErrorPct), slo, verdict})
	}
	return tbl
}
