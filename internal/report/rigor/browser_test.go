package rigor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/report/browsertest"
	"github.com/headroom-dev/headroom/internal/report/page"
)

// The browser check of this package's sections, the same as
// internal/report/page's and through the same driver
// (internal/report/browsertest): headless Chromium must report no
// exception, console error, error log entry or request that leaves the
// file; then the rendered DOM must hold every chart of these sections at a
// readable size with marks and text, and a screenshot of them is saved.

// sectionsCheck reports, from the rendered page, the charts of the given
// sections and how they were drawn, and where the first one starts.
const sectionsCheck = `((ids) => {
  const secs = ids.map(id => document.getElementById(id)).filter(s => s);
  const svgs = secs.flatMap(s => [...s.querySelectorAll('figure.chart > svg')]);
  return JSON.stringify({
    sections: secs.map(s => s.id),
    charts: svgs.map(s => s.closest('figure').id),
    drawn: svgs.filter(s => { const r = s.getBoundingClientRect(); return r.width > 300 && r.height > 150; }).length,
    marks: svgs.filter(s => s.querySelectorAll('path, rect, circle').length > 0).length,
    textShown: svgs.filter(s => [...s.querySelectorAll('text')].some(x => x.getBBox().width > 0)).length,
    tables: secs.flatMap(s => [...s.querySelectorAll('figure.table table')]).length,
    top: secs.length ? secs[0].getBoundingClientRect().top + window.scrollY : 0,
    height: document.documentElement.scrollHeight,
    width: document.documentElement.scrollWidth,
  });
})(%s)`

func TestBrowserRendersRigorSections(t *testing.T) {
	b := browsertest.Start(t)
	st, dir := scalingStore(t)
	r, err := page.Build(model(t, st))
	if err != nil {
		t.Fatal(err)
	}
	secs := all(t, st)
	r.Add(secs...)
	if err := page.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	var ids, want []string
	for _, s := range secs {
		ids = append(ids, s.ID)
		for _, bl := range s.Blocks {
			if bl.Chart != nil {
				want = append(want, bl.Chart.ID)
			}
		}
	}
	if strings.Join(ids, ",") != "capacity,variability,scaling,probe" {
		t.Fatalf("sections %v; the synthetic store should give all four", ids)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const width = 1100
	url := "file://" + filepath.Join(dir, page.HTMLFile)
	idsJSON, _ := json.Marshal(ids)
	// The sections are measured first so that the screenshot covers them.
	load := b.Open(ctx, t, url, fmt.Sprintf(sectionsCheck, idsJSON), nil, width)
	if len(load.Problems) > 0 {
		t.Errorf("the report caused %d problem(s) in the browser:\n%s", len(load.Problems), strings.Join(load.Problems, "\n"))
	}
	var dom struct {
		Sections, Charts                []string
		Drawn, Marks, TextShown, Tables int
		Top, Height, Width              float64
	}
	if err := json.Unmarshal(load.DOM, &dom); err != nil {
		t.Fatalf("DOM check: %v (%s)", err, load.DOM)
	}
	if strings.Join(dom.Sections, ",") != strings.Join(ids, ",") || strings.Join(dom.Charts, ",") != strings.Join(want, ",") {
		t.Errorf("in the DOM: sections %v, charts %v; want %v and %v", dom.Sections, dom.Charts, ids, want)
	}
	n := len(want)
	if dom.Drawn != n || dom.Marks != n || dom.TextShown != n || dom.Tables < 8 || dom.Width > width {
		t.Errorf("of %d charts: %d drawn at a readable size, %d with marks, %d with visible text; %d tables; page %v px wide", n, dom.Drawn, dom.Marks, dom.TextShown, dom.Tables, dom.Width)
	}

	shotDir, kept := browsertest.ScreenshotDir(t)
	shot := filepath.Join(shotDir, "rigor-sections.png")
	height := min(dom.Height-dom.Top, 16000)
	shots := []browsertest.Shot{{Path: shot, Y: dom.Top, Height: height}}
	if kept {
		// Readable slices, for a person to look at.
		shots = append(shots, browsertest.Slices(shotDir, "rigor", dom.Top, height)...)
	}
	load = b.Open(ctx, t, url, `JSON.stringify({})`, shots, width)
	if len(load.Problems) > 0 {
		t.Errorf("problems on the second load: %v", load.Problems)
	}
	fi, err := os.Stat(shot)
	if err != nil {
		t.Fatal(err)
	}
	// Charts and text compress far worse than a blank page.
	if fi.Size() < 100_000 {
		t.Errorf("the screenshot of the sections is only %d bytes", fi.Size())
	}
	t.Logf("screenshot %s (%d bytes, %.0f px high)", shot, fi.Size(), height)
}
