package apptier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/headroom-dev/headroom/internal/apptier"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// client is one request slot: every request goes to the next application
// server in turn. The URL and body buffers are reused across requests, so
// the hot path allocates little besides what net/http itself needs.
type client struct {
	t    *Target
	path []byte
	body []byte
	// sent counts the bodies over c.body the transport has not closed
	// yet: http.RoundTripper may read a body after Do returns (a timeout,
	// an early answer), so c.body is only overwritten once they are.
	sent sync.WaitGroup
}

func (c *client) Close() error { return nil }

// Do implements target.Client: one HTTP request per operation.
func (c *client) Do(ctx context.Context, op *workload.Op) error {
	method, base := http.MethodGet, ""
	withValues := false
	switch op.Type {
	case workload.Read:
		base = apptier.PathRead
	case workload.Scan:
		base = apptier.PathScan
	case workload.Update:
		method, base, withValues = http.MethodPost, apptier.PathUpdate, true
	case workload.Insert:
		method, base, withValues = http.MethodPost, apptier.PathInsert, true
	case workload.ReadModifyWrite:
		method, base, withValues = http.MethodPost, apptier.PathRMW, true
	default:
		return fmt.Errorf("apptier target: operation %v is not a YCSB operation", op.Type)
	}
	a := c.t.pick()
	c.path = append(c.path[:0], a.base...)
	c.path = append(c.path, base...)
	c.path = append(c.path, "?key="...)
	c.path = appendQueryEscape(c.path, op.Key)
	if op.Field >= 0 && op.Type != workload.Insert {
		c.path = append(c.path, "&field="...)
		c.path = strconv.AppendInt(c.path, int64(op.Field), 10)
	}
	if op.Type == workload.Scan {
		c.path = append(c.path, "&n="...)
		c.path = strconv.AppendInt(c.path, int64(op.ScanLength), 10)
	}
	if !withValues {
		return c.t.send(ctx, a, method, string(c.path), nil)
	}
	vals := op.Values
	if op.Field >= 0 && op.Type != workload.Insert {
		vals = op.Values[op.Field : op.Field+1]
	}
	c.sent.Wait()
	var err error
	if c.body, err = apptier.AppendValues(c.body[:0], vals); err != nil {
		a.Release()
		return err
	}
	return c.t.send(ctx, a, method, string(c.path), c.reqBody())
}

// LoadBatch implements target.Loader: the records go to one application
// server in one request, which inserts them in one transaction.
func (c *client) LoadBatch(ctx context.Context, ops []*workload.Op) error {
	c.sent.Wait()
	c.body = c.body[:0]
	var err error
	for _, op := range ops {
		c.body = append(c.body, op.Key...)
		c.body = append(c.body, '\t')
		if c.body, err = apptier.AppendValues(c.body, op.Values); err != nil {
			return err
		}
		c.body = append(c.body, '\n')
	}
	a := c.t.pick()
	c.t.loads.Add(1)
	return c.t.send(ctx, a, http.MethodPost, a.base+apptier.PathLoad, c.reqBody())
}

// reqBody is c.body as a request body that tells c.sent when the
// transport is done with it.
func (c *client) reqBody() *sentBody {
	return newSentBody(c.body, &c.sent)
}

// sentBody is a request body over a buffer its owner reuses: Close (which
// the transport always calls, possibly after RoundTrip returned) releases
// the buffer.
type sentBody struct {
	bytes.Reader
	buf    []byte
	wg     *sync.WaitGroup
	closed atomic.Bool
}

func newSentBody(buf []byte, wg *sync.WaitGroup) *sentBody {
	wg.Add(1)
	b := &sentBody{buf: buf, wg: wg}
	b.Reset(buf)
	return b
}

// Close releases the buffer; the transport may call it more than once.
func (b *sentBody) Close() error {
	if b.closed.CompareAndSwap(false, true) {
		b.wg.Done()
	}
	return nil
}

// replay is http.Request.GetBody: a fresh body over the same buffer, for a
// request the transport retries on a new connection.
func (b *sentBody) replay() (io.ReadCloser, error) {
	return newSentBody(b.buf, b.wg), nil
}

// appendQueryEscape appends s escaped as url.QueryEscape does, without
// allocating: YCSB keys are letters and digits and pass unchanged.
func appendQueryEscape(dst, s []byte) []byte {
	const hex = "0123456789ABCDEF"
	for _, ch := range s {
		switch {
		case ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.' || ch == '~':
			dst = append(dst, ch)
		case ch == ' ':
			dst = append(dst, '+')
		default:
			dst = append(dst, '%', hex[ch>>4], hex[ch&15])
		}
	}
	return dst
}

// send runs one request to server a (from pick) at u, releases a, and
// turns the outcome into the target's errors: 404 is a missing record,
// other failures carry the server's error kind. A body is always closed.
func (t *Target) send(ctx context.Context, a *appServer, method, u string, body *sentBody) error {
	defer a.Release()
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		if body != nil {
			body.Close()
		}
		return err
	}
	if body != nil {
		req.Body, req.GetBody, req.ContentLength = body, body.replay, int64(len(body.buf))
		if len(body.buf) == 0 {
			// NewRequest's convention for an empty body.
			body.Close()
			req.Body, req.GetBody = http.NoBody, nil
		}
	}
	resp, err := t.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) && ue.Timeout() {
			return &target.KindError{K: target.KindTimeout, Err: err}
		}
		if target.IsConnectionError(err) {
			return &target.KindError{K: target.KindConnection, Err: err}
		}
		return err
	}
	a.answered.Add(1)
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		_, err := io.Copy(io.Discard, resp.Body)
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode == http.StatusNotFound {
		return target.ErrNotFound
	}
	err = fmt.Errorf("application server %s: %s: %s", a.name, resp.Status, bytes.TrimSpace(msg))
	if k := resp.Header.Get(apptier.KindHeader); k != "" {
		return &target.KindError{K: k, Err: err}
	}
	return err
}
