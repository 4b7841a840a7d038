package page

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/report/answer"
	"github.com/headroom-dev/headroom/internal/report/browsertest"
	"github.com/headroom-dev/headroom/internal/results"
)

// The browser check opens report.html in headless Chromium (through
// internal/report/browsertest) and fails on any script exception, console
// or log error, or request that leaves the file; then it asks the rendered
// DOM whether every chart is there and laid out, and saves screenshots.

// domCheck reports, from the rendered page, the charts and how they were
// laid out.
const domCheck = `(() => {
  const svgs = [...document.querySelectorAll('figure.chart > svg')];
  return JSON.stringify({
    sections: [...document.querySelectorAll('main > section')].map(s => s.id),
    charts: svgs.map(s => s.closest('figure').id),
    drawn: svgs.filter(s => { const r = s.getBoundingClientRect(); return r.width > 300 && r.height > 150; }).length,
    labelled: svgs.filter(s => s.getAttribute('role') === 'img' && (s.querySelector('title') || {}).textContent).length,
    marks: svgs.filter(s => s.querySelectorAll('path, rect, circle').length > 0).length,
    textShown: svgs.filter(s => [...s.querySelectorAll('text')].some(x => x.getBBox().width > 0)).length,
    tables: document.querySelectorAll('figure.table table').length,
    height: document.documentElement.scrollHeight,
    width: document.documentElement.scrollWidth,
    resources: performance.getEntriesByType('resource').length,
  });
})()`

func TestBrowserRendersReport(t *testing.T) {
	b := browsertest.Start(t)
	r, dir := buildSynth(t)
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	shotDir, kept := browsertest.ScreenshotDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// First, the check must see problems where there are some, or a clean
	// result below would prove nothing.
	bad := filepath.Join(dir, "bad.html")
	if err := os.WriteFile(bad, []byte(`<!doctype html><title>bad</title><script>console.error("logged"); throw new Error("thrown")</script>`), 0o644); err != nil {
		t.Fatal(err)
	}
	load := b.Open(ctx, t, "file://"+bad, `JSON.stringify({})`, nil, 1000)
	if got := strings.Join(load.Problems, "\n"); !strings.Contains(got, "console error") || !strings.Contains(got, "exception") {
		t.Fatalf("the check missed a console error or an exception on a broken page; it saw:\n%s", got)
	}

	var wantCharts []string
	for _, s := range r.Sections {
		for _, bl := range s.Blocks {
			if bl.Chart != nil {
				wantCharts = append(wantCharts, bl.Chart.ID)
			}
		}
	}
	top, full := filepath.Join(shotDir, "report-top.png"), filepath.Join(shotDir, "report-full.png")
	const width = 1100
	// The full page is measured first so that the screenshot covers all of it.
	load = b.Open(ctx, t, "file://"+filepath.Join(dir, HTMLFile), domCheck, nil, width)
	var dom struct {
		Sections, Charts                                                    []string
		Drawn, Labelled, Marks, TextShown, Tables, Height, Width, Resources int
	}
	if err := json.Unmarshal(load.DOM, &dom); err != nil {
		t.Fatalf("DOM check: %v (%s)", err, load.DOM)
	}
	if len(load.Problems) > 0 {
		t.Errorf("the report caused %d problem(s) in the browser:\n%s", len(load.Problems), strings.Join(load.Problems, "\n"))
	}
	if strings.Join(dom.Sections, ",") != "campaign,runs,load-response,intervals,events" {
		t.Errorf("sections in the DOM: %v", dom.Sections)
	}
	if strings.Join(dom.Charts, ",") != strings.Join(wantCharts, ",") {
		t.Errorf("charts in the DOM %v, want %v", dom.Charts, wantCharts)
	}
	n := len(wantCharts)
	if dom.Drawn != n || dom.Labelled != n || dom.Marks != n || dom.TextShown != n {
		t.Errorf("of %d charts: %d laid out at a readable size, %d labelled, %d with marks, %d with visible text", n, dom.Drawn, dom.Labelled, dom.Marks, dom.TextShown)
	}
	if dom.Tables < 6 || dom.Resources != 0 || dom.Width > width {
		t.Errorf("%d tables, %d resources loaded, page %d px wide in a %d px window", dom.Tables, dom.Resources, dom.Width, width)
	}
	height := float64(min(dom.Height, 16000))
	shots := []browsertest.Shot{{Path: top, Y: 0, Height: 2200}, {Path: full, Y: 0, Height: height}}
	if kept {
		// Readable slices of the whole page, for a person to look at.
		shots = append(shots, browsertest.Slices(shotDir, "report", 0, height)...)
	}
	load = b.Open(ctx, t, "file://"+filepath.Join(dir, HTMLFile), `JSON.stringify({})`, shots, width)
	if len(load.Problems) > 0 {
		t.Errorf("problems on the second load: %v", load.Problems)
	}
	for _, p := range []string{top, full} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		// A blank 1100 px wide PNG compresses to a few kB; charts and
		// text take far more.
		if fi.Size() < 50_000 {
			t.Errorf("screenshot %s is only %d bytes", p, fi.Size())
		}
		t.Logf("screenshot %s (%d bytes)", p, fi.Size())
	}
}

// At a 1400 px window and at a phone's width, the report (answer card
// first, a table as wide as the pressure section's recommendations) keeps
// every element inside the page: wide tables scroll inside their section,
// and the card's links lead to sections of the page.
func TestBrowserLayoutFitsTheWindow(t *testing.T) {
	b := browsertest.Start(t)
	st, dir := synthStore(t)
	res, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(res)
	if err != nil {
		t.Fatal(err)
	}
	wide := &Table{ID: "wide-table", Title: "Findings with their evidence", Source: "a table as wide as the pressure section's recommendations"}
	for _, c := range []string{"treatment", "class", "host", "service", "quality", "mean SLP", "p99 SLP", "TCPT > 95% (% of time)", "MCPT > 70%", "covered", "finding", "suggested change"} {
		wide.Columns = append(wide.Columns, Column{Title: c})
	}
	row := []Cell{Text("piops-300"), Text("provision_more"), Text("db1"), Text("volume:data"), Text("ops_per_s"), Number("99.1%", 99.1), Number("103.4%", 103.4),
		Number("97.0%", 97), Number("28 s", 28), Number("30 s", 30),
		Text("db1 volume:data ops_per_s is under persistent pressure: SLP above 95% for 97% of the 30 s covered (mean 99%, p99 103%)"),
		Text("raise the provisioned IOPS of db1's volume data from 300 to 1800 (+$195.00 per volume-month at $0.13 per IOPS-month); verify it with a treatment that sets the volume's iops: 1800; headroom assess --verify does")}
	wide.Rows = [][]Cell{row, row}
	rep.Add(Section{ID: "wide", Title: "A wide table", Summary: "Twelve columns.", Blocks: []Block{{Table: wide}}})
	card, err := answer.Build(res)
	if err != nil {
		t.Fatal(err)
	}
	rep.PutAnswer(card)
	if err := Write(dir, rep); err != nil {
		t.Fatal(err)
	}
	shotDir, _ := browsertest.ScreenshotDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for _, width := range []int{1400, 420} {
		load := b.Open(ctx, t, "file://"+filepath.Join(dir, HTMLFile), browsertest.LayoutCheck,
			[]browsertest.Shot{{Path: filepath.Join(shotDir, fmt.Sprintf("layout-%d.png", width)), Y: 0, Height: 1600}}, width)
		if len(load.Problems) > 0 {
			t.Errorf("%d px: problems %v", width, load.Problems)
		}
		l := browsertest.CheckLayout(t, load, AnswerSectionID)
		if len(l.Links) < 1 || l.NavFirst != "Answers" {
			t.Errorf("%d px: answer card links %v, first entry of the contents %q", width, l.Links, l.NavFirst)
		}
		if width < 600 && !slices.Contains(l.Scrolling, "wide-table") {
			t.Errorf("%d px: the wide table does not scroll inside its section (scrolling: %v)", width, l.Scrolling)
		}
		t.Logf("%d px: page %d px, tables scrolling in their section: %v", width, l.Page, l.Scrolling)
	}
}
