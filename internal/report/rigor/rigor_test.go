package rigor

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// model reads the store as the report does.
func model(t *testing.T, st *store.Store) *results.Results {
	t.Helper()
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// all builds every section of this package, in report order.
func all(t *testing.T, st *store.Store) []page.Section {
	t.Helper()
	return sectionsOf(t, model(t, st))
}

// sectionsOf builds every section of this package from r, in report order.
func sectionsOf(t *testing.T, r *results.Results) []page.Section {
	t.Helper()
	var out []page.Section
	for _, b := range []func(*results.Results) ([]page.Section, error){CapacitySections, VariabilitySections, ScalingSections, ProbeSections} {
		secs, err := b(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, secs...)
	}
	return out
}

func sectionByID(secs []page.Section, id string) *page.Section {
	for i := range secs {
		if secs[i].ID == id {
			return &secs[i]
		}
	}
	return nil
}

// mustSection is the section id of secs; the test ends without it.
func mustSection(t *testing.T, secs []page.Section, id string) *page.Section {
	t.Helper()
	sec := sectionByID(secs, id)
	if sec == nil {
		t.Fatal("no " + id + " section")
	}
	return sec
}

func table(t *testing.T, secs []page.Section, id string) *page.Table {
	t.Helper()
	return found(t, blockByID(secs, id).Table, "table", id)
}

func chartByID(t *testing.T, secs []page.Section, id string) *chart.Chart {
	t.Helper()
	return found(t, blockByID(secs, id).Chart, "chart", id)
}

// blockByID is the block of secs whose table or chart has the ID id (IDs
// are unique in a report), or none.
func blockByID(secs []page.Section, id string) page.Block {
	for _, s := range secs {
		for _, b := range s.Blocks {
			if b.Table != nil && b.Table.ID == id || b.Chart != nil && b.Chart.ID == id {
				return b
			}
		}
	}
	return page.Block{}
}

// found ends the test when there is no kind id.
func found[T any](t *testing.T, v *T, kind, id string) *T {
	t.Helper()
	if v == nil {
		t.Fatalf("no %s %s", kind, id)
	}
	return v
}

// value is the number of a cell (NaN when it has none).
func value(c page.Cell) float64 {
	if c.Value == nil {
		return math.NaN()
	}
	return *c.Value
}

func col(t *testing.T, tb *page.Table, title string) int {
	t.Helper()
	for i, c := range tb.Columns {
		if strings.HasPrefix(c.Title, title) {
			return i
		}
	}
	t.Fatalf("table %s has no column %q", tb.ID, title)
	return -1
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// validates checks the sections as part of a report that page.Write takes.
func validates(t *testing.T, secs []page.Section) {
	t.Helper()
	r := &page.Report{Format: page.FormatVersion, Title: "t"}
	r.Add(secs...)
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := page.WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	if err := page.WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
}

func TestCapacitySectionKneesAndIntervals(t *testing.T) {
	st, _ := variationStore(t)
	secs := all(t, st)
	validates(t, secs)
	sec := mustSection(t, secs, "capacity")
	for _, want := range []string{"inst-a: the knee is at 200 req/s", "the highest throughput that meets the SLO without client limits is 200 ok/s at 200 req/s",
		"first fails at 300 req/s", "inst-b: no knee", "first fails at 200 req/s"} {
		if !strings.Contains(sec.Summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, sec.Summary)
		}
	}
	tb := table(t, secs, "capacity-t1-table")
	find := col(t, tb, "finding")
	if len(tb.Rows) != 3 || tb.Rows[1][find].Text != "knee, capacity" || !strings.Contains(tb.Rows[2][find].Text, "first SLO failure") ||
		!strings.Contains(tb.Rows[2][find].Text, "saturated") {
		t.Errorf("inst-a findings column: %q %q %q", tb.Rows[0][find].Text, tb.Rows[1][find].Text, tb.Rows[2][find].Text)
	}
	short := col(t, tb, "shortfall")
	if !near(value(tb.Rows[2][short]), 20, 1e-9) || tb.Rows[2][short].Mark != "warn" {
		t.Errorf("shortfall at 300: %+v", tb.Rows[2][short])
	}
	// Latency at 100 req/s: taus 10, 11, 12 ms, so SE 1/√3 ms and a 95%
	// interval of ± t(0.975, 2) x SE = 4.303 x 0.5774 = 2.484 ms.
	lat := chartByID(t, secs, "capacity-t1-latency")
	p := lat.Line.Series[0].Points[0]
	if !near(float64(p.Y), 11, 0.02) || !near(float64(p.Err), 2.484, 0.002) || lat.Line.Y.Unit != "ms" {
		t.Errorf("mean latency at 100 req/s: %v ± %v %s, want 11 ± 2.484 ms", p.Y, p.Err, lat.Line.Y.Unit)
	}
	rules := map[string]float64{}
	for _, r := range lat.Line.Rules {
		rules[r.Label] = r.Value
	}
	if rules["knee"] != 200 || rules["first SLO failure"] != 300 || rules["SLO 50ms"] != 50 {
		t.Errorf("latency chart rules %v", rules)
	}
	cpu := chartByID(t, secs, "capacity-t1-cpu")
	if len(cpu.Line.Series) != 2 || cpu.Line.Series[0].Name != "db1" || cpu.Line.Series[1].Name != "machine" {
		t.Errorf("cpu series %+v", cpu.Line.Series)
	}
	// db1's whole-phase mean at 100 req/s: 6 samples at 20% and 4 at 99%.
	if got := float64(cpu.Line.Series[0].Points[0].Y); !near(got, (6*20+4*99)/10.0, 1e-9) {
		t.Errorf("db1 CPU at 100 req/s %v", got)
	}
	chartByID(t, secs, "capacity-compare-throughput")
}

func TestVariabilitySectionVerdicts(t *testing.T) {
	st, _ := variationStore(t)
	secs := all(t, st)
	sec := mustSection(t, secs, "variability")
	if !strings.Contains(sec.Summary, "inst-a = inst-b: measurements are repeatable up to θ = 25% / λ = 100 req/s") ||
		!strings.Contains(sec.Summary, "|tau(inst-b) - tau(inst-a)| = 40.0 ms >= 30.0 ms") {
		t.Errorf("summary:\n%s", sec.Summary)
	}
	tb := table(t, secs, "variability-levels")
	if len(tb.Rows) != 6 {
		t.Fatalf("%d rows", len(tb.Rows))
	}
	se, verdict, theta := col(t, tb, "tau_se"), col(t, tb, "(a)"), col(t, tb, "theta")
	want := []struct {
		se      float64 // µs
		verdict string
		theta   float64
	}{{577.35, "pass", 20}, {1154.7, "pass", 40}, {11547, "fail", 60}, {577.35, "pass", 30}, {1154.7, "pass", 60}, {5773.5, "fail", 90}}
	for i, w := range want {
		r := tb.Rows[i]
		if !near(value(r[se]), w.se, w.se*0.002) || r[verdict].Text != w.verdict || !near(value(r[theta]), w.theta, 1e-9) {
			t.Errorf("row %d: tau_se %v, verdict %s, theta %v; want %v, %s, %v", i, value(r[se]), r[verdict].Text, value(r[theta]), w.se, w.verdict, w.theta)
		}
	}
	cross := table(t, secs, "variability-cross")
	diff, between, b := col(t, cross, "max"), col(t, cross, "between"), col(t, cross, "(b)")
	for i, w := range []struct {
		diff    float64
		verdict string
	}{{1000, "pass"}, {40000, "fail"}, {20000, "pass"}} {
		r := cross.Rows[i]
		if !near(value(r[diff]), w.diff, w.diff*0.002) || r[b].Text != w.verdict {
			t.Errorf("cross row %d: %v %s", i, value(r[diff]), r[b].Text)
		}
	}
	if cross.Rows[1][between].Text != "inst-b − inst-a" {
		t.Errorf("pair %q", cross.Rows[1][between].Text)
	}
	rng := table(t, secs, "variability-range")
	r := rng.Rows[0]
	if r[0].Text != "inst-a = inst-b" || value(r[1]) != 100 || value(r[2]) != 25 || value(r[3]) != 200 || r[4].Mark != "pass" {
		t.Errorf("range row %+v", r)
	}
	tauSE := chartByID(t, secs, "variability-tau-se")
	if len(tauSE.Line.Rules) != 1 || tauSE.Line.Rules[0].Value != 5 {
		t.Errorf("tau_se threshold rule %+v", tauSE.Line.Rules)
	}
	if sectionByID(secs, "scaling") != nil || sectionByID(secs, "probe") != nil {
		t.Error("equal instances and no probe: no scaling or probe section expected")
	}
}

// The headline findings of inst-a. (Its tau_se at 300 req/s prints as
// 11.6 ms, not 11.5: the histogram counts 80 ms as 80.032 ms, the middle of
// its 64 µs bucket, which adds 16 µs to it.)
func TestFindingsOfATreatment(t *testing.T) {
	st, _ := variationStore(t)
	fs, err := Findings(model(t, st), "inst-a")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range fs {
		got[f.Label] = f.Text
	}
	if !strings.Contains(got["Knee"], "200 req/s") || !strings.Contains(got["Capacity"], "200 ok/s at 200 req/s") || !strings.Contains(got["SLO"], "first fails at 300 req/s") ||
		!strings.Contains(got["Repeatable"], "tau_se < 5.0 ms at 2 of 3 levels; not at 300 req/s (11.6 ms)") ||
		!strings.Contains(got["Valid range"], "inst-a = inst-b: measurements are repeatable up to θ = 25% / λ = 100 req/s") {
		t.Errorf("findings %v", got)
	}
	if _, ok := got["Client"]; ok {
		t.Error("no client limit in these runs")
	}
}

func TestScalingFromLabShapes(t *testing.T) {
	st, _ := scalingStore(t)
	secs := all(t, st)
	validates(t, secs)
	mustSection(t, secs, "scaling")
	tb := table(t, secs, "scaling-runs")
	alpha, tput, up, eff, speed, cost := col(t, tb, "α"), col(t, tb, "throughput"), col(t, tb, "scale-up"), col(t, tb, "efficiency"), col(t, tb, "speed-up"), col(t, tb, "cost per ok/s")
	small, medium := tb.Rows[0], tb.Rows[1]
	if small[1].Text != "baseline" || medium[1].Text != "vertical" || value(medium[alpha]) != 2 || value(small[tput]) != 250 || value(medium[tput]) != 400 {
		t.Fatalf("rows %+v\n%+v", small, medium)
	}
	if !near(value(medium[up]), 1.6, 1e-9) || !near(value(medium[eff]), 0.8, 1e-9) || !near(value(medium[speed]), 2, 0.001) ||
		!near(value(small[cost]), 0.09*730/250, 1e-9) || !near(value(medium[cost]), 0.18*730/400, 1e-9) {
		t.Errorf("scale-up %v, efficiency %v, speed-up %v, cost %v %v", value(medium[up]), value(medium[eff]), value(medium[speed]), value(small[cost]), value(medium[cost]))
	}
	pt := table(t, secs, "scaling-probes")
	pup, pcost := col(t, pt, "scale-up"), col(t, pt, "cost per req/s")
	if !near(value(pt.Rows[1][pup]), 2, 1e-9) || !near(value(pt.Rows[0][pcost]), 0.219, 1e-9) || !near(value(pt.Rows[1][pcost]), 0.219, 1e-9) {
		t.Errorf("probe scaling rows %+v", pt.Rows)
	}
}

func TestProbeSection(t *testing.T) {
	st, _ := scalingStore(t)
	secs := all(t, st)
	sec := mustSection(t, secs, "probe")
	if !strings.Contains(sec.Summary, "small: estimate 300 req/s at p90 ≤ 150ms after 8 windows") || !strings.Contains(sec.Summary, "medium: estimate 600 req/s") {
		t.Errorf("summary %s", sec.Summary)
	}
	cmp := table(t, secs, "probe-compare")
	if value(cmp.Rows[0][2]) != 300 || value(cmp.Rows[1][2]) != 600 || cmp.Rows[1][6].Text != "medium" || !near(value(cmp.Rows[0][9]), 0.219, 1e-9) {
		t.Errorf("comparison rows %+v", cmp.Rows)
	}
	rows, err := ProbeComparison(model(t, st))
	if err != nil || len(rows) != 2 || rows[0].Treatment != "small" || rows[1].VCPUs != 1 || !near(rows[1].CostPerReqPerSec, 0.219, 1e-9) {
		t.Errorf("ProbeComparison %+v %v", rows, err)
	}
	surf := chartByID(t, secs, "probe-p1-surface").Heat
	if strings.Join(surf.XLabels, ",") != "100,200,240,280,320,360,400" || len(surf.YLabels) != 8 || surf.YLabels[3] != "p50" || surf.Scale.Unit != "ms" {
		t.Fatalf("surface labels %v %v %s", surf.XLabels, surf.YLabels, surf.Scale.Unit)
	}
	// p50 at 200 req/s: windows with 5 and 15 ms, so their mean 10 ms; at
	// 400 req/s, above the estimate, 50 ms.
	if float64(surf.Values[3][1]) != 10 || float64(surf.Values[3][6]) != 50 || float64(surf.Values[0][0]) != 0.2 {
		t.Errorf("surface p50 row %v, p2 at 100: %v", surf.Values[3], surf.Values[0][0])
	}
	secChart := chartByID(t, secs, "probe-p1-seconds").Line
	if len(secChart.Ranges) != 6 {
		t.Errorf("%d failed seconds shaded, want 6 (3 windows above the estimate x 2 s)", len(secChart.Ranges))
	}
	win := table(t, secs, "probe-p1-windows")
	if len(win.Rows) != 8 || win.Rows[7][12].Mark != "fail" || win.Rows[0][12].Mark != "pass" {
		t.Errorf("window rows %d, verdict marks %q %q", len(win.Rows), win.Rows[0][12].Mark, win.Rows[7][12].Mark)
	}
	fs, err := Findings(model(t, st), "medium")
	if err != nil || len(fs) == 0 || fs[len(fs)-1].Label != "Probe" || !strings.Contains(fs[len(fs)-1].Text, "600 req/s") {
		t.Errorf("findings %+v %v", fs, err)
	}
}

// A store without runs or probes has none of these sections; one whose
// settings name an unknown host says so in the section instead of failing.
func TestSectionsOnlyWithData(t *testing.T) {
	s := newSynth(t, "empty", variationSpec)
	if secs := all(t, s.st); len(secs) != 0 {
		t.Errorf("sections without data: %d", len(secs))
	}
	bad := strings.Replace(variationSpec, "variability: {trim: 2s,", "variability: {trim: 2s, host: nosuch,", 1)
	if bad == variationSpec {
		t.Fatal("the spec edit did not apply")
	}
	st, _ := variationStoreWith(t, bad)
	secs := all(t, st)
	sec := mustSection(t, secs, "variability")
	raw, _ := json.Marshal(sec)
	if !strings.Contains(string(raw), "no CPU sample of nosuch") {
		t.Errorf("a host without samples is not reported:\n%s", raw)
	}
}

// Treatments that reset differently are compared by policy without any
// setting: inst-a keeps reset: none, inst-b restarts its server. Each
// policy has one instance here, so its mean and largest tau_se are that
// instance's (inst-b at 300 req/s: taus 70/80/90 ms, tau_se 5.77 ms), and
// its range is that instance's (a) range: both valid up to 200 req/s.
func TestResetPoliciesCompared(t *testing.T) {
	src := strings.Replace(variationSpec, "set: {target.managed.host: db2}", "set: {target.managed.host: db2, reset: restart}", 1)
	if src == variationSpec {
		t.Fatal("the spec edit did not apply")
	}
	st, _ := variationStoreWith(t, src)
	secs := all(t, st)
	validates(t, secs)
	pol := table(t, secs, "variability-policies")
	if len(pol.Rows) != 6 || pol.Rows[0][0].Text != "none" || pol.Rows[0][1].Text != "inst-a" || pol.Rows[3][0].Text != "restart" {
		t.Fatalf("policy rows %+v", pol.Rows)
	}
	mean, most := col(t, pol, "mean tau_se"), col(t, pol, "largest tau_se")
	if r := pol.Rows[5]; !near(value(r[mean]), 5773.5, 12) || !near(value(r[most]), value(r[mean]), 1e-9) || r[most].Mark != "fail" {
		t.Errorf("restart at 300 req/s: %+v", r)
	}
	rng := table(t, secs, "variability-policy-range")
	for _, r := range rng.Rows {
		if value(r[1]) != 200 || value(r[3]) != 300 {
			t.Errorf("policy range %+v", r)
		}
	}
	chartByID(t, secs, "variability-policy-tau-se")
}

// A later probe of medium that found no estimate (the client was the
// limit) makes medium's throughput unknown in the probe scaling table: no
// scale-up or cost per req/s, rather than a scale-up of 0 from a
// throughput counted as 0.
func TestScalingProbeWithoutEstimate(t *testing.T) {
	st, _ := scalingStore(t)
	ps, err := st.Probes()
	if err != nil || len(ps) == 0 {
		t.Fatalf("probes %v %v", ps, err)
	}
	start := ps[len(ps)-1].Start.Add(time.Minute)
	id, err := st.StartProbe(store.Probe{Start: start, Target: "postgres", ConfigJSON: `{"treatment":"medium","window":"2s","margin":"10ms"}`,
		SLAPercentile: 90, SLAThreshold: 150 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FinishProbe(id, store.Probe{Status: store.StatusCompleted, Stop: "client-limited", Estimate: math.NaN(), LowerBound: 800, ClientLimited: true}); err != nil {
		t.Fatal(err)
	}
	secs := all(t, st)
	validates(t, secs)
	pt := table(t, secs, "scaling-probes")
	tput, up, cost := col(t, pt, "throughput"), col(t, pt, "scale-up"), col(t, pt, "cost per req/s")
	medium := pt.Rows[1]
	if medium[0].Text != "medium" || medium[tput].Text != "–" || medium[up].Text != "–" || medium[cost].Text != "–" {
		t.Errorf("medium row %+v", medium)
	}
	sec := sectionByID(secs, "scaling")
	if !strings.Contains(sec.Summary, "medium (vertical, α = 2) has no throughput estimate") || strings.Contains(sec.Summary, "scale-up of 0") {
		t.Errorf("summary %s", sec.Summary)
	}
}
