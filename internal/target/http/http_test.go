package httptarget

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// recorded is one request as the server saw it.
type recorded struct {
	method, uri, host, body string
	header                  http.Header
	length                  int64 // Content-Length; -1 when chunked
}

// server is a test HTTP server that records requests and counts new
// connections. status, when set, picks each response's status.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	reqs     []recorded
	newConns atomic.Int64
	status   func(r *http.Request) int
}

func newServer(t *testing.T, status func(r *http.Request) int) *server {
	t.Helper()
	s := &server{status: status}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, recorded{r.Method, r.RequestURI, r.Host, string(body), r.Header.Clone(), r.ContentLength})
		s.mu.Unlock()
		code := http.StatusOK
		if s.status != nil {
			code = s.status(r)
		}
		w.WriteHeader(code)
		io.WriteString(w, strings.Repeat("x", 5000)) // a body the client must drain
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.newConns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *server) last() recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[len(s.reqs)-1]
}

// open builds a target from opts (defaults filled first by the caller via
// base()) and one client.
func open(t *testing.T, opts *Options) (*Target, target.Client) {
	t.Helper()
	tg, err := Open(*opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	c, err := tg.NewClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return tg, c
}

func base(url string) *Options {
	o := defaultOptions()
	o.BaseURL = url
	o.Read = &Request{Path: "/kv/{key}"}
	return o
}

func testOp(typ workload.OpType) *workload.Op {
	return &workload.Op{
		Type: typ, KeyNum: 42, Key: []byte("user42"), Field: 2, ScanLength: 7,
		Values: [][]byte{[]byte("v0>"), []byte("v1?"), []byte("v2[x]")},
	}
}

func TestRendersEveryOperation(t *testing.T) {
	s := newServer(t, nil)
	o := defaultOptions()
	o.BaseURL = s.URL + "/api/"
	o.Headers = map[string]string{"X-Global": "g", "X-Over": "global"}
	o.Read = &Request{Path: "/kv/{key}?field=field{field}", Headers: map[string]string{"X-Over": "read"}}
	o.Update = &Request{Path: "/kv/{key}", Body: `{"field{field}":"{value}"}`, Headers: map[string]string{"Content-Type": "application/json"}}
	o.Insert = &Request{Path: "/kv/{keynum}", Body: `{fields_json}`}
	o.Scan = &Request{Method: "REPORT", Path: "/scan?start={key}&n={scan_length}&v={value}"}
	o.ReadModifyWrite = &Request{Method: "PATCH", Path: "/static", Body: "fixed", Headers: map[string]string{"Host": "kv.example"}}
	_, c := open(t, o)

	cases := []struct {
		op                     *workload.Op
		method, uri, body, hdr string
	}{
		{testOp(workload.Read), "GET", "/api/kv/user42?field=field2", "", "X-Over=read"},
		{testOp(workload.Update), "PUT", "/api/kv/user42", `{"field2":"v2[x]"}`, "Content-Type=application/json"},
		{func() *workload.Op { op := testOp(workload.Insert); op.Field = -1; return op }(),
			"POST", "/api/kv/42", `{"field0":"v0>","field1":"v1?","field2":"v2[x]"}`, "X-Over=global"},
		{testOp(workload.Scan), "REPORT", "/api/scan?start=user42&n=7&v=v2%5Bx%5D", "", "X-Global=g"},
		{testOp(workload.ReadModifyWrite), "PATCH", "/api/static", "fixed", "X-Global=g"},
	}
	for _, tc := range cases {
		if err := c.Do(context.Background(), tc.op); err != nil {
			t.Fatalf("%s: %v", tc.op.Type, err)
		}
		r := s.last()
		if r.method != tc.method || r.uri != tc.uri || r.body != tc.body {
			t.Errorf("%s: got %s %s body %q, want %s %s body %q", tc.op.Type, r.method, r.uri, r.body, tc.method, tc.uri, tc.body)
		}
		k, v, _ := strings.Cut(tc.hdr, "=")
		if got := r.header.Get(k); got != v {
			t.Errorf("%s: header %s = %q, want %q", tc.op.Type, k, got, v)
		}
		if r.header.Get("X-Global") != "g" {
			t.Errorf("%s: global header missing", tc.op.Type)
		}
		if r.length != int64(len(tc.body)) {
			t.Errorf("%s: Content-Length %d, want %d", tc.op.Type, r.length, len(tc.body))
		}
	}
	if r := s.last(); r.host != "kv.example" {
		t.Errorf("Host header %q, want kv.example", r.host)
	}
	// Rendering reuses the client's buffers: many requests in a row keep
	// rendering the right bodies.
	for i := range 50 {
		op := testOp(workload.Update)
		op.Field = i % 3
		if err := c.Do(context.Background(), op); err != nil {
			t.Fatal(err)
		}
		want := `{"field` + strconv.Itoa(op.Field) + `":"` + string(op.Values[op.Field]) + `"}`
		if got := s.last().body; got != want {
			t.Fatalf("request %d: body %q, want %q", i, got, want)
		}
	}
}

func TestDefaultMethods(t *testing.T) {
	s := newServer(t, nil)
	o := base(s.URL)
	for _, p := range []**Request{&o.Update, &o.Insert, &o.Scan, &o.ReadModifyWrite} {
		*p = &Request{Path: "/x"}
	}
	_, c := open(t, o)
	want := map[workload.OpType]string{workload.Read: "GET", workload.Update: "PUT", workload.Insert: "POST", workload.Scan: "GET", workload.ReadModifyWrite: "PUT"}
	for typ, m := range want {
		if err := c.Do(context.Background(), testOp(typ)); err != nil {
			t.Fatal(err)
		}
		if got := s.last().method; got != m {
			t.Errorf("%s: method %s, want %s", typ, got, m)
		}
	}
}

// statusServer answers with the status code given as the key number.
func statusServer(t *testing.T) *server {
	return newServer(t, func(r *http.Request) int {
		n, _ := strconv.Atoi(r.URL.Path[len("/s/"):])
		return n
	})
}

func statusOp(code int) *workload.Op {
	op := testOp(workload.Read)
	op.KeyNum = uint64(code)
	return op
}

func kindOf(err error) string {
	var k target.Kinder
	if errors.As(err, &k) {
		return k.Kind()
	}
	return "?"
}

func TestSuccessRules(t *testing.T) {
	s := statusServer(t)
	for _, tc := range []struct {
		success []string
		ok      []int
		fail    []int
	}{
		{nil, []int{200, 201, 204, 299}, []int{301, 404, 500, 503}}, // default 2xx
		{[]string{"200-204", "404"}, []int{200, 204, 404}, []int{205, 302, 500}},
		{[]string{"2xx", "3xx"}, []int{200, 301, 302, 307}, []int{400, 500}}, // redirects are not followed
	} {
		o := base(s.URL)
		o.Read.Path = "/s/{keynum}"
		if tc.success != nil {
			o.Success = tc.success
		}
		_, c := open(t, o)
		for _, code := range tc.ok {
			if err := c.Do(context.Background(), statusOp(code)); err != nil {
				t.Errorf("success %v: status %d: %v", o.Success, code, err)
			}
		}
		for _, code := range tc.fail {
			err := c.Do(context.Background(), statusOp(code))
			if want := "http_" + strconv.Itoa(code); kindOf(err) != want {
				t.Errorf("success %v: status %d: kind %q (%v), want %s", o.Success, code, kindOf(err), err, want)
			}
		}
	}
	_, c := open(t, func() *Options { o := base(s.URL); o.Read.Path = "/s/{keynum}"; return o }())
	err := c.Do(context.Background(), statusOp(500))
	if kindOf(err) != "http_500" || !strings.Contains(err.Error(), "GET /s/500: status 500") {
		t.Errorf("error %q, kind %s", err, kindOf(err))
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, c := open(t, base("http://"+addr))
	err = c.Do(context.Background(), testOp(workload.Read))
	if kindOf(err) != "connection" {
		t.Fatalf("kind %q (%v), want connection", kindOf(err), err)
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
	}))
	defer s.Close()
	defer close(release)

	// The target's own timeout.
	o := base(s.URL)
	o.Timeout = spec.Duration{Duration: 100 * time.Millisecond}
	_, c := open(t, o)
	start := time.Now()
	err := c.Do(context.Background(), testOp(workload.Read))
	if kindOf(err) != "timeout" {
		t.Fatalf("kind %q (%v), want timeout", kindOf(err), err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("timed out after %v", el)
	}

	// The engine's per-request deadline.
	_, c = open(t, base(s.URL))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := c.Do(ctx, testOp(workload.Read)); kindOf(err) != "timeout" {
		t.Fatalf("kind %q (%v), want timeout", kindOf(err), err)
	}
}

func TestKeepAlive(t *testing.T) {
	for _, keep := range []bool{true, false} {
		s := newServer(t, nil)
		o := base(s.URL)
		o.KeepAlive = keep
		o.Update = &Request{Path: "/kv/{key}", Body: "{value}"}
		_, c := open(t, o)
		const n = 40
		for i := range n {
			op := testOp(workload.Read)
			if i%2 == 1 {
				op.Type = workload.Update
			}
			if err := c.Do(context.Background(), op); err != nil {
				t.Fatal(err)
			}
		}
		got := s.newConns.Load()
		if keep && got != 1 || !keep && got != n {
			t.Errorf("keep_alive %v: %d connections for %d requests", keep, got, n)
		}
	}
}

func TestAuthHeaderEnv(t *testing.T) {
	const secret = "Bearer s3cr3t-t0ken"
	t.Setenv("HEADROOM_TEST_AUTH", secret)
	s := newServer(t, func(r *http.Request) int {
		if r.URL.Path == "/fail/user42" {
			return http.StatusUnauthorized
		}
		return http.StatusOK
	})
	o := base(s.URL)
	o.AuthHeaderEnv = "HEADROOM_TEST_AUTH"
	o.Update = &Request{Path: "/fail/{key}", Body: "{value}"}
	_, c := open(t, o)
	if err := c.Do(context.Background(), testOp(workload.Read)); err != nil {
		t.Fatal(err)
	}
	if got := s.last().header.Get("Authorization"); got != secret {
		t.Fatalf("Authorization %q", got)
	}
	err := c.Do(context.Background(), testOp(workload.Update))
	if err == nil || kindOf(err) != "http_401" || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("error %v", err)
	}
	// A transport error does not show it either.
	s.Close()
	err = c.Do(context.Background(), testOp(workload.Read))
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("error %v", err)
	}
	// An unset variable is an error at Open that names the variable only.
	o.AuthHeaderEnv = "HEADROOM_TEST_AUTH_UNSET"
	if _, err := Open(*o); err == nil || !strings.Contains(err.Error(), "HEADROOM_TEST_AUTH_UNSET") {
		t.Fatalf("error %v", err)
	}
}

func TestValidation(t *testing.T) {
	for _, tc := range []struct {
		edit func(o *Options)
		want string
	}{
		{func(o *Options) { o.BaseURL = "" }, "base_url: is required"},
		{func(o *Options) { o.BaseURL = "ftp://example.com" }, "base_url: \"ftp://example.com\" is not an http or https URL"},
		{func(o *Options) { o.BaseURL = "localhost:8080" }, "base_url:"},
		{func(o *Options) { o.BaseURL = "http://" }, "base_url:"},
		{func(o *Options) { o.BaseURL = "http://u:pw@host" }, "base_url: must not contain a user name or password"},
		{func(o *Options) { o.Read.Path = "/kv/{id}" }, "read.path: unknown placeholder {id}"},
		{func(o *Options) { o.Update = &Request{Path: "/x", Body: `{"a":"{valu}"}`} }, "update.body: unknown placeholder {valu}"},
		{func(o *Options) { o.Read.Path = "kv/{key}" }, "read.path: \"kv/{key}\" must start with a single /"},
		{func(o *Options) { o.Read.Method = "GE T" }, "read.method:"},
		{func(o *Options) { o.Read.Headers = map[string]string{"Bad Name": "x"} }, "read.headers: \"Bad Name\" is not a valid header name"},
		{func(o *Options) { o.Headers = map[string]string{"X-A": "line\nbreak"} }, "headers: the value of X-A must be on one line"},
		{func(o *Options) { o.Read = nil }, "read: no request template is given"},
		{func(o *Options) { o.Success = []string{"2xy"} }, "success[0]: \"2xy\" is not a status code"},
		{func(o *Options) { o.Success = []string{"200", "700"} }, "success[1]: \"700\""},
		{func(o *Options) { o.Success = []string{"299-200"} }, "success[0]:"},
		{func(o *Options) { o.Success = []string{} }, "success: must list"},
		{func(o *Options) { o.MaxConnections = -1 }, "max_connections:"},
		{func(o *Options) { o.Timeout.Duration = -time.Second }, "timeout:"},
		{func(o *Options) { o.AuthHeaderEnv = "MY-TOKEN" }, "auth_header_env:"},
	} {
		o := base("http://127.0.0.1:1")
		tc.edit(o)
		err := validate(o)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("got %v, want an error starting %q", err, tc.want)
		}
	}
	if err := validate(base("https://example.com/prefix/")); err != nil {
		t.Errorf("valid options: %v", err)
	}
}

func TestPrepareNeedsTemplates(t *testing.T) {
	tg, err := Open(*base("http://127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	w, _ := workload.Preset("a") // read and update
	err = tg.Prepare(context.Background(), w, false)
	if err == nil || !strings.Contains(err.Error(), "uses update but target.update is not given") {
		t.Fatalf("error %v", err)
	}
	w, _ = workload.Preset("c") // read only
	if err := tg.Prepare(context.Background(), w, false); err != nil {
		t.Fatal(err)
	}
	// Population inserts, so it needs an insert template.
	err = tg.Prepare(context.Background(), w, true)
	if err == nil || !strings.Contains(err.Error(), "target.insert is not given") {
		t.Fatalf("error %v", err)
	}
}
