package browsertest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// Tab is a page a test keeps open and drives, for pages that are
// applications rather than documents (the results explorer): the test
// evaluates expressions in it (awaiting their promises), takes
// screenshots, and reads the problems the page reported, judged as Open
// judges them, except that requests to the page's own origin are its own.
type Tab struct {
	b        *Browser
	t        *testing.T
	session  string
	target   string
	origin   string
	width    int
	problems []string
}

// OpenTab loads url in a new tab width pixels wide and waits for its load
// event. Requests to url's origin (scheme://host:port) are the page's own;
// a request anywhere else is a problem. The tab is closed when the test
// ends; anything that stops the driving itself fails the test at once.
func (b *Browser) OpenTab(ctx context.Context, t *testing.T, url string, width int) *Tab {
	t.Helper()
	tab := &Tab{b: b, t: t, origin: originOf(url), width: width}
	var target struct{ TargetID string }
	json.Unmarshal(tab.must(b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})), &target)
	tab.target = target.TargetID
	t.Cleanup(func() { b.call(context.Background(), "", "Target.closeTarget", map[string]any{"targetId": tab.target}) })
	var att struct{ SessionID string }
	json.Unmarshal(tab.must(b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": tab.target, "flatten": true})), &att)
	tab.session = att.SessionID
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"} {
		tab.must(b.call(ctx, tab.session, m, nil))
	}
	tab.must(b.call(ctx, tab.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": viewportHeight, "deviceScaleFactor": 1, "mobile": false}))
	var nav struct{ ErrorText string }
	json.Unmarshal(tab.must(b.call(ctx, tab.session, "Page.navigate", map[string]any{"url": url})), &nav)
	if nav.ErrorText != "" {
		t.Fatalf("navigating to %s: %s", url, nav.ErrorText)
	}
	for {
		select {
		case ev, ok := <-b.events:
			if !ok {
				t.Fatalf("chromium closed the protocol pipe\nstderr:\n%s", b.stderr.String())
			}
			if ev.SessionID != tab.session {
				continue
			}
			if ev.Method == "Page.loadEventFired" {
				return tab
			}
			tab.note(ev)
		case <-ctx.Done():
			t.Fatalf("%s did not finish loading: %v", url, ctx.Err())
		}
	}
}

// originOf is scheme://host[:port] of url.
func originOf(url string) string {
	i := strings.Index(url, "://")
	if i < 0 {
		return url
	}
	if j := strings.IndexByte(url[i+3:], '/'); j >= 0 {
		return url[:i+3+j]
	}
	return url
}

func (tab *Tab) must(raw json.RawMessage, err error) json.RawMessage {
	tab.t.Helper()
	if err != nil {
		tab.t.Fatalf("%v\nchromium stderr:\n%s", err, tab.b.stderr.String())
	}
	return raw
}

// note keeps the problem an event of this tab describes.
func (tab *Tab) note(ev message) {
	if ev.SessionID != tab.session {
		return
	}
	if ev.Method == "Network.requestWillBeSent" {
		var p struct{ Request struct{ URL string } }
		json.Unmarshal(ev.Params, &p)
		if u := p.Request.URL; u == tab.origin || strings.HasPrefix(u, tab.origin+"/") {
			return
		}
	}
	if p := problem(ev); p != "" {
		tab.problems = append(tab.problems, p)
	}
}

// drain takes every event queued so far.
func (tab *Tab) drain() {
	for {
		select {
		case ev, ok := <-tab.b.events:
			if !ok {
				return
			}
			tab.note(ev)
		default:
			return
		}
	}
}

// Eval evaluates expr in the page, waits for it when it is a promise, and
// returns its value as JSON. An exception fails the test at once.
func (tab *Tab) Eval(ctx context.Context, expr string) json.RawMessage {
	tab.t.Helper()
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	json.Unmarshal(tab.must(tab.b.call(ctx, tab.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})), &res)
	tab.drain()
	if res.ExceptionDetails != nil {
		tab.t.Fatalf("evaluating %.80s...: %s\nproblems the page reported: %s", expr, res.ExceptionDetails, strings.Join(tab.problems, "\n"))
	}
	return res.Result.Value
}

// Screenshot writes the full page width from y down, height pixels high,
// as PNG to path.
func (tab *Tab) Screenshot(ctx context.Context, path string, y, height float64) {
	tab.t.Helper()
	var img struct{ Data string }
	json.Unmarshal(tab.must(tab.b.call(ctx, tab.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": 0, "y": y, "width": tab.width, "height": height, "scale": 1}})), &img)
	png, err := base64.StdEncoding.DecodeString(img.Data)
	if err != nil {
		tab.t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tab.t.Fatal(err)
	}
}

// Problems are the problems the page reported so far, in order.
func (tab *Tab) Problems() []string {
	tab.drain()
	return tab.problems
}
