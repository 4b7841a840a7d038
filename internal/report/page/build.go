package page

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	ab "github.com/headroom-dev/headroom/internal/analysis/bottleneck"
	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/version"
)

// Build makes the report of what a results model answers today: the
// campaign and its environment, the runs, the load response by level and
// the per-interval time series of every treatment's completed runs, and
// the events. Every setting it shows (load model, levels, SLO, target)
// is a treatment's fact from the model, never the stored spec parsed
// again, so an old or imported file gives the same report every time.
func Build(r *results.Results) (*Report, error) {
	c, runs := r.Campaign(), r.Runs()
	ts := r.Treatments()
	camp := settingOf(ts[0], runs)
	rep := &Report{Format: FormatVersion, Title: "Headroom report: " + c.Name, Generator: version.Version, Facts: factsOf(c, runs)}
	legacy, note := r.Legacy()
	if !legacy {
		note = ""
	}
	rep.Add(campaignSection(rep.Facts, c, ts, note))
	probes, err := r.Probes()
	if err != nil {
		return nil, err
	}
	if len(runs) > 0 || len(probes) == 0 {
		// A probe's results directory has windows, not runs: its own
		// section (added by the CLI) reports them.
		rep.Add(runsSection(runs, camp))
		delays, err := r.ClientDelays()
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			set := settingOf(t, runs)
			in, _, err := levels.FromResults(r, t.Name)
			if err != nil {
				return nil, err
			}
			// levels.FromResults takes the model the treatment was defined
			// with; settingOf falls back to the runs' when that is unknown.
			in.Model = set.model
			sum := levels.Summarize(in)
			lr := loadResponseSection(sum, in, runsOf(runs, t.Name), set, delays)
			iv, err := intervalsSection(r, in, sum, set)
			if err != nil {
				return nil, err
			}
			if t.Name != "" {
				lr = forTreatment(lr, t.Name)
				iv = forTreatment(iv, t.Name)
			}
			rep.Add(lr, iv)
		}
	}
	evs, err := r.Events(-1)
	if err != nil {
		return nil, err
	}
	rep.Add(eventsSection(evs, runs, camp))
	return rep, nil
}

// runsOf returns the runs of one treatment, in ID order.
func runsOf(runs []results.Run, treatment string) []results.Run {
	var out []results.Run
	for _, r := range runs {
		if r.Treatment == treatment {
			out = append(out, r)
		}
	}
	return out
}

// forTreatment titles a section after its treatment and makes its IDs
// (and those of its tables and charts) unique in the report.
func forTreatment(sec Section, name string) Section {
	p := "t-" + format.ID(name) + "-"
	sec.ID = p + sec.ID
	sec.Title += " · treatment " + name
	blocks := make([]Block, len(sec.Blocks))
	for i, b := range sec.Blocks {
		if b.Table != nil {
			t := *b.Table
			if t.ID != "" {
				t.ID = p + t.ID
			}
			b.Table = &t
		}
		if b.Chart != nil {
			c := *b.Chart
			if c.ID != "" {
				c.ID = p + c.ID
			}
			b.Chart = &c
		}
		blocks[i] = b
	}
	sec.Blocks = blocks
	return sec
}

// setting is what the report needs of one treatment's facts.
type setting struct {
	model     string // "open" | "closed"
	slo       *levels.SLO
	inProcess bool
	interval  time.Duration // 0 when unknown
	// classify is how the bottleneck analysis classifies the treatment's
	// runs (its analysis.bottleneck settings).
	classify ab.Config
}

// settingOf is the setting of treatment t. Its load model is the one it
// was defined with, or, when that is unknown (a store whose spec could not
// be read), the model its runs record.
func settingOf(t results.Treatment, runs []results.Run) setting {
	s := setting{model: t.Load.Model, inProcess: t.Target.InProcess, interval: t.Load.Interval, classify: ab.SettingsOf(t).Classify}
	if s.model != "open" && s.model != "closed" {
		s.model = "open"
		for _, r := range runs {
			if r.Treatment == t.Name && r.Model != "" {
				s.model = r.Model
				break
			}
		}
	}
	if t.SLO != nil {
		s.slo = &levels.SLO{Percentile: t.SLO.Percentile, Threshold: t.SLO.Threshold, Op: t.SLO.Op}
	}
	return s
}

func factsOf(c store.Campaign, runs []store.Run) Facts {
	f := Facts{Campaign: c.Name, SpecFile: c.SpecFile, Spec: c.SpecYAML, Seed: c.Seed, Created: c.CreatedAt,
		ToolVersion: c.ToolVersion, Runs: len(runs)}
	if json.Valid([]byte(c.HostJSON)) && strings.HasPrefix(strings.TrimSpace(c.HostJSON), "{") {
		f.Host = json.RawMessage(c.HostJSON)
	}
	for _, r := range runs {
		if r.Status == store.StatusCompleted {
			f.Completed++
		}
	}
	return f
}

// measuredSource says what per-run numbers are computed from: how many
// completed runs at how many levels and repetitions, the measured phase's
// length and the interval.
func measuredSource(sum levels.Summary, runs []store.Run, set setting) string {
	n, minReps, maxReps := 0, math.MaxInt, 0
	for _, l := range sum.Levels {
		n += l.Reps
		minReps, maxReps = min(minReps, l.Reps), max(maxReps, l.Reps)
	}
	reps := fmt.Sprintf("%d repetitions", maxReps)
	if maxReps == 1 {
		reps = "1 repetition"
	}
	if minReps != maxReps {
		reps = fmt.Sprintf("%d to %d repetitions", minReps, maxReps)
	}
	s := fmt.Sprintf("from %s (%s x %s)", format.Plural(n, "completed run"), format.Plural(len(sum.Levels), "level"), reps)
	lo, hi := math.Inf(1), 0.0
	for _, r := range runs {
		if r.Status == store.StatusCompleted && r.Summary.MeasureSecs > 0 {
			secs := math.Round(r.Summary.MeasureSecs*10) / 10
			lo, hi = math.Min(lo, secs), math.Max(hi, secs)
		}
	}
	switch {
	case hi == 0:
	case lo == hi:
		s += ", measured phase of " + format.Seconds(hi)
	default:
		s += ", measured phases of " + format.Seconds(lo) + " to " + format.Seconds(hi)
	}
	if set.interval > 0 {
		s += ", " + format.Seconds(set.interval.Seconds()) + " intervals"
	}
	return s
}

func campaignSection(f Facts, c results.CampaignRow, ts []results.Treatment, legacyNote string) Section {
	sec := Section{ID: "campaign", Title: "Campaign and environment", Summary: campaignSummary(f, c, ts)}
	if legacyNote != "" && c.SpecYAML != "" {
		sec.Blocks = append(sec.Blocks, Block{Note: &Note{Level: "warning", Text: "Not every setting could be read from the stored spec, so the report uses the runs' own records where it has to: " + legacyNote}})
	}
	if c.SpecYAML == "" {
		sec.Blocks = append(sec.Blocks, Block{Note: &Note{Level: "info", Text: "This results file holds no spec: it was made by headroom import and has resource data only."}})
	}
	created := "–"
	if !f.Created.IsZero() {
		created = f.Created.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	rows := [][]Cell{
		{Text("campaign"), Text(f.Campaign)},
		{Text("spec file"), Text(f.SpecFile)},
		{Text("seed"), Number(fmt.Sprint(f.Seed), float64(f.Seed))},
		{Text("started"), Text(created)},
		{Text("measured with"), Text("Headroom " + f.ToolVersion)},
		{Text("report written by"), Text("Headroom " + version.Version)},
		{Text("runs"), Number(fmt.Sprintf("%d (%d completed)", f.Runs, f.Completed), float64(f.Runs))},
	}
	sec.Blocks = append(sec.Blocks, Block{Table: &Table{ID: "facts", Title: "Campaign", Source: "from the campaign row and run table of the results database",
		Columns: []Column{{Title: "fact"}, {Title: "value"}}, Rows: rows}})
	if host := hostRows(f.Host); len(host) > 0 {
		sec.Blocks = append(sec.Blocks, Block{Table: &Table{ID: "host", Title: "Measuring host", Source: "host facts recorded when the campaign started",
			Columns: []Column{{Title: "fact"}, {Title: "value"}}, Rows: host}})
	}
	if c.SpecYAML != "" {
		sec.Blocks = append(sec.Blocks, Block{Code: &Code{Title: "Spec as run (" + f.SpecFile + ")", Text: c.SpecYAML}})
	}
	return sec
}

// campaignSummary says what the campaign drove, from its treatments'
// facts: the load, levels, target, repetitions and phases when every
// treatment shares them, else that they differ.
func campaignSummary(f Facts, c results.CampaignRow, ts []results.Treatment) string {
	t := ts[0]
	// A probe's store has treatments but no planned runs: it drove no levels.
	if t.Target.Type == "" || len(t.Load.Levels) == 0 || f.Runs == 0 {
		return fmt.Sprintf("Campaign %s: %d of %d runs completed.", c.Name, f.Completed, f.Runs)
	}
	for _, o := range ts[1:] {
		if !sameRun(t, o) {
			names := make([]string, len(ts))
			for i, x := range ts {
				names[i] = x.Name
			}
			return fmt.Sprintf("Campaign %s ran %s (%s) whose load, levels, phases or target differ; each treatment's load response says what it ran; %d of %d runs completed.",
				c.Name, format.Plural(len(ts), "treatment"), strings.Join(names, ", "), f.Completed, f.Runs)
		}
	}
	set := setting{model: t.Load.Model}
	loop := "closed-loop load with"
	if t.Load.Open() {
		loop = "open-loop (" + t.Load.Arrival + " arrivals) load at"
	}
	lv := t.Load.Levels
	levelsText := format.Plural(len(lv), "level")
	if len(lv) > 1 {
		levelsText += " from " + format.LoadText(set.model, lv[0]) + " to " + format.LoadText(set.model, lv[len(lv)-1])
	} else if len(lv) == 1 {
		levelsText = format.LoadText(set.model, lv[0])
	}
	out := fmt.Sprintf("Campaign %s drove %s %s against the %s target, %s each, measuring %s per run in %s intervals; %d of %d runs completed.",
		c.Name, loop, levelsText, t.Target.Type, format.Plural(t.Load.Repetitions, "repetition"),
		format.Seconds(t.Load.Measure.Seconds()), format.Seconds(t.Load.Interval.Seconds()), f.Completed, f.Runs)
	if r := t.Load.Relative; r != nil && len(ts) == 1 {
		// Levels relative to a probe (spec relative_to: probe).
		text := r.Text()
		out += " " + strings.ToUpper(text[:1]) + text[1:] + "."
	}
	return out
}

// sameRun reports whether two treatments share what the campaign summary
// says of them.
func sameRun(a, b results.Treatment) bool {
	return a.Load.Model == b.Load.Model && a.Load.Arrival == b.Load.Arrival && slices.Equal(a.Load.Levels, b.Load.Levels) &&
		a.Load.Repetitions == b.Load.Repetitions && a.Load.Measure == b.Load.Measure && a.Load.Interval == b.Load.Interval &&
		a.Target.Type == b.Target.Type
}

// hostRows lists the host facts in key order; numbers keep their value.
func hostRows(raw json.RawMessage) [][]Cell {
	if raw == nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var rows [][]Cell
	for _, k := range keys {
		switch v := m[k].(type) {
		case float64:
			rows = append(rows, []Cell{Text(strings.ReplaceAll(k, "_", " ")), Number(format.Num(v), v)})
		case string:
			rows = append(rows, []Cell{Text(strings.ReplaceAll(k, "_", " ")), Text(v)})
		default:
			b, _ := json.Marshal(v)
			rows = append(rows, []Cell{Text(strings.ReplaceAll(k, "_", " ")), Text(string(b))})
		}
	}
	return rows
}

// cpuTitle names the runs table's CPU column: an in-process target's CPU is
// part of the client process's.
func cpuTitle(set setting) string {
	if set.inProcess {
		return "client process CPU, engine + in-process target (% of a core)"
	}
	return "client CPU (% of a core)"
}

func runsSection(runs []store.Run, set setting) Section {
	sec := Section{ID: "runs", Title: "Runs"}
	count := map[string]int{}
	limited := 0
	treatments := false
	for _, r := range runs {
		count[r.Status]++
		if r.Summary.ClientLimited {
			limited++
		}
		treatments = treatments || r.Treatment != ""
	}
	var parts []string
	for _, st := range []string{store.StatusCompleted, store.StatusInterrupted, store.StatusFailed, store.StatusRunning} {
		if count[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[st], st))
		}
	}
	if len(runs) == 0 {
		sec.Summary = "The results file has no runs."
		return sec
	}
	sec.Summary = fmt.Sprintf("%s: %s.", format.Plural(len(runs), "run"), strings.Join(parts, ", "))
	if count[store.StatusCompleted] < len(runs) {
		sec.Summary += " Only completed runs enter the load response and the time series; a slot that was resumed counts its last completed run."
	}
	if limited > 0 {
		sec.Summary += fmt.Sprintf(" In %s the client itself was the limit.", format.Plural(limited, "run"))
	}
	cols := []Column{{Title: "run"}, {Title: "level (" + format.LoadUnit(set.model) + ")", Unit: format.LoadUnit(set.model)}, {Title: "rep"}}
	if treatments {
		cols = append(cols, Column{Title: "treatment"})
	}
	cols = append(cols, Column{Title: "status"}, Column{Title: "measured (s)", Unit: "s"}, Column{Title: "sent"}, Column{Title: "ok"},
		Column{Title: "errors"}, Column{Title: "late"}, Column{Title: "dropped"}, Column{Title: "throughput (ok/s)", Unit: "ok/s"},
		Column{Title: cpuTitle(set), Unit: "% of one core"}, Column{Title: "note"})
	var rows [][]Cell
	for _, r := range runs {
		s := r.Summary
		row := []Cell{Number(fmt.Sprint(r.ID), float64(r.ID)), Number(format.Num(r.Level), r.Level), Number(fmt.Sprint(r.Repetition), float64(r.Repetition))}
		if treatments {
			row = append(row, Text(r.Treatment))
		}
		status := Text(r.Status)
		if r.Status != store.StatusCompleted {
			status.Mark = "warn"
		}
		note := r.Message
		if s.ClientNote != "" {
			note = strings.TrimSpace(note + " " + s.ClientNote)
		}
		limitedCell := Number(fmt.Sprintf("%.0f%%", s.ClientCPU), s.ClientCPU)
		if s.ClientLimited {
			limitedCell.Mark = "warn"
		}
		row = append(row, status, Number(format.Num(s.MeasureSecs), s.MeasureSecs), count64(s.Sent), count64(s.Completed),
			count64(s.Errors), count64(s.Late), count64(s.Dropped), Number(fmt.Sprintf("%.1f", s.Throughput), s.Throughput),
			limitedCell, Text(format.Truncate(note, 200)))
		rows = append(rows, row)
	}
	sec.Blocks = append(sec.Blocks, Block{Table: &Table{ID: "runs-table", Title: "Every run, in the order it ran",
		Source: "from the run table: totals over each run's measured phase", Columns: cols, Rows: rows}})
	return sec
}

func count64(n int64) Cell { return Number(fmt.Sprint(n), float64(n)) }
