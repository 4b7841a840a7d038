package page

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

func section(t *testing.T, r *Report, id string) Section {
	t.Helper()
	for _, s := range r.Sections {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no section %q", id)
	return Section{}
}

func findChart(t *testing.T, r *Report, id string) *chart.Chart {
	t.Helper()
	for _, s := range r.Sections {
		for _, b := range s.Blocks {
			if b.Chart != nil && b.Chart.ID == id {
				return b.Chart
			}
		}
	}
	t.Fatalf("no chart %q", id)
	return nil
}

func findTable(t *testing.T, r *Report, id string) *Table {
	t.Helper()
	for _, s := range r.Sections {
		for _, b := range s.Blocks {
			if b.Table != nil && b.Table.ID == id {
				return b.Table
			}
		}
	}
	t.Fatalf("no table %q", id)
	return nil
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func buildSynth(t *testing.T) (*Report, string) {
	t.Helper()
	st, dir := synthStore(t)
	return build(t, st), dir
}

// build makes the report of an open store through the results model.
func build(t *testing.T, st *store.Store) *Report {
	t.Helper()
	res, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(res)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestBuildSections(t *testing.T) {
	r, _ := buildSynth(t)
	var ids []string
	for _, s := range r.Sections {
		ids = append(ids, s.ID)
	}
	if got := strings.Join(ids, ","); got != "campaign,runs,load-response,intervals,events" {
		t.Fatalf("sections %s", got)
	}
	if r.Facts.Campaign != "synth" || r.Facts.Seed != 7 || r.Facts.Runs != 7 || r.Facts.Completed != 6 || r.Facts.ToolVersion != "test" {
		t.Errorf("facts %+v", r.Facts)
	}
	if string(r.Facts.Host) != `{"hostname":"lab1","cpus":2,"kernel":"6.1.0","memory_kib":24000000}` {
		t.Errorf("host facts %s", r.Facts.Host)
	}
	camp := section(t, r, "campaign")
	want := "Campaign synth drove open-loop (constant arrivals) load at 3 levels from 100 req/s to 400 req/s against the null target, 2 repetitions each, measuring 10 s per run in 1 s intervals; 6 of 7 runs completed."
	if camp.Summary != want {
		t.Errorf("campaign summary\n got %s\nwant %s", camp.Summary, want)
	}
	host := findTable(t, r, "host")
	if len(host.Rows) != 4 || host.Rows[0][0].Text != "cpus" || *host.Rows[0][1].Value != 2 {
		t.Errorf("host table %+v", host.Rows)
	}
	runs := section(t, r, "runs")
	if runs.Summary != "7 runs: 6 completed, 1 interrupted. Only completed runs enter the load response and the time series; a slot that was resumed counts its last completed run." {
		t.Errorf("runs summary %q", runs.Summary)
	}
	if rows := findTable(t, r, "runs-table").Rows; len(rows) != 7 || rows[6][3].Text != "interrupted" || rows[6][3].Mark != "warn" {
		t.Errorf("runs table last row %+v", rows[len(rows)-1])
	}
}

func TestBuildLoadResponse(t *testing.T) {
	r, _ := buildSynth(t)
	lr := section(t, r, "load-response")
	for _, want := range []string{
		"The SLO p99 ≤ 1ms (all operations) is met up to 200 req/s and first fails at 400 req/s, where 70.00% of offered requests succeeded within 1ms (p99 = 1.50 ms)",
		"Achieved throughput peaks at 400.0 ± 1.0 ok/s at 400 req/s.",
		"The client was not the limit in any run.",
	} {
		if !strings.Contains(lr.Summary, want) {
			t.Errorf("load-response summary lacks %q:\n%s", want, lr.Summary)
		}
	}
	// Throughput: mean of level-1 and level+1 = level, SE = 1.
	tp := findChart(t, r, "throughput-vs-load").Line
	for i, p := range tp.Series[0].Points {
		if p.X != synthLevels[i] || !near(float64(p.Y), synthLevels[i]) || !near(float64(p.Err), 1) {
			t.Errorf("throughput point %d = %+v", i, p)
		}
	}
	if tp.Series[1].Name != "offered" || !tp.Series[1].Dashed {
		t.Errorf("offered series %+v", tp.Series[1])
	}
	lat := findChart(t, r, "latency-vs-load").Line
	if lat.Y.Unit != "µs" || lat.Y.Log {
		t.Errorf("latency axis %+v", lat.Y)
	}
	// p99 at 100 req/s is 500 µs in both repetitions: SE 0. At 400 req/s
	// 30% of requests took 1500 µs, so p50 = 500 and p99 = 1500.
	p50, p99 := lat.Series[0], lat.Series[2]
	if p99.Name != "p99" || float64(p99.Points[0].Y) != 500 || float64(p99.Points[0].Err) != 0 || float64(p99.Points[2].Y) != 1500 || float64(p50.Points[2].Y) != 500 {
		t.Errorf("latency series p50 %+v p99 %+v", p50.Points, p99.Points)
	}
	if len(lat.Rules) != 2 || lat.Rules[0] != (chart.Rule{Axis: "y", Value: 1000, Label: "SLO p99 ≤ 1ms (all operations)"}) || lat.Rules[1].Axis != "x" || lat.Rules[1].Value != 400 {
		t.Errorf("latency rules %+v", lat.Rules)
	}
	lv := findTable(t, r, "levels-latency")
	var verdicts []string
	for _, row := range lv.Rows {
		verdicts = append(verdicts, row[5].Text+"/"+row[5].Mark)
	}
	if strings.Join(verdicts, " ") != "pass/pass pass/pass FAIL/fail" {
		t.Errorf("SLO verdicts %v", verdicts)
	}
	if c := lv.Rows[2][4]; c.Text != "70.00 ± 0.00" || !near(*c.Value, 70) {
		t.Errorf("within cell at 400 req/s %+v", c)
	}
	if c := lv.Rows[2][3]; c.Text != "1.50 ± 0.00 ms" || *c.Value != 1500 {
		t.Errorf("p99 cell at 400 req/s %+v", c)
	}
	if c := findTable(t, r, "levels-table").Rows[0][2]; c.Text != "100.0 ± 1.0" || *c.Value != 100 || *c.SE != 1 {
		t.Errorf("achieved cell at 100 req/s %+v", c)
	}
	// Late and dropped requests only at 400 req/s.
	bars := findChart(t, r, "problems-by-level").Bars
	if got := []string{bars.Series[1].Name, chart.Value(float64(bars.Series[1].Values[2])), chart.Value(float64(bars.Series[2].Values[2])), chart.Value(float64(bars.Series[1].Values[0]))}; strings.Join(got, " ") != "late 7 2 0" {
		t.Errorf("late/dropped bars %v", got)
	}
	cpu := findChart(t, r, "cpu-vs-load").Line
	for i, p := range cpu.Series[0].Points {
		if !near(float64(p.Y), synthLevels[i]/5) {
			t.Errorf("CPU at %g = %g, want %g", p.X, float64(p.Y), synthLevels[i]/5)
		}
	}
	if ops := findTable(t, r, "latency-by-op"); len(ops.Rows) != 9 || ops.Rows[2][1].Text != "all" {
		t.Errorf("latency-by-op rows %d, third op %q", len(ops.Rows), ops.Rows[2][1].Text)
	}
}

func TestBuildIntervals(t *testing.T) {
	r, _ := buildSynth(t)
	iv := section(t, r, "intervals")
	if !strings.Contains(iv.Summary, "6 of 60 measured intervals (10.0%) missed the SLO p99 ≤ 1ms (all operations), at 400 req/s") {
		t.Errorf("intervals summary %q", iv.Summary)
	}
	for li, level := range synthLevels {
		n := string(rune('1' + li))
		tp := findChart(t, r, "level"+n+"-throughput").Line
		if len(tp.Series) != 3 || tp.Series[0].Name != "rep 1" || len(tp.Series[0].Points) != synthIntervals {
			t.Fatalf("level %g throughput series %+v", level, tp.Series)
		}
		for k, p := range tp.Series[0].Points {
			if float64(p.Y) != level || p.X != float64(k) {
				t.Errorf("level %g: interval at %g s has %g ok/s", level, p.X, float64(p.Y))
			}
			if q := tp.Series[1].Points[k]; float64(q.Y) != level+float64(synthWobble[k]) {
				t.Errorf("level %g rep 2: interval at %g s has %g ok/s", level, q.X, float64(q.Y))
			}
		}
		p99 := findChart(t, r, "level"+n+"-p99").Line
		var ranges []string
		for _, rg := range p99.Ranges {
			ranges = append(ranges, chart.Value(rg.From)+"-"+chart.Value(rg.To))
		}
		want := ""
		if level == 400 {
			want = "3-6 3-6"
			if float64(p99.Series[0].Points[4].Y) != 1500 || float64(p99.Series[0].Points[6].Y) != 500 {
				t.Errorf("p99 per interval %+v", p99.Series[0].Points)
			}
		}
		if strings.Join(ranges, " ") != want {
			t.Errorf("level %g SLO ranges %v, want %q", level, ranges, want)
		}
		disk := findChart(t, r, "level"+n+"-disk").Line
		if p := disk.Series[0].Points[0]; float64(p.Y) != 40 || p.X != 0 {
			t.Errorf("disk ops %+v, want 10 reads + 30 writes at 0 s", p)
		}
	}
	// The fault 5 s into 200 req/s repetition 1 is a rule on that level's charts.
	if rules := findChart(t, r, "level2-throughput").Line.Rules; len(rules) != 1 || rules[0] != (chart.Rule{Axis: "x", Value: 5, Label: "fault (rep 1)"}) {
		t.Errorf("event rules %+v", rules)
	}
	if src := findChart(t, r, "interval-throughput").Source; !strings.Contains(src, "(1 partial interval shorter than half an interval, at the end of a run, left out)") {
		t.Errorf("box source %q", src)
	}
	box := findChart(t, r, "interval-throughput").Boxes.Boxes
	if len(box) != 3 || box[0].N != 20 || !near(float64(box[0].P1), 81.9) || !near(float64(box[0].P99), 118.1) || box[2].Mean != 400 {
		t.Errorf("boxes %+v", box)
	}
	if !strings.HasPrefix(iv.Summary, "Per-interval throughput varies most at 100 req/s: from 81.9 to 118.1 ok/s (1st to 99th percentile of its intervals, mean 100).") {
		t.Errorf("intervals summary %q", iv.Summary)
	}
	heat := findChart(t, r, "interval-p99-heatmap").Heat
	if len(heat.Values) != 3 || len(heat.XLabels) != synthIntervals || heat.Values[2][4] != 1500 || heat.Values[0][4] != 500 || heat.Scale.Unit != "µs" {
		t.Errorf("heat map %+v", heat)
	}
}

func TestBuildEvents(t *testing.T) {
	r, _ := buildSynth(t)
	ev := section(t, r, "events")
	if ev.Summary != "3 events: 1 fault, 1 interrupt, 1 populated." {
		t.Errorf("events summary %q", ev.Summary)
	}
	rows := findTable(t, r, "events-table").Rows
	if len(rows) != 3 || rows[0][2].Text != "campaign" || rows[1][2].Text != "3 (200 req/s, rep 1)" || rows[1][1].Text != "28" {
		t.Errorf("event rows %+v", rows)
	}
}

// TestWrite checks the two files: the JSON holds the model exactly (it
// decodes and re-encodes to the same bytes), the HTML draws every chart and
// fetches nothing, text is escaped, and a second build writes the same
// bytes.
func TestWrite(t *testing.T) {
	r, dir := buildSynth(t)
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := WriteJSON(&again, &back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(js, again.Bytes()) {
		t.Error("report.json does not survive a decode and re-encode unchanged")
	}
	// The same number in both files: the 400 req/s throughput SE.
	if !bytes.Contains(js, []byte(`"text": "400.0 ± 1.0",`)) {
		t.Error("report.json lacks the 400 req/s throughput cell")
	}
	page, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	charts := 0
	for _, s := range r.Sections {
		for _, b := range s.Blocks {
			if b.Chart != nil {
				charts++
			}
		}
	}
	if n := strings.Count(html, "<svg "); n != charts || charts < 10 {
		t.Errorf("%d <svg> for %d charts", n, charts)
	}
	if strings.Contains(html, "<script") || strings.Contains(html, `<script>alert`) {
		t.Error("the page holds a script element")
	}
	if !strings.Contains(html, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; more") {
		t.Error("the event detail is not escaped as text")
	}
	links := regexp.MustCompile(`(?:src|href)="([^"#][^"]*)"`).FindAllStringSubmatch(html, -1)
	if len(links) > 0 {
		t.Errorf("the page links outside itself: %v", links)
	}
	if strings.Count(html, "://") != strings.Count(html, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Error("the page names a URL other than the SVG namespace")
	}
	r2, _ := buildSynth(t)
	var h1, h2 bytes.Buffer
	if err := WriteHTML(&h1, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&h2, r2); err != nil {
		t.Fatal(err)
	}
	if h1.String() != html || h1.String() != h2.String() {
		t.Error("two builds of the same store render different pages")
	}
}

func TestValidate(t *testing.T) {
	ok := chart.Chart{ID: "c", Title: "t", Source: "s", Line: &chart.Line{}}
	cases := []struct {
		name string
		r    Report
		want string
	}{
		{"duplicate ID", Report{Sections: []Section{{ID: "a", Title: "A"}, {ID: "b", Title: "B", Blocks: []Block{{Chart: &chart.Chart{ID: "a", Title: "t", Source: "s", Line: &chart.Line{}}}}}}}, `chart ID "a" is already used by a section`},
		{"bad ID", Report{Sections: []Section{{ID: "1x", Title: "A"}}}, `section ID "1x" must start with a letter`},
		{"empty block", Report{Sections: []Section{{ID: "a", Title: "A", Blocks: []Block{{}}}}}, "sets 0 of Table, Chart, Note, Code and Answers"},
		{"two parts", Report{Sections: []Section{{ID: "a", Title: "A", Blocks: []Block{{Chart: &ok, Note: &Note{}}}}}}, "sets 2 of"},
		{"no source", Report{Sections: []Section{{ID: "a", Title: "A", Blocks: []Block{{Table: &Table{ID: "t", Title: "T"}}}}}}, "table t: set both Title and Source"},
		{"short row", Report{Sections: []Section{{ID: "a", Title: "A", Blocks: []Block{{Table: &Table{ID: "t", Title: "T", Source: "s", Columns: []Column{{Title: "x"}}, Rows: [][]Cell{{}}}}}}}}, "row 0 has 0 cells for 1 columns"},
		{"NaN cell", Report{Sections: []Section{{ID: "a", Title: "A", Blocks: []Block{{Table: &Table{ID: "t", Title: "T", Source: "s", Columns: []Column{{Title: "x"}}, Rows: [][]Cell{{{Text: "x", Value: ptr(math.NaN())}}}}}}}}}, "holds NaN"},
		{"no title", Report{Sections: []Section{{ID: "a"}}}, "section a has no title"},
	}
	for _, c := range cases {
		err := c.r.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	good := Report{Sections: []Section{{ID: "a", Title: "A", Blocks: []Block{{Chart: &ok}, {Note: &Note{Level: "info", Text: "n"}}, {Table: &Table{ID: "t", Title: "T", Source: "s", Columns: []Column{{Title: "x"}}, Rows: [][]Cell{{Number("1", 1)}}}}}}}}
	if err := good.Validate(); err != nil {
		t.Errorf("a valid report: %v", err)
	}
	if c := Number("n/a", math.NaN()); c.Value != nil {
		t.Error("Number keeps NaN")
	}
}

func ptr(v float64) *float64 { return &v }

// TestAddSection shows how a later analysis plugs in: a Section value
// appended to a built report appears in both files.
func TestAddSection(t *testing.T) {
	r, dir := buildSynth(t)
	r.Add(Section{ID: "capacity", Title: "Capacity", Summary: "Capacity is 300 req/s.", Blocks: []Block{
		{Table: &Table{ID: "capacity-table", Title: "Probe", Source: "from 1 probe", Columns: []Column{{Title: "rate", Unit: "req/s"}}, Rows: [][]Cell{{Number("300", 300)}}}},
	}})
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{HTMLFile, JSONFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("Capacity is 300 req/s.")) {
			t.Errorf("%s lacks the added section", f)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	r, _ := buildSynth(t)
	err := Write(filepath.Join(t.TempDir(), "missing"), r)
	if err == nil || !strings.Contains(err.Error(), "pass a results directory you can write to") {
		t.Errorf("writing into a missing directory: %v", err)
	}
	r.Add(Section{ID: "campaign", Title: "again"})
	if err := Write(t.TempDir(), r); err == nil || !strings.Contains(err.Error(), `section ID "campaign" is already used`) {
		t.Errorf("duplicate section: %v", err)
	}
}

// An import-only file (no spec, no runs) still gets a report: the facts,
// and sections that say there is nothing to show.
func TestBuildImportOnly(t *testing.T) {
	dir := t.TempDir()
	st := resultstest.Create(t, dir, store.Campaign{Name: "imported", HostJSON: "not json", ToolVersion: "test"})
	r := build(t, st)
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	if r.Facts.Host != nil {
		t.Errorf("host facts from invalid JSON: %s", r.Facts.Host)
	}
	for id, want := range map[string]string{
		"campaign":      "Campaign imported: 0 of 0 runs completed.",
		"runs":          "The results file has no runs.",
		"load-response": "No run completed, so there is no load response to show.",
		"intervals":     "No run completed, so there are no intervals to show.",
		"events":        "No events were recorded.",
	} {
		if got := section(t, r, id).Summary; got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	if n := section(t, r, "campaign").Blocks[0].Note; n == nil || !strings.Contains(n.Text, "made by headroom import") {
		t.Errorf("campaign note %+v", n)
	}
}

// A stored spec that does not even read as YAML leaves the SLO out, says
// why, and takes the load model from the runs.
func TestBuildUnreadableSpec(t *testing.T) {
	dir := t.TempDir()
	st := resultstest.Create(t, dir, store.Campaign{Name: "old", SpecYAML: "name: old\nload: {model: [closed\n", ToolVersion: "0.0.1"})
	addClosedRun(t, st)
	r := build(t, st)
	if n := section(t, r, "campaign").Blocks[0].Note; n == nil || n.Level != "warning" || !strings.Contains(n.Text, "does not read as YAML") {
		t.Errorf("campaign note %+v", n)
	}
	if got := section(t, r, "campaign").Summary; got != "Campaign old: 1 of 1 runs completed." {
		t.Errorf("campaign summary %q", got)
	}
	lr := section(t, r, "load-response")
	if strings.Contains(lr.Summary, "SLO") || !strings.Contains(lr.Summary, "Achieved throughput peaks at 50.0 ok/s at 4 clients.") {
		t.Errorf("load-response summary %q", lr.Summary)
	}
	tp := findChart(t, r, "throughput-vs-load").Line
	if tp.X.Unit != "clients" || len(tp.Series) != 1 {
		t.Errorf("closed-loop throughput chart %+v", tp)
	}
	// One interval of 1 s: the interval length comes from the data.
	if src := findChart(t, r, "interval-throughput").Source; !strings.Contains(src, "1 s intervals") {
		t.Errorf("interval source %q", src)
	}
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
}

// A stored spec that today's parser rejects (a field renamed since, a
// value it no longer knows) is still reported from what it says: the load
// model and the SLO, without a warning. An unknown model gives way to the
// runs' own.
func TestBuildSpecTodaysParserRejects(t *testing.T) {
	dir := t.TempDir()
	text := "name: old\ntarget: {type: sqlite}\nload: {model: sideways, clients: [4], max_inflight: 3}\nslo: {percentile: 99, threshold: 1ms}\n"
	st := resultstest.Create(t, dir, store.Campaign{Name: "old", SpecYAML: text, ToolVersion: "0.0.1"})
	addClosedRun(t, st)
	r := build(t, st)
	for _, b := range section(t, r, "campaign").Blocks {
		if b.Note != nil {
			t.Errorf("campaign note %+v", b.Note)
		}
	}
	lr := section(t, r, "load-response")
	if want := "The SLO p99 ≤ 1ms (all operations) is not met at any level; it first fails at 4 clients"; !strings.HasPrefix(lr.Summary, want) {
		t.Errorf("load-response summary %q, want it to start %q", lr.Summary, want)
	}
	if tp := findChart(t, r, "throughput-vs-load").Line; tp.X.Unit != "clients" {
		t.Errorf("the runs' closed model should set the axis: %+v", tp.X)
	}
}

// addClosedRun adds one completed closed-loop run at 4 clients: 50 reads
// of 2 ms in one 1 s interval.
func addClosedRun(t *testing.T, st *store.Store) {
	t.Helper()
	start := synthT0
	id, err := st.StartRun(store.Run{Model: "closed", Level: 4, Repetition: 1, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	h := store.NewHistogram()
	h.RecordValues(2000, 50)
	if err := st.AddIntervals([]store.Interval{{RunID: id, Phase: "measure", Op: "read", Start: start, Duration: time.Second, Count: 50, Hist: h}}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(id, store.StatusCompleted, "", start.Add(time.Second), store.RunSummary{Completed: 50, MeasureStart: start, MeasureEnd: start.Add(time.Second), MeasureSecs: 1, Throughput: 50}); err != nil {
		t.Fatal(err)
	}
}
