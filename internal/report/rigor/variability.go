package rigor

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
	"github.com/headroom-dev/headroom/internal/analysis/variability"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// VariabilitySections is the report section of seed 001's rigor verdicts
// (seed-digest §2): per instance and level tau, tau_se, theta_mean and mu
// with verdict (a); the cross-instance differences of treatments created
// equal with verdict (b); the valid modelling range (c); and the reset
// policies compared. No section unless some level was repeated or a group
// of equal instances was measured.
func VariabilitySections(r *results.Results) ([]page.Section, error) {
	study, err := variability.FromResults(r)
	if err != nil || study == nil {
		return nil, err
	}
	sec := page.Section{ID: "variability", Title: "Variation: repeatability, equal instances and the valid modelling range"}
	if study.Problem != nil {
		sec.Summary = "The variation analysis could not run with these settings."
		sec.Blocks = append(sec.Blocks, note("warning", capital(study.Problem.Error())))
		return []page.Section{sec}, nil
	}
	res := study.Result
	if !hasVariation(res) {
		return nil, nil
	}
	sec.Summary = variabilitySummary(res)
	for _, n := range study.Notes {
		sec.Blocks = append(sec.Blocks, note("warning", capital(n)))
	}
	sec.Blocks = append(sec.Blocks, variabilityBlocks(res)...)
	return []page.Section{sec}, nil
}

// hasVariation: some level has a tau_se, or equal instances were compared.
func hasVariation(res variability.Result) bool {
	for _, x := range res.Instances {
		for _, r := range x.Levels {
			if r.Tau.N >= 2 {
				return true
			}
		}
	}
	for _, g := range res.Groups {
		if len(g.Instances) > 1 {
			return true
		}
	}
	return false
}

func groupName(names []string) string {
	ls := make([]string, len(names))
	for i, n := range names {
		ls[i] = label(n)
	}
	return strings.Join(ls, " = ")
}

// repeatCounts counts verdict (a) over an instance's levels.
func repeatCounts(x variability.Instance) (pass, fail, unknown int) {
	for _, r := range x.Levels {
		switch r.Repeatable {
		case variability.Pass:
			pass++
		case variability.Fail:
			fail++
		default:
			unknown++
		}
	}
	return
}

// relative says whether the verdicts are judged relative to tau.
func relative(cfg variability.Config) bool { return cfg.Thresholds != variability.Absolute }

// repeatRule is verdict (a)'s rule in words.
func repeatRule(cfg variability.Config) string {
	if relative(cfg) {
		return "tau_se < " + pctText(cfg.RepeatPct) + " of tau"
	}
	return "tau_se < " + ms(us(cfg.RepeatSE))
}

// crossRule is verdict (b)'s rule in words.
func crossRule(cfg variability.Config) string {
	if relative(cfg) {
		return fmt.Sprintf("|Δtau| < %s of tau, by Welch's t", pctText(cfg.CrossPct))
	}
	return "|Δtau| < " + ms(us(cfg.CrossDiff))
}

func pctText(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) + "%" }

// repeatText is verdict (a) of one instance in a sentence.
func repeatText(x variability.Instance, cfg variability.Config) string {
	pass, fail, unknown := repeatCounts(x)
	n := len(x.Levels)
	s := fmt.Sprintf("%s at %d of %d levels", repeatRule(cfg), pass, n)
	var failed []string
	for _, r := range x.Levels {
		if r.Repeatable != variability.Fail {
			continue
		}
		what := ms(r.Tau.SE)
		if relative(cfg) {
			what = fmt.Sprintf("%.1f%%", 100*r.RelSE)
		}
		failed = append(failed, fmt.Sprintf("%s (%s)", format.LoadText(x.Model, r.Level), what))
	}
	if fail > 0 {
		s += "; not at " + strings.Join(failed, ", ")
	}
	if unknown > 0 {
		s += fmt.Sprintf("; undecided at %s (fewer than two repetitions)", format.Plural(unknown, "level"))
	}
	return s
}

func variabilitySummary(res variability.Result) string {
	var parts []string
	for _, g := range res.Groups {
		s := g.Range.Statement
		if len(res.Groups) > 1 || g.Instances[0] != "" {
			s = groupName(g.Instances) + ": " + s
		}
		if g.Range.Reason != "" && g.Range.Valid {
			s += "; the range ends " + g.Range.Reason
		}
		parts = append(parts, format.Sentence(s))
	}
	for _, x := range res.Instances {
		s := "(a) " + repeatText(x, res.Config)
		if x.Name != "" {
			s = "(a) " + x.Name + ": " + repeatText(x, res.Config)
		}
		parts = append(parts, format.Sentence(s))
	}
	if len(res.Groups) == 1 && res.Groups[0].Instances[0] == "" {
		return capital(strings.Join(parts, " "))
	}
	return strings.Join(parts, " ")
}

func variabilityBlocks(res variability.Result) []page.Block {
	cfg := res.Config
	named := len(res.Instances) > 1 || res.Instances[0].Name != ""
	runs := 0
	for _, x := range res.Instances {
		for _, r := range x.Levels {
			runs += r.Reps
		}
	}
	trim := fmt.Sprintf("trimmed by %v at the start and %v at the end (seed 001)", cfg.TrimStart, cfg.TrimEnd)
	if cfg.NoTrim {
		trim = "not trimmed (trim: 0s)"
	}
	hosts := map[string]bool{}
	for _, x := range res.Instances {
		if x.Host != "" {
			hosts[x.Host] = true
		}
	}
	hostNames := make([]string, 0, len(hosts))
	for h := range hosts {
		hostNames = append(hostNames, h)
	}
	sort.Strings(hostNames)
	thetaOf := orText(hostNames, "the target host")
	for _, x := range res.Instances {
		if x.LessClient {
			thetaOf += ", less the load generator's own process where it ran on the same machine"
			break
		}
	}
	src := fmt.Sprintf("from %s; tau = the mean response time of a run's successful requests (all operations), tau_se = its standard error across repetitions; theta = the mean CPU utilisation of %s (never the load generator's) over each run's measured phase, %s, averaged across repetitions",
		format.Plural(runs, "completed run"), thetaOf, trim)
	var blocks []page.Block

	cols := []page.Column{}
	if named {
		cols = append(cols, page.Column{Title: "instance"})
	}
	model := res.Instances[0].Model
	withMu := false
	for _, x := range res.Instances {
		for _, r := range x.Levels {
			withMu = withMu || r.Mu.N > 0
		}
	}
	cols = append(cols, loadColumn(model), page.Column{Title: "reps"}, page.Column{Title: "tau (ms) ± SE", Unit: "µs"},
		page.Column{Title: "tau_se (ms)", Unit: "µs"}, page.Column{Title: "(a) " + repeatRule(cfg)},
		page.Column{Title: "theta_mean (%) ± SE", Unit: "%"})
	if relative(cfg) {
		cols = append(cols, page.Column{Title: "tau_se / tau (%)", Unit: "%"})
	}
	if withMu {
		cols = append(cols, page.Column{Title: "mu = " + page.MuLabel + " (ms) ± SE", Unit: "µs"})
	}
	tbl := &page.Table{ID: "variability-levels", Title: "Per instance and level: tau, tau_se, theta and verdict (a)", Columns: cols,
		Source: src + "; mu = client response time minus the server's execution time, when the server reported it; " + page.MuNote}
	var notes []string
	for _, x := range res.Instances {
		for _, n := range x.Notes {
			notes = append(notes, prefixed(x.Name, n))
		}
		for _, r := range x.Levels {
			var row []page.Cell
			if named {
				row = append(row, page.Text(label(x.Name)))
			}
			tauSE := page.Text("–")
			if r.Tau.N >= 2 {
				tauSE = page.Number(fmt.Sprintf("%.2f", r.Tau.SE/1000), r.Tau.SE)
			}
			verdict := verdictOf(r.Repeatable)
			row = append(row, page.Number(format.Num(r.Level), r.Level), intCell(int64(r.Reps)), seCell(r.Tau, 2, 1000), tauSE, verdict, seCell(r.Theta, 1, 1))
			if relative(cfg) {
				row = append(row, numCell(100*r.RelSE, 1))
			}
			if withMu {
				row = append(row, muCell(r.Mu))
			}
			tbl.Rows = append(tbl.Rows, row)
			for _, n := range r.Notes {
				notes = append(notes, prefixed(x.Name, format.LoadText(x.Model, r.Level)+": "+n))
			}
		}
	}
	blocks = append(blocks, page.Block{Table: tbl})

	var tau, tauSE []chart.Series
	for _, x := range res.Instances {
		a := chart.Series{Name: label(x.Name)}
		b := chart.Series{Name: label(x.Name)}
		for _, r := range x.Levels {
			a.Points = append(a.Points, chart.Point{X: r.Level, Y: chart.Num(r.Tau.Mean / 1000), Err: chart.Num(r.Tau.SE / 1000)})
			switch {
			case r.Tau.N < 2:
			case relative(cfg):
				b.Points = append(b.Points, chart.Point{X: r.Level, Y: chart.Num(100 * r.RelSE)})
			default:
				b.Points = append(b.Points, chart.Point{X: r.Level, Y: chart.Num(r.Tau.SE / 1000)})
			}
		}
		tau, tauSE = append(tau, a), append(tauSE, b)
	}
	seAxis, seRule := chart.Axis{Label: "tau_se", Unit: "ms", Min: chart.At(0)}, chart.Rule{Axis: "y", Value: us(cfg.RepeatSE) / 1000, Label: "repeat_se " + cfg.RepeatSE.String()}
	seTitle, seSource := "Repeatability: tau_se against ", "; the line is the repeat_se threshold of verdict (a)"
	if relative(cfg) {
		seAxis, seRule = chart.Axis{Label: "tau_se / tau", Unit: "%", Min: chart.At(0)}, chart.Rule{Axis: "y", Value: cfg.RepeatPct, Label: "repeat_pct " + pctText(cfg.RepeatPct)}
		seTitle, seSource = "Repeatability: tau_se as a share of tau against ", "; the line is the repeat_pct threshold of verdict (a)"
	}
	blocks = append(blocks,
		page.Block{Chart: &chart.Chart{ID: "variability-tau", Title: "Mean response time tau against " + format.LoadAxis(model).Label, Source: src + "; error bars ± 1 standard error (tau_se)",
			Line: &chart.Line{X: format.LoadAxis(model), Y: chart.Axis{Label: "tau", Unit: "ms", Min: chart.At(0)}, Series: tau}}},
		page.Block{Chart: &chart.Chart{ID: "variability-tau-se", Title: seTitle + format.LoadAxis(model).Label, Source: src + seSource,
			Line: &chart.Line{X: format.LoadAxis(model), Y: seAxis, Series: tauSE, Rules: []chart.Rule{seRule}}}})

	if cross := crossBlocks(res, model, src); cross != nil {
		blocks = append(blocks, cross...)
	}
	rng := &page.Table{ID: "variability-range", Title: "Valid modelling range (c)", Source: src + "; the range ends before the first level at which a (a) or (b) check fails or cannot be decided",
		Columns: []page.Column{{Title: "instances"}, {Title: "valid up to (" + format.LoadUnit(model) + ")", Unit: format.LoadUnit(model)}, {Title: "theta there (%)", Unit: "%"},
			{Title: "ends at (" + format.LoadUnit(model) + ")", Unit: format.LoadUnit(model)}, {Title: "verdict"}}}
	for _, g := range res.Groups {
		rng.Rows = append(rng.Rows, rangeRow(groupName(g.Instances), g.Range))
	}
	blocks = append(blocks, page.Block{Table: rng})
	if len(res.Policies) > 0 {
		blocks = append(blocks, policyBlocks(res, model, src)...)
	}
	for _, n := range format.Distinct(notes) {
		blocks = append(blocks, note("info", n))
	}
	return blocks
}

func rangeRow(name string, r variability.Range) []page.Cell {
	v := verdictCell(format.Sentence(r.Statement), "pass")
	if !r.Valid {
		v.Mark = "fail"
	} else if r.Reason != "" {
		v.Text = format.Sentence(r.Statement + "; it ends " + r.Reason)
	}
	upTo := page.Text("–")
	if r.Valid {
		upTo = page.Number(format.Num(r.Level), r.Level)
	}
	end := page.Text("none")
	if !math.IsNaN(r.End) {
		end = page.Number(format.Num(r.End), r.End)
	}
	return []page.Cell{page.Text(name), upTo, numCell(r.Theta, 0), end, v}
}

// crossBlocks are verdict (b) for the groups with several instances; nil
// when there are none.
func crossBlocks(res variability.Result, model, src string) []page.Block {
	cfg := res.Config
	rule := "max |Δtau| = the largest difference of tau between the group's instances at the level"
	if relative(cfg) {
		rule += fmt.Sprintf("; |Δtau| / tau = it as a share of the smaller tau; Welch p = the two-sided p-value of Welch's t-test on the two instances' repetitions; "+
			"(b) fails when |Δtau| >= %s of tau, passes when Welch's %.0f%% interval of Δtau lies within ±%s of tau (equal within the margin), and is undecided otherwise",
			pctText(cfg.CrossPct), 100*(1-2*cfg.Alpha), pctText(cfg.CrossPct))
	}
	cols := []page.Column{{Title: "instances"}, loadColumn(model), {Title: "measured on"}, {Title: "max |Δtau| (ms)", Unit: "µs"},
		{Title: "between"}, {Title: "(b) " + crossRule(cfg)}}
	if relative(cfg) {
		cols = append(cols, page.Column{Title: "|Δtau| / tau (%)", Unit: "%"}, page.Column{Title: "Welch p"}, page.Column{Title: "why"})
	}
	tbl := &page.Table{ID: "variability-cross", Title: "Instances created equal: cross-instance difference (b)", Source: src + "; " + rule, Columns: cols}
	var series []chart.Series
	for _, g := range res.Groups {
		if len(g.Instances) < 2 {
			continue
		}
		s := chart.Series{Name: groupName(g.Instances)}
		for _, r := range g.Cross {
			v := verdictOf(r.Verdict)
			between := "–"
			if !math.IsNaN(r.MaxDiff) {
				between = label(r.Pair[0]) + " − " + label(r.Pair[1])
			}
			diff := page.Text("–")
			if !math.IsNaN(r.MaxDiff) {
				diff = page.Number(fmt.Sprintf("%.2f", r.MaxDiff/1000), r.MaxDiff)
			}
			row := []page.Cell{page.Text(groupName(g.Instances)), page.Number(format.Num(r.Level), r.Level),
				page.Number(format.Plural(r.Instances, "instance"), float64(r.Instances)), diff, page.Text(between), v}
			y := r.MaxDiff / 1000
			if relative(cfg) {
				p := page.Text("–")
				if r.Tested {
					p = page.Number(pValue(r.Welch.P), r.Welch.P)
				}
				row = append(row, numCell(100*r.Rel, 1), p, page.Text(r.Why))
				y = 100 * r.Rel
			}
			tbl.Rows = append(tbl.Rows, row)
			s.Points = append(s.Points, chart.Point{X: r.Level, Y: chart.Num(y)})
		}
		series = append(series, s)
	}
	if len(series) == 0 {
		return nil
	}
	c := &chart.Chart{ID: "variability-cross-diff", Title: "Instances created equal: max |Δtau| against " + format.LoadAxis(model).Label,
		Source: src + "; the line is the cross_diff threshold of verdict (b)",
		Line: &chart.Line{X: format.LoadAxis(model), Y: chart.Axis{Label: "max |Δtau|", Unit: "ms", Min: chart.At(0)}, Series: series,
			Rules: []chart.Rule{{Axis: "y", Value: us(cfg.CrossDiff) / 1000, Label: "cross_diff " + cfg.CrossDiff.String()}}}}
	if relative(cfg) {
		c.Title = "Instances created equal: max |Δtau| as a share of tau against " + format.LoadAxis(model).Label
		c.Source = src + "; the line is the cross_pct margin of verdict (b)"
		c.Line.Y = chart.Axis{Label: "max |Δtau| / tau", Unit: "%", Min: chart.At(0)}
		c.Line.Rules = []chart.Rule{{Axis: "y", Value: cfg.CrossPct, Label: "cross_pct " + pctText(cfg.CrossPct)}}
	}
	return []page.Block{{Table: tbl}, {Chart: c}}
}

// pValue prints a p-value with two significant digits, small ones as
// "< 0.0001".
func pValue(p float64) string {
	if p < 1e-4 {
		return "< 0.0001"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// policyBlocks compare reset policies (seed-digest §2: the remedy seed 001
// proposes is to restore a snapshot instead of repopulating by script).
func policyBlocks(res variability.Result, model, src string) []page.Block {
	cfg := res.Config
	tbl := &page.Table{ID: "variability-policies", Title: "Reset policies compared: tau_se by level",
		Source:  src + "; each policy's instances are the treatments whose runs used it; mean and largest tau_se over them",
		Columns: []page.Column{{Title: "reset policy"}, {Title: "instances"}, loadColumn(model), {Title: "mean tau_se (ms)", Unit: "µs"}, {Title: "largest tau_se (ms)", Unit: "µs"}}}
	rng := &page.Table{ID: "variability-policy-range", Title: "Reset policies compared: valid modelling range",
		Source:  src + "; each policy's instances are judged as one group, with (a) and (b)",
		Columns: []page.Column{{Title: "reset policy"}, {Title: "valid up to (" + format.LoadUnit(model) + ")", Unit: format.LoadUnit(model)}, {Title: "theta there (%)", Unit: "%"}, {Title: "ends at (" + format.LoadUnit(model) + ")", Unit: format.LoadUnit(model)}, {Title: "verdict"}}}
	var series []chart.Series
	for _, p := range res.Policies {
		s := chart.Series{Name: p.Policy}
		for _, r := range p.Levels {
			mean, most := page.Text("–"), page.Text("–")
			if r.Instances > 0 {
				mean = page.Number(fmt.Sprintf("%.2f", r.TauSE/1000), r.TauSE)
				most = page.Number(fmt.Sprintf("%.2f", r.TauSEMax/1000), r.TauSEMax)
				if !relative(cfg) && r.TauSEMax >= us(cfg.RepeatSE) {
					most.Mark = "fail"
				}
			}
			tbl.Rows = append(tbl.Rows, []page.Cell{page.Text(p.Policy), page.Text(groupName(p.Instances)), page.Number(format.Num(r.Level), r.Level), mean, most})
			s.Points = append(s.Points, chart.Point{X: r.Level, Y: chart.Num(r.TauSE / 1000)})
		}
		series = append(series, s)
		rng.Rows = append(rng.Rows, rangeRow(p.Policy, p.Range))
	}
	c := &chart.Chart{ID: "variability-policy-tau-se", Title: "Reset policies compared: mean tau_se against " + format.LoadAxis(model).Label,
		Source: src + "; the line is the repeat_se threshold",
		Line: &chart.Line{X: format.LoadAxis(model), Y: chart.Axis{Label: "mean tau_se", Unit: "ms", Min: chart.At(0)}, Series: series,
			Rules: []chart.Rule{{Axis: "y", Value: us(cfg.RepeatSE) / 1000, Label: "repeat_se " + cfg.RepeatSE.String()}}}}
	if relative(cfg) {
		// The threshold is a share of each instance's own tau: no one line.
		c.Source, c.Line.Rules = src+"; verdict (a) judges tau_se as a share of tau (see the ranges above)", nil
	}
	return []page.Block{{Table: tbl}, {Table: rng}, {Chart: c}}
}

func prefixed(name, text string) string {
	if name == "" {
		return capital(text)
	}
	return format.Sentence(name + ": " + text)
}

func orText(xs []string, none string) string {
	switch len(xs) {
	case 0:
		return none
	case 1:
		return "host " + xs[0]
	}
	return "hosts " + strings.Join(xs, ", ") + " (each instance its own)"
}

// verdictOf is a check's verdict as a cell, marked pass, fail, or warn
// when it could not be decided.
func verdictOf(v variability.Verdict) page.Cell {
	mark := "warn"
	switch v {
	case variability.Pass:
		mark = "pass"
	case variability.Fail:
		mark = "fail"
	}
	return verdictCell(v.String(), mark)
}

// muCell prints mu ± SE in ms, as the table's other times; a negative mean
// prints as page.MuWithinError.
func muCell(e stats.Estimate) page.Cell {
	if e.N > 0 && e.Mean < 0 {
		return page.Estimate(page.MuWithinError, e.Mean, e.SE)
	}
	return seCell(e, 2, 1000)
}
