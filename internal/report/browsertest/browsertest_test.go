package browsertest

import (
	"encoding/json"
	"strings"
	"testing"
)

// problem is the whole judgement of what a clean page must never do, so
// each kind of event is checked here without a browser.
func TestProblemClassifiesEvents(t *testing.T) {
	cases := []struct {
		method, params string
		want           string // prefix of the problem; "" for none
	}{
		{"Runtime.exceptionThrown", `{"exceptionDetails":{"text":"Uncaught"}}`, "exception: "},
		{"Runtime.consoleAPICalled", `{"type":"error"}`, "console error: "},
		{"Runtime.consoleAPICalled", `{"type":"warning"}`, "console warning: "},
		{"Runtime.consoleAPICalled", `{"type":"assert"}`, "console assert: "},
		{"Runtime.consoleAPICalled", `{"type":"log"}`, ""},
		{"Log.entryAdded", `{"entry":{"level":"error","text":"boom","url":"file:///x"}}`, "log error: boom file:///x"},
		{"Log.entryAdded", `{"entry":{"level":"info","text":"fine"}}`, ""},
		{"Network.requestWillBeSent", `{"request":{"url":"https://cdn.example/x.js"}}`, "request leaving the file: https://cdn.example/x.js"},
		{"Network.requestWillBeSent", `{"request":{"url":"file:///tmp/report.html"}}`, ""},
		{"Network.requestWillBeSent", `{"request":{"url":"data:image/png;base64,AA"}}`, ""},
		{"Network.requestWillBeSent", `{"request":{"url":"about:blank"}}`, ""},
		{"Network.loadingFailed", `{"errorText":"net::ERR_FILE_NOT_FOUND"}`, "loading failed: "},
		{"Page.loadEventFired", `{}`, ""},
	}
	for _, c := range cases {
		got := problem(message{Method: c.method, Params: json.RawMessage(c.params)})
		if c.want == "" && got != "" || c.want != "" && !strings.HasPrefix(got, c.want) {
			t.Errorf("%s %s: problem %q, want prefix %q", c.method, c.params, got, c.want)
		}
	}
}

func TestSlicesCoverThePageIn2000PixelPieces(t *testing.T) {
	got := Slices("/d", "r", 100, 4500)
	want := []Shot{{"/d/r-part1.png", 100, 2000}, {"/d/r-part2.png", 2100, 2000}, {"/d/r-part3.png", 4100, 500}}
	if len(got) != len(want) {
		t.Fatalf("slices %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("slice %d: %v, want %v", i, got[i], want[i])
		}
	}
	if s := Slices("/d", "r", 0, 0); len(s) != 0 {
		t.Errorf("an empty page gave slices %v", s)
	}
}
