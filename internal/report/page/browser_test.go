package page

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The browser check opens report.html in headless Chromium through the
// DevTools protocol (over --remote-debugging-pipe, so no port is opened),
// and fails on any script exception, console or log error, or request
// that leaves the file; then it asks the rendered DOM whether every chart
// is there and laid out, and saves screenshots.

func chromiumPath() string {
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// cdpMsg is one DevTools protocol message: a reply (ID set) or an event.
type cdpMsg struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

type browser struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	stderr  *bytes.Buffer
	mu      sync.Mutex
	next    int
	pending map[int]chan cdpMsg
	events  chan cdpMsg
}

func startBrowser(t *testing.T, path string) *browser {
	t.Helper()
	toChrome, ourIn, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ourOut, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{in: ourIn, stderr: &bytes.Buffer{}, pending: map[int]chan cdpMsg{}, events: make(chan cdpMsg, 4096)}
	b.cmd = exec.Command(path, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
		"--user-data-dir="+t.TempDir(), "--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--disable-background-networking", "--disable-sync", "--mute-audio", "--hide-scrollbars", "about:blank")
	// The protocol pipe is file descriptors 3 (commands in) and 4 (replies out).
	b.cmd.ExtraFiles = []*os.File{toChrome, fromChrome}
	b.cmd.Stderr = b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("cannot start %s: %v", path, err)
	}
	toChrome.Close()
	fromChrome.Close()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.call(ctx, "", "Browser.close", nil) // best effort; the kill below is the backstop
		done := make(chan struct{})
		go func() { b.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			b.cmd.Process.Kill()
			<-done
		}
		ourIn.Close()
		ourOut.Close()
	})
	go func() {
		r := bufio.NewReaderSize(ourOut, 1<<20)
		for {
			raw, err := r.ReadBytes(0)
			if err != nil {
				close(b.events)
				return
			}
			var m cdpMsg
			if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
				continue
			}
			if m.ID != 0 {
				b.mu.Lock()
				ch := b.pending[m.ID]
				delete(b.pending, m.ID)
				b.mu.Unlock()
				if ch != nil {
					ch <- m
				}
				continue
			}
			b.events <- m
		}
	}()
	return b
}

// call sends one command and waits for its reply.
func (b *browser) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan cdpMsg, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	raw, _ := json.Marshal(msg)
	if _, err := b.in.Write(append(raw, 0)); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: no reply: %w", method, ctx.Err())
	}
}

// shot is a screenshot of the page from y down, height pixels high.
type shot struct {
	path      string
	y, height float64
}

// pageRun is what one page load showed.
type pageRun struct {
	problems []string // exceptions, console errors, error log entries, outside requests
	dom      json.RawMessage
}

// open loads url in a new tab, waits for its load event, collects every
// problem reported on the way, and evaluates expr (a JSON-returning
// expression) in the page.
func (b *browser) open(ctx context.Context, t *testing.T, url, expr string, shots []shot, width int) pageRun {
	t.Helper()
	must := func(raw json.RawMessage, err error) json.RawMessage {
		t.Helper()
		if err != nil {
			t.Fatalf("%v\nchromium stderr:\n%s", err, b.stderr.String())
		}
		return raw
	}
	var target struct{ TargetID string }
	json.Unmarshal(must(b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})), &target)
	var att struct{ SessionID string }
	json.Unmarshal(must(b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true})), &att)
	s := att.SessionID
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"} {
		must(b.call(ctx, s, m, nil))
	}
	must(b.call(ctx, s, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": false}))
	var nav struct{ ErrorText string }
	json.Unmarshal(must(b.call(ctx, s, "Page.navigate", map[string]any{"url": url})), &nav)
	if nav.ErrorText != "" {
		t.Fatalf("navigating to %s: %s", url, nav.ErrorText)
	}
	var run pageRun
	loaded := false
	for !loaded {
		select {
		case ev, ok := <-b.events:
			if !ok {
				t.Fatalf("chromium closed the protocol pipe\nstderr:\n%s", b.stderr.String())
			}
			if ev.SessionID != s {
				continue
			}
			if ev.Method == "Page.loadEventFired" {
				loaded = true
				continue
			}
			if p := problem(ev); p != "" {
				run.problems = append(run.problems, p)
			}
		case <-ctx.Done():
			t.Fatalf("%s did not finish loading: %v", url, ctx.Err())
		}
	}
	var res struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	json.Unmarshal(must(b.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})), &res)
	if res.ExceptionDetails != nil {
		t.Fatalf("evaluating the DOM check: %s", res.ExceptionDetails)
	}
	run.dom = json.RawMessage(res.Result.Value)
	for _, sh := range shots {
		var img struct{ Data string }
		json.Unmarshal(must(b.call(ctx, s, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
			"clip": map[string]any{"x": 0, "y": sh.y, "width": width, "height": sh.height, "scale": 1}})), &img)
		png, err := base64.StdEncoding.DecodeString(img.Data)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sh.path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Anything reported after the load event (nothing runs, but a late
	// error must still fail the check).
	for {
		select {
		case ev := <-b.events:
			if p := problem(ev); ev.SessionID == s && p != "" {
				run.problems = append(run.problems, p)
			}
			continue
		default:
		}
		break
	}
	b.call(ctx, "", "Target.closeTarget", map[string]any{"targetId": target.TargetID})
	return run
}

// problem describes an event that a clean, self-contained page must never
// cause; "" for any other event.
func problem(ev cdpMsg) string {
	switch ev.Method {
	case "Runtime.exceptionThrown":
		return "exception: " + string(ev.Params)
	case "Runtime.consoleAPICalled":
		var p struct{ Type string }
		json.Unmarshal(ev.Params, &p)
		if p.Type == "error" || p.Type == "assert" || p.Type == "warning" {
			return "console " + p.Type + ": " + string(ev.Params)
		}
	case "Log.entryAdded":
		var p struct {
			Entry struct{ Level, Text, URL string }
		}
		json.Unmarshal(ev.Params, &p)
		if p.Entry.Level == "error" {
			return "log error: " + p.Entry.Text + " " + p.Entry.URL
		}
	case "Network.requestWillBeSent":
		var p struct{ Request struct{ URL string } }
		json.Unmarshal(ev.Params, &p)
		if u := p.Request.URL; !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "about:") {
			return "request leaving the file: " + u
		}
	case "Network.loadingFailed":
		return "loading failed: " + string(ev.Params)
	}
	return ""
}

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
	path := chromiumPath()
	if path == "" {
		if os.Getenv("HEADROOM_REQUIRE_BROWSER") == "1" {
			t.Fatal("Chromium is not installed and HEADROOM_REQUIRE_BROWSER=1; apt-get install chromium")
		}
		t.Skip("Chromium is not installed (apt-get install chromium); the report's browser check is skipped. HEADROOM_REQUIRE_BROWSER=1 makes this a failure.")
	}
	r, dir := buildSynth(t)
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	shotDir := os.Getenv("HEADROOM_SCREENSHOT_DIR")
	if shotDir == "" {
		shotDir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := startBrowser(t, path)

	// First, the check must see problems where there are some, or a clean
	// result below would prove nothing.
	bad := filepath.Join(dir, "bad.html")
	os.WriteFile(bad, []byte(`<!doctype html><title>bad</title><script>console.error("logged"); throw new Error("thrown")</script>`), 0o644)
	run := b.open(ctx, t, "file://"+bad, `JSON.stringify({})`, nil, 1000)
	if got := strings.Join(run.problems, "\n"); !strings.Contains(got, "console error") || !strings.Contains(got, "exception") {
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
	run = b.open(ctx, t, "file://"+filepath.Join(dir, HTMLFile), domCheck, nil, width)
	var dom struct {
		Sections, Charts                                                    []string
		Drawn, Labelled, Marks, TextShown, Tables, Height, Width, Resources int
	}
	if err := json.Unmarshal(run.dom, &dom); err != nil {
		t.Fatalf("DOM check: %v (%s)", err, run.dom)
	}
	if len(run.problems) > 0 {
		t.Errorf("the report caused %d problem(s) in the browser:\n%s", len(run.problems), strings.Join(run.problems, "\n"))
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
	shots := []shot{{top, 0, 2200}, {full, 0, float64(min(dom.Height, 16000))}}
	if os.Getenv("HEADROOM_SCREENSHOT_DIR") != "" {
		// Readable slices of the whole page, for a person to look at.
		for y, i := 0, 1; y < min(dom.Height, 16000); y, i = y+2000, i+1 {
			shots = append(shots, shot{filepath.Join(shotDir, fmt.Sprintf("report-part%d.png", i)), float64(y), float64(min(2000, dom.Height-y))})
		}
	}
	run = b.open(ctx, t, "file://"+filepath.Join(dir, HTMLFile), `JSON.stringify({})`, shots, width)
	if len(run.problems) > 0 {
		t.Errorf("problems on the second load: %v", run.problems)
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
