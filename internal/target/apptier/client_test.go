package apptier

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/workload"
)

// holdingTransport answers every request at once and keeps its body
// unread, as http.Transport may when a server answers early or a request
// times out: the body is read (and closed) after RoundTrip returned.
type holdingTransport struct {
	reqs chan *http.Request
}

func (h *holdingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h.reqs <- r
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Body: http.NoBody, Header: http.Header{}, Request: r}, nil
}

func testTarget(rt http.RoundTripper) *Target {
	t := &Target{client: &http.Client{Transport: rt}}
	apps := []*appServer{newApp("app1", "10.0.0.1", 8080, nil)}
	t.setServers(apps)
	t.rot.Store(apps)
	return t
}

// The client reuses its body buffer, so it must not overwrite it while the
// transport still holds the previous request's body (it used to: the body
// read late held the next request's values).
func TestBodyBufferNotReusedWhileSending(t *testing.T) {
	rt := &holdingTransport{reqs: make(chan *http.Request, 4)}
	c := &client{t: testTarget(rt)}
	op := func(v string) *workload.Op {
		return &workload.Op{Type: workload.Update, Key: []byte("user1"), Field: -1, Values: [][]byte{[]byte(v), []byte(v)}}
	}
	if err := c.Do(context.Background(), op("first")); err != nil {
		t.Fatal(err)
	}
	first := <-rt.reqs
	if first.ContentLength != int64(len("first\tfirst")) || first.URL.String() != "http://10.0.0.1:8080/update?key=user1" {
		t.Fatalf("first request %s, length %d", first.URL, first.ContentLength)
	}
	done := make(chan error, 1)
	go func() { done <- c.Do(context.Background(), op("second")) }()
	// Give an unsafe client the chance to overwrite the buffer.
	select {
	case <-rt.reqs:
		t.Fatal("the second request was sent before the first body was closed")
	case <-time.After(200 * time.Millisecond):
	}
	b, err := io.ReadAll(first.Body)
	if err != nil || string(b) != "first\tfirst" {
		t.Fatalf("first body read late: %q, %v", b, err)
	}
	first.Body.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	second := <-rt.reqs
	b, _ = io.ReadAll(second.Body)
	second.Body.Close()
	if string(b) != "second\tsecond" {
		t.Errorf("second body %q", b)
	}
	// A retry on a new connection gets the same body again.
	third := op("third")
	go func() { done <- c.Do(context.Background(), third) }()
	r := <-rt.reqs
	<-done
	again, err := r.GetBody()
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := io.ReadAll(r.Body)
	b2, _ := io.ReadAll(again)
	r.Body.Close()
	again.Close()
	again.Close() // a second Close must not release another body
	if string(b1) != "third\tthird" || string(b1) != string(b2) {
		t.Errorf("body %q, replayed %q", b1, b2)
	}
	c.sent.Wait()
}

func TestAppendQueryEscape(t *testing.T) {
	for _, k := range []string{"user6284781860667377211", "a b&c=d/é%~._-", ""} {
		if got := string(appendQueryEscape([]byte("x="), []byte(k))); got != "x="+url.QueryEscape(k) {
			t.Errorf("%q: %q, want %q", k, got, "x="+url.QueryEscape(k))
		}
	}
	dst := make([]byte, 0, 64)
	key := []byte("user6284781860667377211")
	if n := testing.AllocsPerRun(100, func() { dst = appendQueryEscape(dst[:0], key) }); n != 0 {
		t.Errorf("%v allocations per key", n)
	}
}

// The per-request work of the client itself (URL and body in reused
// buffers) allocates only what net/http needs: the URL string and the body
// wrapper, besides the request and response.
func TestClientRequestAllocations(t *testing.T) {
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	})
	c := &client{t: testTarget(rt)}
	op := &workload.Op{Type: workload.Update, Key: []byte("user6284781860667377211"), Field: -1,
		Values: [][]byte{[]byte(strings.Repeat("v", 100)), []byte(strings.Repeat("w", 100))}}
	ctx := context.Background()
	c.Do(ctx, op)
	read := &workload.Op{Type: workload.Read, Key: op.Key, Field: 3}
	// The bound is net/http's own per-request allocations plus our two; it
	// fails when the client again allocates per key or per URL part.
	base := testing.AllocsPerRun(200, func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://10.0.0.1:8080/read?key=user6284781860667377211&field=3", nil)
		resp, _ := c.t.client.Do(req)
		resp.Body.Close()
	})
	if n := testing.AllocsPerRun(200, func() { c.Do(ctx, read) }); n > base+1 {
		t.Errorf("read: %v allocations per request, net/http alone %v", n, base)
	}
	if n := testing.AllocsPerRun(200, func() { c.Do(ctx, op) }); n > base+3 {
		t.Errorf("update: %v allocations per request, net/http alone %v", n, base)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
