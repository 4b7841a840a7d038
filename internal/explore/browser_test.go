package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/explore/exploretest"
	"github.com/headroom-dev/headroom/internal/report/browsertest"
)

// The browser test drives the explorer's page in headless Chromium over
// the designed grid store: it changes the controls as a person would and
// checks that the plot (series, points, axis labels) and the plan table
// change as the grid's construction says they must, that nothing on the
// page is wider than the window, and that the page caused no problem
// (exception, console error, request leaving the explorer).

// waitFor is an expression that resolves once cond (a JS expression)
// holds, or rejects after 60 s (a real campaign's answer card takes
// seconds).
func waitFor(cond string) string {
	return fmt.Sprintf(`new Promise((resolve, reject) => { const t0 = Date.now(); (function poll() {
  let ok = false; try { ok = !!(%s); } catch (e) {}
  if (ok) resolve(true); else if (Date.now() - t0 > 60000) reject(new Error(%q)); else setTimeout(poll, 20); })(); })`, cond, "timed out waiting for "+cond)
}

// choose sets a select as a person would and waits for the page to redraw.
func choose(id, value string) string {
	return fmt.Sprintf(`(async () => {
  const before = Number(document.body.dataset.renders);
  const s = document.getElementById(%q);
  if (![...s.options].some(o => o.value === %q)) throw new Error('no option ' + %q + ' in ' + %q);
  s.value = %q; s.dispatchEvent(new Event('change'));
  await %s;
  return true; })()`, id, value, value, id, value, waitFor("Number(document.body.dataset.renders) > before"))
}

// pageState is what the test reads back from the page.
type pageState struct {
	Lines, Points     int
	Legend            []string
	XLabel, YLabel    string
	Plan              [][2]string // level, configuration
	HomePlan          [][2]string // the home's plan (the planner's)
	Cards, Attention  int
	Error             string
	CompareCols       int
	Wide              []string // elements wider than the window (outside a scrolling box)
	ScrollW, ClientW  int
	Height            int
	Disabled          []string // parameter selects disabled (plotted)
	RunRows, Timeline int
}

const readState = `JSON.stringify({
  lines: document.querySelectorAll('#plot svg path.line').length,
  points: document.querySelectorAll('#plot svg circle.pt').length,
  legend: [...document.querySelectorAll('#plot .legend li')].map(li => li.textContent),
  xlabel: (document.querySelector('#plot text.xlabel') || {}).textContent || '',
  ylabel: (document.querySelector('#plot text.ylabel') || {}).textContent || '',
  plan: [...document.querySelectorAll('#plan tbody tr')].map(tr => [tr.cells[0].textContent, tr.cells[1].firstChild.textContent]),
  homePlan: [...document.querySelectorAll('#home-plan-table tbody tr')].map(tr => [tr.cells[0].textContent, tr.cells[1].firstChild.textContent]),
  cards: document.querySelectorAll('#cards .card li').length,
  attention: document.querySelectorAll('#cards li.attention').length,
  error: document.getElementById('query-error').hidden ? '' : document.getElementById('query-error').textContent,
  compareCols: document.querySelectorAll('#compare-table thead th').length,
  wide: (() => {
    const w = document.documentElement.clientWidth, out = [];
    for (const e of document.querySelectorAll('body *')) {
      if (e.parentElement.closest('.scroll')) continue;
      const r = e.getBoundingClientRect();
      if (r.width > 0 && (r.right > w + 1 || r.left < -1)) out.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' ' + Math.round(r.left) + '..' + Math.round(r.right));
    }
    return out;
  })(),
  scrollW: document.documentElement.scrollWidth,
  clientW: document.documentElement.clientWidth,
  height: document.documentElement.scrollHeight,
  disabled: [...document.querySelectorAll('#params select:disabled')].map(s => s.id),
  runRows: document.querySelectorAll('#runs tbody tr').length,
  timeline: document.querySelectorAll('#tl-tp circle.pt').length,
})`

func state(ctx context.Context, t *testing.T, tab *browsertest.Tab) pageState {
	t.Helper()
	var raw string
	if err := json.Unmarshal(tab.Eval(ctx, readState), &raw); err != nil {
		t.Fatal(err)
	}
	var s pageState
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatalf("page state %s: %v", raw, err)
	}
	if len(s.Wide) > 0 || s.ScrollW > s.ClientW {
		t.Errorf("the page is %d px wide in a %d px window; too wide: %v", s.ScrollW, s.ClientW, s.Wide)
	}
	if s.Error != "" {
		t.Errorf("the page shows an error: %s", s.Error)
	}
	return s
}

func planConfigs(rows [][2]string) map[float64]string {
	out := map[float64]string{}
	for _, r := range rows {
		l, _ := strconv.ParseFloat(r[0], 64)
		out[l] = r[1]
	}
	return out
}

func samePlan(got, want map[float64]string) bool {
	if len(got) != len(want) {
		return false
	}
	for l, c := range want {
		if got[l] != c {
			return false
		}
	}
	return true
}

func TestBrowserExploresTheGrid(t *testing.T) {
	b := browsertest.Start(t)
	e, _ := openGrid(t)
	srv := httptest.NewServer(e)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	tab := b.OpenTab(ctx, t, srv.URL+"/", 1280)
	tab.Eval(ctx, waitFor("document.body.dataset.ready === 'yes'"))
	s := state(ctx, t, tab)
	// The home: the answer card, then level against throughput with every
	// parameter free: one series, a point per level, the designed plan.
	if s.Cards == 0 || s.Attention != 0 {
		t.Errorf("answer card: %d lines, %d in red (the grid has no finding)", s.Cards, s.Attention)
	}
	if s.Lines != 1 || s.Points != 3 || s.XLabel != "load (req/s)" || s.YLabel != "throughput (req/s)" {
		t.Errorf("first plot: %d lines, %d points, x %q, y %q", s.Lines, s.Points, s.XLabel, s.YLabel)
	}
	if !samePlan(planConfigs(s.Plan), exploretest.Best(0)) || !samePlan(planConfigs(s.HomePlan), exploretest.Best(0)) {
		t.Errorf("plan on the page %v, home plan %v, designed %v", s.Plan, s.HomePlan, exploretest.Best(0))
	}
	if strings.Join(s.Disabled, ",") != "fix-level" {
		t.Errorf("disabled parameter selects %v, want the plotted level's", s.Disabled)
	}

	// Fix a wildcard: app servers = 2. The plan follows the design.
	tab.Eval(ctx, choose("fix-"+exploretest.AppParam, "2"))
	s = state(ctx, t, tab)
	if !samePlan(planConfigs(s.Plan), exploretest.Best(2)) || s.Points != 3 {
		t.Errorf("with app=2: plan %v (designed %v), %d points", s.Plan, exploretest.Best(2), s.Points)
	}
	// One series per database size: three lines of three points.
	tab.Eval(ctx, choose("series", exploretest.DBParam))
	s = state(ctx, t, tab)
	want := []string{exploretest.DBParam + "=1", exploretest.DBParam + "=2", exploretest.DBParam + "=4"}
	if s.Lines != 3 || s.Points != 9 || strings.Join(s.Legend, "|") != strings.Join(want, "|") {
		t.Errorf("series by db: %d lines, %d points, legend %v", s.Lines, s.Points, s.Legend)
	}
	if strings.Join(s.Disabled, ",") != "fix-level,fix-"+exploretest.DBParam {
		t.Errorf("disabled selects %v", s.Disabled)
	}
	// Back to a wildcard: the plan is the free one again.
	tab.Eval(ctx, choose("fix-"+exploretest.AppParam, "*"))
	s = state(ctx, t, tab)
	if !samePlan(planConfigs(s.Plan), exploretest.Best(0)) || s.Points != 9 {
		t.Errorf("app free again: plan %v, %d points", s.Plan, s.Points)
	}
	// Any metric on any axis.
	tab.Eval(ctx, choose("x", "cost_per_hour"))
	tab.Eval(ctx, choose("y", "p99_ms"))
	s = state(ctx, t, tab)
	if s.XLabel != "cost ($/h)" || s.YLabel != "p99 response time (ms)" || s.Points != 9 || len(s.Disabled) != 1 {
		t.Errorf("cost against p99: x %q y %q, %d points, disabled %v", s.XLabel, s.YLabel, s.Points, s.Disabled)
	}

	// Drill down: a plan row's runs, then a run's timeline.
	tab.Eval(ctx, `document.querySelector('#plan tbody tr').click(); `+waitFor("document.querySelectorAll('#runs tbody tr').length > 0"))
	tab.Eval(ctx, `[...document.querySelectorAll('#runs tbody tr')].find(tr => tr.cells[3].textContent === 'yes').click(); `+waitFor("document.querySelectorAll('#tl-tp circle.pt').length > 0 && document.querySelectorAll('#run-sections a').length > 0"))
	s = state(ctx, t, tab)
	// app1-db1 at 100 req/s: two counted repetitions and one interrupted
	// attempt; a run has a warmup second and the measured seconds.
	if s.RunRows != 3 || s.Timeline != exploretest.Measure+1 {
		t.Errorf("drill down: %d runs, %d timeline points", s.RunRows, s.Timeline)
	}

	// The view the docs show, then at a narrow window.
	tab.Eval(ctx, choose("x", "level"))
	tab.Eval(ctx, choose("y", "profit_per_hour"))
	s = state(ctx, t, tab)
	shotDir, kept := browsertest.ScreenshotDir(t)
	shot := filepath.Join(shotDir, "explorer.png")
	tab.Screenshot(ctx, shot, 0, float64(min(s.Height, 2000)))
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 50_000 {
		t.Errorf("screenshot %s: %v", shot, err)
	} else if kept {
		t.Logf("screenshot %s (%d bytes)", shot, fi.Size())
	}
	// A point of the plot: its runs and a run's timeline, for the docs too.
	tab.Eval(ctx, `document.querySelectorAll('#plot circle.pt')[5].dispatchEvent(new MouseEvent('click', {bubbles: true})); `+
		waitFor("document.querySelectorAll('#runs tbody tr').length === 2"))
	tab.Eval(ctx, `document.querySelector('#runs tbody tr').click(); `+waitFor("document.querySelectorAll('#tl-p99 circle.pt').length > 0"))
	var top float64
	json.Unmarshal(tab.Eval(ctx, `document.getElementById('drill').getBoundingClientRect().top + window.scrollY`), &top)
	s = state(ctx, t, tab)
	runShot := filepath.Join(shotDir, "explorer-run.png")
	tab.Screenshot(ctx, runShot, top, float64(min(s.Height, int(top)+1000))-top)
	if p := tab.Problems(); len(p) > 0 {
		t.Errorf("the page caused %d problem(s):\n%s", len(p), strings.Join(p, "\n"))
	}

	// An address names the view and a run: the page opens on both. Run 2 is
	// the grid's first completed run (run 1 is the interrupted attempt).
	narrow := b.OpenTab(ctx, t, srv.URL+"/#series="+exploretest.DBParam+"&run=0:2", 420)
	narrow.Eval(ctx, waitFor("document.body.dataset.ready === 'yes'"))
	if s = state(ctx, t, narrow); s.Lines != 3 || s.Timeline != exploretest.Measure+1 {
		t.Errorf("narrow window with a run: %d lines, %d timeline points", s.Lines, s.Timeline)
	}
	if p := narrow.Problems(); len(p) > 0 {
		t.Errorf("the narrow page caused %d problem(s):\n%s", len(p), strings.Join(p, "\n"))
	}
}
