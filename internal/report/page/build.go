package page

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/version"
)

// Build reads a results store and makes the report of what it answers
// today: the campaign and its environment, the runs, the load response by
// level, the per-interval time series of every completed run, and the
// events. It reads only the store, so an old or imported file gives the
// same report every time. Targets must be registered (the CLI imports
// them) for the stored spec to parse; without it the report says so and
// leaves the SLO out.
func Build(st *store.Store) (*Report, error) {
	c, err := st.Campaign()
	if err != nil {
		return nil, err
	}
	runs, err := st.Runs()
	if err != nil {
		return nil, err
	}
	set := settingOf(c, runs)
	r := &Report{Format: FormatVersion, Title: "Headroom report: " + c.Name, Generator: version.Version, Facts: factsOf(c, runs)}
	r.Add(campaignSection(r.Facts, c, set))
	probes, err := st.Probes()
	if err != nil {
		return nil, err
	}
	if len(runs) > 0 || len(probes) == 0 {
		// A probe's results directory has windows, not runs: its own
		// section (added by the CLI) reports them.
		r.Add(runsSection(runs, set))
		in, _, err := levels.FromStore(st, set.model, set.slo)
		if err != nil {
			return nil, err
		}
		for _, t := range treatmentsOf(set, runs) {
			ts := set
			if t.spec != nil {
				ts = settingOfSpec(t.spec, set)
			}
			tin := in.Treatment(t.name)
			sum := levels.Summarize(tin)
			lr := loadResponseSection(sum, tin, runs, ts)
			iv, err := intervalsSection(st, tin, sum, ts)
			if err != nil {
				return nil, err
			}
			if t.name != "" {
				lr = forTreatment(lr, t.name)
				iv = forTreatment(iv, t.name)
			}
			r.Add(lr, iv)
		}
	}
	evs, err := st.Events(-1)
	if err != nil {
		return nil, err
	}
	r.Add(eventsSection(evs, runs, set))
	return r, nil
}

// treatment is one treatment of the campaign as the report shows it.
type treatment struct {
	name string     // "" for a campaign without treatments
	spec *spec.Spec // nil when the stored spec is missing or invalid
}

// treatmentsOf lists the campaign's treatments in spec order (those only
// the runs know of after them), or the one unnamed treatment.
func treatmentsOf(set setting, runs []store.Run) []treatment {
	var out []treatment
	seen := map[string]bool{}
	if set.spec != nil {
		for _, t := range set.spec.Treatments {
			out = append(out, treatment{name: t.Name, spec: t.Spec})
			seen[t.Name] = true
		}
	}
	for _, r := range runs {
		if !seen[r.Treatment] {
			seen[r.Treatment] = true
			out = append(out, treatment{name: r.Treatment})
		}
	}
	if len(out) == 0 {
		out = append(out, treatment{})
	}
	return out
}

// settingOfSpec is base with the model and SLO of one treatment's spec.
func settingOfSpec(sp *spec.Spec, base setting) setting {
	s := base
	s.model, s.target, s.interval = sp.Load.Model, sp.Target.Type, sp.Interval.Duration
	s.slo = nil
	if sp.SLO != nil {
		s.slo = &levels.SLO{Percentile: sp.SLO.Percentile, Threshold: sp.SLO.Threshold.Duration, Op: sp.SLO.Operation}
	}
	if f, ok := registry.Lookup(sp.Target.Type); ok {
		s.inProcess = f.InProcess
	}
	return s
}

// forTreatment titles a section after its treatment and makes its IDs
// (and those of its tables and charts) unique in the report.
func forTreatment(sec Section, name string) Section {
	p := "t-" + idSafe(name) + "-"
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

// idSafe maps a treatment name (letters, digits, '.', '_', '-') to ID
// characters.
func idSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r - 'A' + 'a'
		}
		return '-'
	}, s)
}

// setting is what the report needs from the campaign's spec, with the
// runs' own records standing in when the spec is missing or does not parse.
type setting struct {
	model     string // "open" | "closed"
	slo       *levels.SLO
	target    string
	inProcess bool
	interval  time.Duration // 0 when unknown
	spec      *spec.Spec    // nil when missing or invalid
	specErr   error
}

func settingOf(c store.Campaign, runs []store.Run) setting {
	var s setting
	if c.SpecYAML != "" {
		s.spec, s.specErr = spec.Parse(c.SpecFile, []byte(c.SpecYAML))
	}
	if sp := s.spec; sp != nil {
		s.model, s.target, s.interval = sp.Load.Model, sp.Target.Type, sp.Interval.Duration
		if f, ok := registry.Lookup(sp.Target.Type); ok {
			s.inProcess = f.InProcess
		}
		if sp.SLO != nil {
			s.slo = &levels.SLO{Percentile: sp.SLO.Percentile, Threshold: sp.SLO.Threshold.Duration, Op: sp.SLO.Operation}
		}
	} else if len(runs) > 0 {
		s.model = runs[0].Model
	}
	if s.model == "" {
		s.model = "open"
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
	s := fmt.Sprintf("from %s (%s x %s)", plural(n, "completed run"), plural(len(sum.Levels), "level"), reps)
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
		s += ", measured phase of " + seconds(hi)
	default:
		s += ", measured phases of " + seconds(lo) + " to " + seconds(hi)
	}
	if set.interval > 0 {
		s += ", " + seconds(set.interval.Seconds()) + " intervals"
	}
	return s
}

func campaignSection(f Facts, c store.Campaign, set setting) Section {
	sec := Section{ID: "campaign", Title: "Campaign and environment"}
	if sp := set.spec; sp != nil {
		loop := "closed-loop load with"
		if sp.Load.Model == "open" {
			loop = "open-loop (" + sp.Load.Arrival + " arrivals) load at"
		}
		var lv []float64
		if sp.Load.Rates != nil {
			lv = sp.Load.Rates.Values
		} else if sp.Load.Clients != nil {
			lv = sp.Load.Clients.Values
		}
		levelsText := plural(len(lv), "level")
		if len(lv) > 1 {
			levelsText += " from " + set.loadText(lv[0]) + " to " + set.loadText(lv[len(lv)-1])
		} else if len(lv) == 1 {
			levelsText = set.loadText(lv[0])
		}
		sec.Summary = fmt.Sprintf("Campaign %s drove %s %s against the %s target, %s each, measuring %s per run in %s intervals; %d of %d runs completed.",
			c.Name, loop, levelsText, sp.Target.Type, plural(sp.Repetitions, "repetition"),
			seconds(sp.Phases.Measure.Seconds()), seconds(sp.Interval.Seconds()), f.Completed, f.Runs)
	} else {
		sec.Summary = fmt.Sprintf("Campaign %s: %d of %d runs completed.", c.Name, f.Completed, f.Runs)
	}
	if set.specErr != nil {
		sec.Blocks = append(sec.Blocks, Block{Note: &Note{Level: "warning", Text: "The stored spec does not validate with this version of Headroom, so the report uses the runs' own records and has no SLO: " + set.specErr.Error()}})
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
			rows = append(rows, []Cell{Text(strings.ReplaceAll(k, "_", " ")), Number(chart.Value(v), v)})
		case string:
			rows = append(rows, []Cell{Text(strings.ReplaceAll(k, "_", " ")), Text(v)})
		default:
			b, _ := json.Marshal(v)
			rows = append(rows, []Cell{Text(strings.ReplaceAll(k, "_", " ")), Text(string(b))})
		}
	}
	return rows
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
	sec.Summary = fmt.Sprintf("%s: %s.", plural(len(runs), "run"), strings.Join(parts, ", "))
	if count[store.StatusCompleted] < len(runs) {
		sec.Summary += " Only completed runs enter the load response and the time series; a slot that was resumed counts its last completed run."
	}
	if limited > 0 {
		sec.Summary += fmt.Sprintf(" In %s the client itself was the limit.", plural(limited, "run"))
	}
	cols := []Column{{Title: "run"}, {Title: "level (" + set.loadUnit() + ")", Unit: set.loadUnit()}, {Title: "rep"}}
	if treatments {
		cols = append(cols, Column{Title: "treatment"})
	}
	cols = append(cols, Column{Title: "status"}, Column{Title: "measured (s)", Unit: "s"}, Column{Title: "sent"}, Column{Title: "ok"},
		Column{Title: "errors"}, Column{Title: "late"}, Column{Title: "dropped"}, Column{Title: "throughput (ok/s)", Unit: "ok/s"},
		Column{Title: "client CPU (% of a core)", Unit: "% of one core"}, Column{Title: "note"})
	var rows [][]Cell
	for _, r := range runs {
		s := r.Summary
		row := []Cell{Number(fmt.Sprint(r.ID), float64(r.ID)), Number(chart.Value(r.Level), r.Level), Number(fmt.Sprint(r.Repetition), float64(r.Repetition))}
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
		row = append(row, status, Number(chart.Value(s.MeasureSecs), s.MeasureSecs), count64(s.Sent), count64(s.Completed),
			count64(s.Errors), count64(s.Late), count64(s.Dropped), Number(fmt.Sprintf("%.1f", s.Throughput), s.Throughput),
			limitedCell, Text(truncate(note, 200)))
		rows = append(rows, row)
	}
	sec.Blocks = append(sec.Blocks, Block{Table: &Table{ID: "runs-table", Title: "Every run, in the order it ran",
		Source: "from the run table: totals over each run's measured phase", Columns: cols, Rows: rows}})
	return sec
}

func count64(n int64) Cell { return Number(fmt.Sprint(n), float64(n)) }
