// Package browsertest lets a test open a self-contained HTML report in
// headless Chromium and fail on anything a clean, offline page must never
// do: a script exception, a console error, warning or failed assertion, an
// error log entry, a failed load, or a request that leaves the file. It
// drives Chromium through the DevTools protocol over
// --remote-debugging-pipe, so no port is opened and nothing beyond the
// standard library is needed.
//
// Typical use:
//
//	b := browsertest.Start(t) // skips when Chromium is missing
//	load := b.Open(ctx, t, "file://"+path, domCheck, shots, 1100)
//	// load.Problems must be empty; load.DOM is domCheck's JSON.
package browsertest

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

// RequireEnv names the environment variable that, set to "1", turns a
// missing Chromium from a skip into a failure (for CI, where the browser
// check must not silently vanish).
const RequireEnv = "HEADROOM_REQUIRE_BROWSER"

// ScreenshotEnv names the environment variable that, when set, is the
// directory screenshots are kept in for a person to look at.
const ScreenshotEnv = "HEADROOM_SCREENSHOT_DIR"

// viewportHeight is the window height every page is laid out in; tall
// screenshots capture beyond it.
const viewportHeight = 900

// ChromiumPath is the first Chromium-like browser on PATH, or "".
func ChromiumPath() string {
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// ScreenshotDir is where a test writes its screenshots: the directory in
// HEADROOM_SCREENSHOT_DIR (kept reports true: a person wants to see them),
// or else a temporary directory removed after the test.
func ScreenshotDir(t *testing.T) (dir string, kept bool) {
	t.Helper()
	if d := os.Getenv(ScreenshotEnv); d != "" {
		return d, true
	}
	return t.TempDir(), false
}

// Shot is one screenshot to take: the full page width from Y down, Height
// pixels high, written as PNG to Path.
type Shot struct {
	Path      string
	Y, Height float64
}

// Slices cuts the page from top down, height pixels in all, into shots at
// most 2000 pixels high named dir/prefix-partN.png (N from 1): readable
// pieces of a long page for a person to look at.
func Slices(dir, prefix string, top, height float64) []Shot {
	var shots []Shot
	for y, i := 0.0, 1; y < height; y, i = y+2000, i+1 {
		shots = append(shots, Shot{filepath.Join(dir, fmt.Sprintf("%s-part%d.png", prefix, i)), top + y, min(2000, height-y)})
	}
	return shots
}

// Load is what one page load showed.
type Load struct {
	// Problems are the exceptions, console errors, error log entries,
	// failed loads and outside requests the page caused, in order.
	Problems []string
	// DOM is the JSON string the DOM check expression returned.
	DOM json.RawMessage
}

// Browser is one headless Chromium and its DevTools protocol connection.
// It is stopped when the test that started it ends.
type Browser struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	stderr  *lockedBuffer
	mu      sync.Mutex
	next    int
	pending map[int]chan message
	events  chan message
}

// message is one DevTools protocol message: a reply (ID set) or an event.
type message struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// lockedBuffer is Chromium's stderr: written by the process's copying
// goroutine, read when a test fails.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Start launches headless Chromium for the test and stops it when the test
// ends. Without Chromium on PATH the test is skipped, or fails when
// HEADROOM_REQUIRE_BROWSER=1.
func Start(t *testing.T) *Browser {
	t.Helper()
	path := ChromiumPath()
	if path == "" {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatal("Chromium is not installed and " + RequireEnv + "=1; apt-get install chromium")
		}
		t.Skip("Chromium is not installed (apt-get install chromium); the browser check is skipped. " + RequireEnv + "=1 makes this a failure.")
	}
	toChrome, ourIn, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ourOut, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &Browser{in: ourIn, stderr: &lockedBuffer{}, pending: map[int]chan message{}, events: make(chan message, 4096)}
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
	go b.read(ourOut)
	return b
}

// read hands each reply to the call waiting for it and queues each event,
// until the pipe closes.
func (b *Browser) read(out io.Reader) {
	r := bufio.NewReaderSize(out, 1<<20)
	for {
		raw, err := r.ReadBytes(0)
		if err != nil {
			close(b.events)
			return
		}
		var m message
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		if m.ID == 0 {
			b.events <- m
			continue
		}
		b.mu.Lock()
		ch := b.pending[m.ID]
		delete(b.pending, m.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

// call sends one command and waits for its reply.
func (b *Browser) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan message, 1)
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

// Open loads url in a new tab width pixels wide, waits for its load event,
// evaluates domCheck (an expression returning a JSON string) in the page,
// takes shots, and closes the tab. Every problem the page reports up to
// then is in the result; the test decides whether problems are expected.
// Anything that stops the check itself (no reply, a navigation error, an
// exception in domCheck) fails the test at once.
func (b *Browser) Open(ctx context.Context, t *testing.T, url, domCheck string, shots []Shot, width int) Load {
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
	must(b.call(ctx, s, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": viewportHeight, "deviceScaleFactor": 1, "mobile": false}))
	var nav struct{ ErrorText string }
	json.Unmarshal(must(b.call(ctx, s, "Page.navigate", map[string]any{"url": url})), &nav)
	if nav.ErrorText != "" {
		t.Fatalf("navigating to %s: %s", url, nav.ErrorText)
	}
	var load Load
	for loaded := false; !loaded; {
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
				load.Problems = append(load.Problems, p)
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
	json.Unmarshal(must(b.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": domCheck, "returnByValue": true})), &res)
	if res.ExceptionDetails != nil {
		t.Fatalf("evaluating the DOM check: %s", res.ExceptionDetails)
	}
	load.DOM = json.RawMessage(res.Result.Value)
	for _, sh := range shots {
		var img struct{ Data string }
		json.Unmarshal(must(b.call(ctx, s, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
			"clip": map[string]any{"x": 0, "y": sh.Y, "width": width, "height": sh.Height, "scale": 1}})), &img)
		png, err := base64.StdEncoding.DecodeString(img.Data)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sh.Path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Anything reported after the load event (nothing should run, but a
	// late error must still fail the check).
	for drained := false; !drained; {
		select {
		case ev := <-b.events:
			if p := problem(ev); ev.SessionID == s && p != "" {
				load.Problems = append(load.Problems, p)
			}
		default:
			drained = true
		}
	}
	b.call(ctx, "", "Target.closeTarget", map[string]any{"targetId": target.TargetID})
	return load
}

// problem describes an event that a clean, self-contained page must never
// cause; "" for any other event.
func problem(ev message) string {
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
