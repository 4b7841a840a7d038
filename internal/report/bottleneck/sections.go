package bottleneck

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	ab "github.com/headroom-dev/headroom/internal/analysis/bottleneck"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
)

// Limits that keep a large campaign's report readable.
const (
	maxStateCharts = 6 // saturation-state charts per treatment (highest levels first)
	maxFColumns    = 8 // resources in the f_R table
	maxRanked      = 12
)

// Sections lays the analysis out as report sections: one per treatment,
// then the maps.
func Sections(a *ab.Analysis) []page.Section {
	var out []page.Section
	for _, t := range a.Treatments {
		out = append(out, treatmentSection(t, len(a.Treatments) > 1 || t.Name != ""))
	}
	if a.Map != nil {
		out = append(out, mapSection(a.Map))
	}
	return out
}

// slug is the part of a treatment's IDs after their kind: "-" and the
// treatment's ID ("Fast.2" -> "-fast-2"), nothing for the campaign.
func slug(name string) string {
	if name == "" {
		return ""
	}
	return "-" + format.ID(name)
}

func treatmentSection(t *ab.Treatment, named bool) page.Section {
	id := slug(t.Name)
	sec := page.Section{ID: "bottlenecks" + id, Title: "Bottlenecks"}
	if named {
		sec.Title += " · " + t.Name
	}
	cfg := t.Config()
	// The summary: the verdict at the highest level, then the sweep's.
	var top *ab.Run
	for _, r := range t.Runs {
		if r.Err == "" && (top == nil || r.Run.Level > top.Run.Level) {
			top = r
		}
	}
	var sum []string
	if top != nil {
		sum = append(sum, fmt.Sprintf("At the highest load (%s, repetition %d): %s.", levelText(t, top.Run.Level), top.Run.Repetition, top.Result.Finding))
	}
	if t.Intervention != nil {
		sum = append(sum, format.Capitalize(t.Intervention.Finding)+".")
	}
	sec.Summary = strings.Join(sum, " ")
	src := fmt.Sprintf("from the monitor's samples inside each completed run's measured window, in %v intervals; saturated = utilisation above %s%%", cfg.Lambda, format.Exact(cfg.Alpha))
	if len(cfg.Hosts) > 0 {
		src += "; hosts " + strings.Join(cfg.Hosts, ", ") + " only"
	}
	sec.Blocks = append(sec.Blocks, page.Block{Table: runsTable(t, id, src)})
	if tb := freqTable(t, id, src); tb != nil {
		sec.Blocks = append(sec.Blocks, page.Block{Table: tb})
	}
	charts, left := stateCharts(t, id, src)
	for _, c := range charts {
		sec.Blocks = append(sec.Blocks, page.Block{Chart: c})
	}
	if left > 0 {
		sec.Blocks = append(sec.Blocks, note("info", fmt.Sprintf("Saturation states are drawn for the %d highest levels with a bottleneck; %d lower level(s) are left out (their runs are in the tables).", len(charts), left)))
	}
	for i, d := range t.Density {
		sec.Blocks = append(sec.Blocks, page.Block{Chart: densityChart(d, fmt.Sprintf("bn-density%s-%d", id, i+1), cfg, levelUnit(t))})
	}
	if t.Intervention != nil {
		sec.Blocks = append(sec.Blocks, page.Block{Table: stepsTable(t, id)}, page.Block{Table: rankedTable(t, id)})
	} else if t.InterventionNote != "" {
		sec.Blocks = append(sec.Blocks, note("info", format.Capitalize(t.InterventionNote)+"."))
	}
	notes := append([]string(nil), t.Notes...)
	for _, r := range t.Runs {
		if r.Err != "" {
			notes = append(notes, fmt.Sprintf("run %d (level %s, repetition %d) could not be classified: %s", r.Run.ID, format.Num(r.Run.Level), r.Run.Repetition, r.Err))
		}
	}
	notes = append(notes, distinctNotes(t)...)
	for _, n := range notes {
		sec.Blocks = append(sec.Blocks, note("info", format.Capitalize(n)+"."))
	}
	return sec
}

// distinctNotes are the classification's notes (resources left out),
// each once.
func distinctNotes(t *ab.Treatment) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range t.Runs {
		for _, n := range r.Result.Notes {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

func runsTable(t *ab.Treatment, id, src string) *page.Table {
	tb := &page.Table{ID: "bn-runs" + id, Title: "Bottleneck of each run", Source: src + "; f_B = share of intervals with a member of the bottleneck saturated",
		Columns: []page.Column{{Title: "level", Unit: levelUnit(t)}, {Title: "repetition"}, {Title: "throughput", Unit: "ok/s"}, {Title: "class"},
			{Title: "primary bottleneck"}, {Title: "f_B"}, {Title: "finding"}}}
	for _, r := range t.Runs {
		row := []page.Cell{page.Number(format.Num(r.Run.Level), r.Run.Level), page.Number(strconv.Itoa(r.Run.Repetition), float64(r.Run.Repetition)),
			page.Number(fmt.Sprintf("%.1f", r.Run.Summary.Throughput), r.Run.Summary.Throughput)}
		if r.Err != "" {
			row = append(row, page.Text("–"), page.Text("–"), page.Text("–"), page.Text("not classified: "+r.Err))
			tb.Rows = append(tb.Rows, row)
			continue
		}
		class, primary, fb := "none", "–", page.Text("–")
		if ps := r.Result.Primary(); len(ps) > 0 {
			var cs, ids []string
			for _, b := range ps {
				cs = append(cs, string(b.Class))
				ids = append(ids, strings.Join(b.Resources, " + "))
			}
			class, primary = strings.Join(format.Distinct(cs), ", "), strings.Join(ids, "; ")
			fb = page.Number(fmt.Sprintf("%.2f", ps[0].F), ps[0].F)
		}
		c := page.Text(class)
		if class != "none" {
			c.Mark = "warn"
		}
		row = append(row, c, page.Text(primary), fb, page.Text(r.Result.Finding))
		tb.Rows = append(tb.Rows, row)
	}
	return tb
}

// freqTable is f_R per run of every resource that was a bottleneck
// resource somewhere in the sweep.
func freqTable(t *ab.Treatment, id, src string) *page.Table {
	res := t.Resources
	if len(res) == 0 {
		return nil
	}
	title := "Saturation frequency f_R of the bottleneck resources"
	if len(res) > maxFColumns {
		res = res[:maxFColumns]
		title += fmt.Sprintf(" (the %d most often saturated)", maxFColumns)
	}
	tb := &page.Table{ID: "bn-freq" + id, Title: title,
		Source:  src + "; f_R = saturated intervals / observed intervals; marked: fully (f_R ≥ full) or partially saturated",
		Columns: []page.Column{{Title: "level", Unit: levelUnit(t)}, {Title: "repetition"}}}
	for _, r := range res {
		tb.Columns = append(tb.Columns, page.Column{Title: r})
	}
	for _, r := range t.Runs {
		row := []page.Cell{page.Number(format.Num(r.Run.Level), r.Run.Level), page.Number(strconv.Itoa(r.Run.Repetition), float64(r.Run.Repetition))}
		by := map[string]ab.ResourceStat{}
		for _, s := range r.Result.Resources {
			by[s.Resource] = s
		}
		for _, id := range res {
			s, ok := by[id]
			if !ok {
				row = append(row, page.Text("–"))
				continue
			}
			c := page.Number(fmt.Sprintf("%.2f", s.F), s.F)
			switch s.Saturation {
			case ab.SaturationFull:
				c.Mark = "fail"
			case ab.SaturationPartial:
				c.Mark = "warn"
			}
			row = append(row, c)
		}
		tb.Rows = append(tb.Rows, row)
	}
	return tb
}

// stateCharts draws, per level with a bottleneck, how often each
// combination of saturated bottleneck resources occurred in each
// repetition (003 Figures 30, 32, 35b). It returns the charts and how many
// levels were left out.
func stateCharts(t *ab.Treatment, id, src string) ([]*chart.Chart, int) {
	byLevel := map[float64][]*ab.Run{}
	var levels []float64
	for _, r := range t.Runs {
		if r.Err == "" && len(r.Result.States) > 0 && !contains(levels, r.Run.Level) {
			levels = append(levels, r.Run.Level)
		}
	}
	for _, r := range t.Runs {
		if r.Err == "" && contains(levels, r.Run.Level) {
			byLevel[r.Run.Level] = append(byLevel[r.Run.Level], r)
		}
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(levels)))
	left := 0
	if len(levels) > maxStateCharts {
		left = len(levels) - maxStateCharts
		levels = levels[:maxStateCharts]
	}
	sort.Float64s(levels)
	var out []*chart.Chart
	for i, l := range levels {
		runs := byLevel[l]
		// Categories: every combination seen at the level, fewest
		// resources first (as the classification orders them).
		var cats []string
		catIdx := map[string]int{}
		type key struct {
			n    int
			name string
		}
		var keys []key
		for _, r := range runs {
			for _, s := range runStates(r) {
				name := stateName(s)
				if _, ok := catIdx[name]; !ok {
					catIdx[name] = -1
					keys = append(keys, key{len(s.Saturated), name})
				}
			}
		}
		sort.Slice(keys, func(a, b int) bool {
			if keys[a].n != keys[b].n {
				return keys[a].n < keys[b].n
			}
			return keys[a].name < keys[b].name
		})
		for j, k := range keys {
			cats = append(cats, k.name)
			catIdx[k.name] = j
		}
		b := &chart.Bars{X: chart.Axis{Label: "saturated together"}, Y: chart.Axis{Label: "share of intervals", Unit: "%", Min: chart.At(0)}, Categories: cats}
		for _, r := range runs {
			s := chart.BarSeries{Name: "repetition " + strconv.Itoa(r.Run.Repetition), Values: make([]chart.Num, len(cats))}
			for j := range s.Values {
				s.Values[j] = 0
			}
			for _, st := range runStates(r) {
				s.Values[catIdx[stateName(st)]] = chart.Num(100 * st.Freq)
			}
			b.Series = append(b.Series, s)
		}
		out = append(out, &chart.Chart{ID: fmt.Sprintf("bn-states%s-%d", id, i+1),
			Title:  "Saturation states at " + levelText(t, l),
			Source: src + "; share of the intervals in which every bottleneck resource of the run was observed", Bars: b})
	}
	return out, left
}

// runStates are a run's saturation states; a run without a bottleneck
// resource was in the state "none" throughout.
func runStates(r *ab.Run) []ab.State {
	if len(r.Result.States) == 0 {
		return []ab.State{{Freq: 1}}
	}
	return r.Result.States
}

func contains(xs []float64, x float64) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// levelUnit is the unit of the treatment's load levels.
// model is the load model of a treatment's runs: "open" or "closed".
func model(t *ab.Treatment) string {
	if len(t.Runs) > 0 {
		return t.Runs[0].Run.Model
	}
	return ""
}

func levelUnit(t *ab.Treatment) string { return format.LoadUnit(model(t)) }

// levelText prints a load level with its unit ("300 req/s").
func levelText(t *ab.Treatment, l float64) string { return format.LoadText(model(t), l) }

func stateName(s ab.State) string {
	if len(s.Saturated) == 0 {
		return "none"
	}
	return strings.Join(s.Saturated, " + ")
}

// densityChart is a utilisation density heat map: utilisation across,
// level up (003 Figures 29, 31, 34).
func densityChart(d ab.DensityMap, id string, cfg ab.Config, unit string) *chart.Chart {
	h := &chart.HeatMap{X: chart.Axis{Label: "utilisation", Unit: "%"}, Y: chart.Axis{Label: "load level", Unit: unit},
		Scale: chart.Axis{Label: "density", Unit: "per %"}}
	for _, u := range d.Util {
		h.XLabels = append(h.XLabels, format.Num(u))
	}
	var ns []string
	for i, l := range d.Levels {
		h.YLabels = append(h.YLabels, format.Num(l))
		row := make([]chart.Num, len(d.Util))
		for j, v := range d.Density[i] {
			row[j] = chart.Num(v)
		}
		h.Values = append(h.Values, row)
		ns = append(ns, strconv.Itoa(d.N[i]))
	}
	return &chart.Chart{ID: id, Title: "Utilisation density of " + d.Resource + " by load level",
		Source: fmt.Sprintf("Gaussian kernel density of the %v-interval utilisations of each level's runs, pooled (n = %s per level), bandwidth h = cbrt(4)·s·n^(-1/3), at least 2 percentage points",
			cfg.Lambda, strings.Join(ns, ", ")),
		Heat: h}
}

func stepsTable(t *ab.Treatment, id string) *page.Table {
	iv := t.Intervention
	tb := &page.Table{ID: "bn-steps" + id, Title: "Search for the intervention point w*",
		Source: fmt.Sprintf("SLO satisfaction S of every run at levels up to w (percentage of offered requests that succeeded within %s); lower bound = mean − %s · sample sd; w* is the first level where it falls below %s%%",
			sloText(t), format.Exact(iv.Config.Z), format.Exact(iv.Config.Floor)),
		Columns: []page.Column{{Title: "w", Unit: levelUnit(t)}, {Title: "runs up to w"}, {Title: "mean S", Unit: "%"}, {Title: "sd", Unit: "%"}, {Title: "lower bound", Unit: "%"}}}
	for _, s := range iv.Steps {
		lb := page.Number(fmt.Sprintf("%.1f", s.Lower), s.Lower)
		if s.BelowThreshold {
			lb.Mark = "fail"
		}
		tb.Rows = append(tb.Rows, []page.Cell{page.Number(format.Num(s.Level), s.Level), page.Number(strconv.Itoa(s.N), float64(s.N)),
			page.Number(fmt.Sprintf("%.1f", s.Mean), s.Mean), page.Number(fmt.Sprintf("%.1f", s.SD), s.SD), lb})
	}
	return tb
}

func sloText(t *ab.Treatment) string {
	s := t.Settings.SLO
	if s == nil {
		return "the threshold"
	}
	return s.Threshold.String()
}

func rankedTable(t *ab.Treatment, id string) *page.Table {
	iv := t.Intervention
	rules := "rule A for utilisations and rule B for other metrics"
	if !iv.Config.StrictRules {
		rules = "rules A and B for every metric"
	}
	tb := &page.Table{ID: "bn-ranked" + id, Title: "Intervention analysis: resources ranked by the change of trend at w*",
		Source: fmt.Sprintf("first differences of each metric's run mean between neighbouring levels, paired by repetition; %s; utilisations never above %s%% left out; R = |mean before w* / mean from w* on|, ranked by |ln R|",
			rules, format.Exact(iv.Config.UtilFilter)),
		Columns: []page.Column{{Title: "rank"}, {Title: "resource"}, {Title: "R"}, {Title: "rule"}, {Title: "metric"}, {Title: "other candidate metrics"}}}
	for i, r := range iv.Resources {
		if i == maxRanked {
			break
		}
		rc := page.Number(rText(r.R), r.R)
		tb.Rows = append(tb.Rows, []page.Cell{page.Number(strconv.Itoa(i+1), float64(i+1)), page.Text(r.Resource), rc, page.Text(string(r.Rule)),
			page.Text(r.Metric), page.Number(strconv.Itoa(len(r.Metrics)-1), float64(len(r.Metrics)-1))})
	}
	if len(tb.Rows) == 0 {
		tb.Rows = append(tb.Rows, []page.Cell{page.Text("–"), page.Text("no metric matched a rule"), page.Text("–"), page.Text("–"), page.Text("–"), page.Text("–")})
	}
	return tb
}

func rText(r float64) string {
	if math.IsInf(r, 1) {
		return "∞"
	}
	return fmt.Sprintf("%.2f", r)
}

// mapSection draws the maximum-throughput map as a heat map and the
// bottleneck map as a grid (003 Figures 4-12).
func mapSection(m *ab.Map) page.Section {
	sec := page.Section{ID: "bottleneck-maps", Title: "Maximum-throughput and bottleneck maps"}
	if m.Err != "" {
		sec.Summary = "No maps: " + m.Err + "."
		return sec
	}
	cm := m.Map
	xl, yl := ab.AxisLabel(m.Axes.X), ab.AxisLabel(m.Axes.Y)
	src := fmt.Sprintf("one treatment per cell (%s = %s, %s = %s); throughput = the highest mean over repetitions of a level's achieved throughput; bottleneck = the primary bottleneck of that level's runs (the most frequent over repetitions)",
		xl, m.Axes.X.Path, yl, m.Axes.Y.Path)
	h := &chart.HeatMap{X: chart.Axis{Label: xl}, Y: chart.Axis{Label: yl}, Scale: chart.Axis{Label: "maximum throughput", Unit: "ok/s"}}
	for _, x := range cm.X {
		h.XLabels = append(h.XLabels, format.Num(x))
	}
	for yi, y := range cm.Y {
		h.YLabels = append(h.YLabels, format.Num(y))
		row := make([]chart.Num, len(cm.X))
		for xi := range cm.X {
			row[xi] = chart.Num(cm.Cells[yi][xi].MaxThroughput)
		}
		h.Values = append(h.Values, row)
	}
	sec.Blocks = append(sec.Blocks, page.Block{Chart: &chart.Chart{ID: "bn-map-throughput", Title: "Maximum throughput by " + yl + " and " + xl, Source: src, Heat: h}})
	tb := &page.Table{ID: "bn-map-bottleneck", Title: "Primary bottleneck by " + yl + " (rows) and " + xl + " (columns)", Source: src,
		Columns: []page.Column{{Title: yl + " \\ " + xl}}}
	for _, x := range cm.X {
		tb.Columns = append(tb.Columns, page.Column{Title: format.Num(x)})
	}
	for yi := len(cm.Y) - 1; yi >= 0; yi-- {
		row := []page.Cell{page.Number(format.Num(cm.Y[yi]), cm.Y[yi])}
		for xi := range cm.X {
			c := cm.Cells[yi][xi]
			if c.Config == "" {
				row = append(row, page.Text("–"))
				continue
			}
			row = append(row, page.Text(fmt.Sprintf("%s (%.0f ok/s, %s)", c.Bottleneck, c.MaxThroughput, m.Treatment[c.Config])))
		}
		tb.Rows = append(tb.Rows, row)
	}
	sec.Blocks = append(sec.Blocks, page.Block{Table: tb})
	sec.Summary = mapSummary(m)
	return sec
}

// mapSummary says where throughput peaks and what limits it there.
func mapSummary(m *ab.Map) string {
	cm := m.Map
	best := ab.MapCell{MaxThroughput: math.NaN()}
	for yi := range cm.Y {
		for xi := range cm.X {
			c := cm.Cells[yi][xi]
			if c.Config != "" && !math.IsNaN(c.MaxThroughput) && (best.Config == "" || c.MaxThroughput > best.MaxThroughput) {
				best = c
			}
		}
	}
	if best.Config == "" {
		return "No configuration completed a run."
	}
	x, y, _ := strings.Cut(best.Config, "/")
	return fmt.Sprintf("Throughput ranges from %.0f to %.0f ok/s over %d configurations; the highest is %s (%s %s, %s %s), limited by %s. Bottlenecks on the map: %s.",
		cm.MinThroughput, cm.MaxThroughput, countCells(cm), m.Treatment[best.Config], ab.AxisLabel(m.Axes.X), x, ab.AxisLabel(m.Axes.Y), y,
		best.Bottleneck, strings.Join(cm.Bottlenecks, ", "))
}

func countCells(cm ab.ConfigMap) int {
	n := 0
	for _, row := range cm.Cells {
		for _, c := range row {
			if c.Config != "" {
				n++
			}
		}
	}
	return n
}

func note(level, text string) page.Block {
	return page.Block{Note: &page.Note{Level: level, Text: text}}
}
