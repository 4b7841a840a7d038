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

	"github.com/headroom-dev/headroom/internal/apptier"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// client is one request slot: every request goes to the next application
// server in turn.
type client struct {
	t    *Target
	path []byte
	body []byte
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
	c.path = append(c.path[:0], base...)
	c.path = append(c.path, "?key="...)
	c.path = append(c.path, url.QueryEscape(string(op.Key))...)
	if op.Field >= 0 && op.Type != workload.Insert {
		c.path = append(c.path, "&field="...)
		c.path = strconv.AppendInt(c.path, int64(op.Field), 10)
	}
	if op.Type == workload.Scan {
		c.path = append(c.path, "&n="...)
		c.path = strconv.AppendInt(c.path, int64(op.ScanLength), 10)
	}
	var body io.Reader
	if withValues {
		vals := op.Values
		if op.Field >= 0 && op.Type != workload.Insert {
			vals = op.Values[op.Field : op.Field+1]
		}
		var err error
		if c.body, err = apptier.AppendValues(c.body[:0], vals); err != nil {
			return err
		}
		body = bytes.NewReader(c.body)
	}
	return c.t.send(ctx, c.t.pick(), method, string(c.path), body)
}

// LoadBatch implements target.Loader: the records go to one application
// server in one request, which inserts them in one transaction.
func (c *client) LoadBatch(ctx context.Context, ops []*workload.Op) error {
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
	return c.t.send(ctx, c.t.pick(), http.MethodPost, apptier.PathLoad, bytes.NewReader(c.body))
}

// send runs one request and turns its outcome into the target's errors:
// 404 is a missing record, other failures carry the server's error kind.
func (t *Target) send(ctx context.Context, a *appServer, method, path string, body io.Reader) error {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, body)
	if err != nil {
		return err
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
