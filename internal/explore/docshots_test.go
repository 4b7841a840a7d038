package explore

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/report/browsertest"
)

// The screenshots in docs/explorer.md are of a real campaign's store,
// made with this test (it is skipped unless told which store):
//
//	HEADROOM_EXPLORER_DOCS_STORE=RESULTS_DIR/results.db \
//	HEADROOM_EXPLORER_DOCS_VIEW='x=level&y=profit_per_hour&series=...&run=0:7' \
//	HEADROOM_SCREENSHOT_DIR=docs/img go test ./internal/explore -run DocsScreenshots
//
// It writes explorer.png (the home, the plot and the plan) and, when the
// view names a run, explorer-run.png (the run's timeline).
func TestDocsScreenshots(t *testing.T) {
	path := os.Getenv("HEADROOM_EXPLORER_DOCS_STORE")
	if path == "" {
		t.Skip("HEADROOM_EXPLORER_DOCS_STORE is not set; this test only makes the docs' screenshots")
	}
	dir := os.Getenv(browsertest.ScreenshotEnv)
	if dir == "" {
		t.Fatal(browsertest.ScreenshotEnv + " must name the directory to write the screenshots in")
	}
	b := browsertest.Start(t)
	e, err := Open([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	srv := httptest.NewServer(e)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tab := b.OpenTab(ctx, t, srv.URL+"/#"+os.Getenv("HEADROOM_EXPLORER_DOCS_VIEW"), 1280)
	tab.Eval(ctx, waitFor("document.body.dataset.ready === 'yes'"))
	var at struct{ Explore, Compare, Drill, Height float64 }
	var raw string
	json.Unmarshal(tab.Eval(ctx, `JSON.stringify({
	  explore: document.getElementById('explore').getBoundingClientRect().top + scrollY,
	  compare: document.getElementById('compare').getBoundingClientRect().top + scrollY,
	  drill: document.getElementById('drill').getBoundingClientRect().top + scrollY,
	  height: document.documentElement.scrollHeight })`), &raw)
	if err := json.Unmarshal([]byte(raw), &at); err != nil {
		t.Fatal(err)
	}
	tab.Screenshot(ctx, filepath.Join(dir, "explorer.png"), 0, at.Compare)
	if tl := tab.Eval(ctx, `document.querySelectorAll('#tl-tp circle.pt').length`); string(tl) != "0" {
		tab.Eval(ctx, waitFor("document.querySelectorAll('#run-sections a').length > 0"))
		tab.Screenshot(ctx, filepath.Join(dir, "explorer-run.png"), at.Drill, min(at.Height-at.Drill, 1100))
	}
	if p := tab.Problems(); len(p) > 0 {
		t.Errorf("the page caused problems: %v", p)
	}
}
