package httptarget

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// client is one request slot. It renders paths and bodies into buffers it
// reuses; what each request still allocates is the http.Request (a copy of
// a prototype carrying the context), one block holding its URL and body
// reader, and the path string.
type client struct {
	t       *Target
	proto   [workload.NumOpTypes]http.Request // method, headers, host; no context
	path    []byte
	body    *bodyBuf // buffer of the latest request body
	getBody func() (io.ReadCloser, error)
	cur     []byte   // body bytes of the request in flight
	owner   *bodyBuf // cur's buffer; nil when cur is a shared static body
}

// bodyBuf is a rendered request body. The transport may read a request
// body, and close it, after the response has arrived (http.RoundTripper's
// contract), so a buffer is reused only once its body has been closed.
type bodyBuf struct {
	b    []byte
	free atomic.Bool
}

// reqBody is one request's body reader.
type reqBody struct {
	r      bytes.Reader
	owner  *bodyBuf // nil for a shared static body
	closed atomic.Bool
}

func (b *reqBody) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *reqBody) Close() error {
	if b.closed.CompareAndSwap(false, true) && b.owner != nil {
		b.owner.free.Store(true)
	}
	return nil
}

// perRequest is allocated once per request.
type perRequest struct {
	url  url.URL
	body reqBody
}

// rewind is the requests' GetBody: the transport calls it (in Do's
// goroutine, inside RoundTrip) to resend the body on a fresh connection
// when a kept-alive one was closed under it.
func (c *client) rewind() (io.ReadCloser, error) {
	b := &reqBody{owner: c.owner}
	if b.owner != nil {
		b.owner.free.Store(false)
	}
	b.r.Reset(c.cur)
	return b, nil
}

// Do sends op's request, reads and discards the response body, and judges
// the status against the success list.
func (c *client) Do(ctx context.Context, op *workload.Op) error {
	t := c.t
	cr := t.reqs[op.Type]
	if cr == nil {
		return fmt.Errorf("http target: no request template for %s", op.Type)
	}
	path := t.path[op.Type]
	if path == "" {
		c.path = append(c.path[:0], t.base.Path...)
		c.path = cr.path.render(c.path, op, true)
		path = string(c.path)
	}
	pr := &perRequest{url: *t.base}
	pr.url.Opaque, pr.url.RawQuery, _ = strings.Cut(path, "?")
	req := c.proto[op.Type].WithContext(ctx)
	req.URL = &pr.url
	if cr.body != nil {
		if cr.body.static() {
			c.cur, c.owner = cr.bodyText, nil
		} else {
			if c.body == nil || !c.body.free.Load() {
				c.body = &bodyBuf{} // the last one may still be read; leave it
			}
			c.body.free.Store(false)
			c.body.b = cr.body.render(c.body.b[:0], op, false)
			c.cur, c.owner = c.body.b, c.body
		}
		pr.body.owner = c.owner
		if len(c.cur) == 0 {
			req.Body = http.NoBody
			if c.owner != nil {
				c.owner.free.Store(true)
			}
		} else {
			pr.body.r.Reset(c.cur)
			req.Body = &pr.body
			req.ContentLength = int64(len(c.cur))
			req.GetBody = c.getBody
		}
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return requestError(ctx, cr.method, pr.url.Opaque, err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return requestError(ctx, cr.method, pr.url.Opaque, err)
	}
	code := resp.StatusCode
	for _, r := range t.success {
		if code >= r.lo && code <= r.hi {
			return nil
		}
	}
	return &target.KindError{K: "http_" + strconv.Itoa(code), Err: &statusError{method: cr.method, path: pr.url.Opaque, code: code}}
}

// statusError is a response whose status is not in the success list.
type statusError struct {
	method, path string
	code         int
}

func (e *statusError) Error() string {
	return e.method + " " + e.path + ": status " + strconv.Itoa(e.code) + " " + http.StatusText(e.code)
}

// requestError names a failed exchange "timeout" or "connection". Its message
// gives the method, the path and the cause, never a header (the
// Authorization value is a secret) nor the whole URL.
func requestError(ctx context.Context, method, path string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	err = fmt.Errorf("%s %s: %w", method, path, err)
	if errors.Is(ctx.Err(), context.Canceled) {
		return err // the engine counts it as canceled
	}
	var ne net.Error
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return &target.KindError{K: "timeout", Err: err}
	}
	return &target.KindError{K: "connection", Err: err}
}

func (c *client) Close() error { return nil }
