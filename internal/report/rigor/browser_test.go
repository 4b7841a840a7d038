package rigor

import (
	"bufio"
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

	"github.com/headroom-dev/headroom/internal/report/page"
)

// The browser check of this package's sections, the same approach as
// internal/report/page's: headless Chromium driven over the DevTools
// protocol on a pipe (no port), failing on any exception, console error,
// error log entry or request that leaves the file; then the rendered DOM
// must hold every chart of these sections at a readable size with marks
// and text, and a screenshot of them is saved.

// devtools is a DevTools protocol connection to one Chromium.
type devtools struct {
	in      io.WriteCloser
	mu      sync.Mutex
	next    int
	pending map[int]chan json.RawMessage
	events  chan devtoolsMsg
}

type devtoolsMsg struct {
	ID        int             `json:"id"`
	Method    string          `json:"method"`
	SessionID string          `json:"sessionId"`
	Params    json.RawMessage `json:"params"`
	Result    json.RawMessage `json:"result"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func startChromium(t *testing.T) *devtools {
	t.Helper()
	var path string
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("HEADROOM_REQUIRE_BROWSER") == "1" {
			t.Fatal("Chromium is not installed and HEADROOM_REQUIRE_BROWSER=1; apt-get install chromium")
		}
		t.Skip("Chromium is not installed (apt-get install chromium); the browser check is skipped. HEADROOM_REQUIRE_BROWSER=1 makes this a failure.")
	}
	toChrome, in, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--user-data-dir="+t.TempDir(),
		"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking", "--disable-sync", "--hide-scrollbars", "about:blank")
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome} // fds 3 (commands) and 4 (replies)
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start %s: %v", path, err)
	}
	toChrome.Close()
	fromChrome.Close()
	d := &devtools{in: in, pending: map[int]chan json.RawMessage{}, events: make(chan devtoolsMsg, 4096)}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		d.call(ctx, "", "Browser.close", nil)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		in.Close()
		out.Close()
	})
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			raw, err := r.ReadBytes(0)
			if err != nil {
				close(d.events)
				return
			}
			var m devtoolsMsg
			if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
				continue
			}
			if m.ID == 0 {
				d.events <- m
				continue
			}
			d.mu.Lock()
			ch := d.pending[m.ID]
			delete(d.pending, m.ID)
			d.mu.Unlock()
			res := m.Result
			if m.Error != nil {
				res = nil
			}
			if ch != nil {
				ch <- res
			}
		}
	}()
	return d
}

// call sends one command and returns its result (nil on a protocol error).
func (d *devtools) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	d.mu.Lock()
	d.next++
	id := d.next
	ch := make(chan json.RawMessage, 1)
	d.pending[id] = ch
	d.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	raw, _ := json.Marshal(msg)
	if _, err := d.in.Write(append(raw, 0)); err != nil {
		return nil, err
	}
	select {
	case res := <-ch:
		if res == nil {
			return nil, fmt.Errorf("%s failed", method)
		}
		return res, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: no reply: %w", method, ctx.Err())
	}
}

// trouble describes an event a self-contained page must never cause.
func trouble(ev devtoolsMsg) string {
	switch ev.Method {
	case "Runtime.exceptionThrown":
		return "exception: " + string(ev.Params)
	case "Runtime.consoleAPICalled":
		var p struct{ Type string }
		json.Unmarshal(ev.Params, &p)
		if p.Type == "error" || p.Type == "warning" || p.Type == "assert" {
			return "console " + p.Type + ": " + string(ev.Params)
		}
	case "Log.entryAdded":
		var p struct{ Entry struct{ Level, Text string } }
		json.Unmarshal(ev.Params, &p)
		if p.Entry.Level == "error" {
			return "log error: " + p.Entry.Text
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
	d := startChromium(t)
	st, dir := scalingStore(t)
	r, err := page.Build(st)
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
		for _, b := range s.Blocks {
			if b.Chart != nil {
				want = append(want, b.Chart.ID)
			}
		}
	}
	if strings.Join(ids, ",") != "capacity,variability,scaling,probe" {
		t.Fatalf("sections %v; the synthetic store should give all four", ids)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	must := func(raw json.RawMessage, err error) json.RawMessage {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	var target struct{ TargetID string }
	json.Unmarshal(must(d.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})), &target)
	var att struct{ SessionID string }
	json.Unmarshal(must(d.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true})), &att)
	s := att.SessionID
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"} {
		must(d.call(ctx, s, m, nil))
	}
	const width = 1100
	must(d.call(ctx, s, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": false}))
	must(d.call(ctx, s, "Page.navigate", map[string]any{"url": "file://" + filepath.Join(dir, page.HTMLFile)}))
	var problems []string
	for loaded := false; !loaded; {
		select {
		case ev, ok := <-d.events:
			if !ok {
				t.Fatal("chromium closed the protocol pipe")
			}
			if ev.SessionID != s {
				continue
			}
			loaded = ev.Method == "Page.loadEventFired"
			if p := trouble(ev); p != "" {
				problems = append(problems, p)
			}
		case <-ctx.Done():
			t.Fatal("the report did not finish loading")
		}
	}
	idsJSON, _ := json.Marshal(ids)
	var res struct {
		Result struct{ Value string } `json:"result"`
	}
	json.Unmarshal(must(d.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": fmt.Sprintf(sectionsCheck, idsJSON), "returnByValue": true})), &res)
	var dom struct {
		Sections, Charts                []string
		Drawn, Marks, TextShown, Tables int
		Top, Height, Width              float64
	}
	if err := json.Unmarshal([]byte(res.Result.Value), &dom); err != nil {
		t.Fatalf("DOM check: %v (%s)", err, res.Result.Value)
	}
	if strings.Join(dom.Sections, ",") != strings.Join(ids, ",") || strings.Join(dom.Charts, ",") != strings.Join(want, ",") {
		t.Errorf("in the DOM: sections %v, charts %v; want %v and %v", dom.Sections, dom.Charts, ids, want)
	}
	n := len(want)
	if dom.Drawn != n || dom.Marks != n || dom.TextShown != n || dom.Tables < 8 || dom.Width > width {
		t.Errorf("of %d charts: %d drawn at a readable size, %d with marks, %d with visible text; %d tables; page %v px wide", n, dom.Drawn, dom.Marks, dom.TextShown, dom.Tables, dom.Width)
	}
	shotDir := os.Getenv("HEADROOM_SCREENSHOT_DIR")
	if shotDir == "" {
		shotDir = t.TempDir()
	}
	shot := filepath.Join(shotDir, "rigor-sections.png")
	height := min(dom.Height-dom.Top, 16000)
	var img struct{ Data string }
	json.Unmarshal(must(d.call(ctx, s, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": 0, "y": dom.Top, "width": width, "height": height, "scale": 1}})), &img)
	png, err := base64.StdEncoding.DecodeString(img.Data)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	// Charts and text compress far worse than a blank page.
	if len(png) < 100_000 {
		t.Errorf("the screenshot of the sections is only %d bytes", len(png))
	}
	t.Logf("screenshot %s (%d bytes, %.0f px high)", shot, len(png), height)
	if os.Getenv("HEADROOM_SCREENSHOT_DIR") != "" {
		// Readable slices, for a person to look at.
		for y, i := 0.0, 1; y < height; y, i = y+2000, i+1 {
			json.Unmarshal(must(d.call(ctx, s, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
				"clip": map[string]any{"x": 0, "y": dom.Top + y, "width": width, "height": min(2000, height-y), "scale": 1}})), &img)
			png, _ := base64.StdEncoding.DecodeString(img.Data)
			if err := os.WriteFile(filepath.Join(shotDir, fmt.Sprintf("rigor-part%d.png", i)), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for {
		select {
		case ev := <-d.events:
			if p := trouble(ev); ev.SessionID == s && p != "" {
				problems = append(problems, p)
			}
			continue
		default:
		}
		break
	}
	if len(problems) > 0 {
		t.Errorf("the report caused %d problem(s) in the browser:\n%s", len(problems), strings.Join(problems, "\n"))
	}
}
