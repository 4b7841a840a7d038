// Package httptarget drives a web service over HTTP/1.1: each YCSB operation
// becomes one request rendered from a template in the spec (method, path,
// body, headers), and the response status decides success. It measures the
// service and everything in front of it (proxies, caches, the database
// behind), not any one database.
package httptarget

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

func init() {
	registry.Register(registry.Factory{
		Name:       "http",
		Summary:    "a web service over HTTP/1.1; each operation is one request rendered from a template",
		NewOptions: func() any { return defaultOptions() },
		Validate:   validate,
		Open:       func(o any, _ registry.Env) (target.Target, error) { return Open(*o.(*Options)) },
	})
}

// Target is an HTTP service. All clients share one http.Client and its
// connection pool.
type Target struct {
	base      *url.URL
	reqs      [workload.NumOpTypes]*compiled
	header    [workload.NumOpTypes]http.Header // global + template + auth headers
	host      [workload.NumOpTypes]string      // Host header override, if any
	path      [workload.NumOpTypes]string      // base path + template path, when static
	success   []statusRange
	transport *http.Transport
	client    *http.Client
}

// maxIdlePerHost bounds idle kept-alive connections when max_connections
// does not; it is far above any sensible number of request slots, so that
// every slot keeps its connection between requests.
const maxIdlePerHost = 1 << 16

// Open checks opts and builds the target; it does not contact the service.
func Open(opts Options) (*Target, error) {
	if err := validate(&opts); err != nil {
		return nil, fmt.Errorf("http target: %w", err)
	}
	base, _ := parseBaseURL(opts.BaseURL)
	success, _ := parseSuccess(opts.Success)
	auth, err := authHeader(opts.AuthHeaderEnv)
	if err != nil {
		return nil, err
	}
	t := &Target{base: base, success: success}
	for i, r := range opts.templates() {
		if r == nil {
			continue
		}
		c, _ := compileRequest(workload.OpType(i), r)
		h := make(http.Header, len(opts.Headers)+len(c.header)+1)
		for k, v := range opts.Headers {
			h.Set(k, v)
		}
		for k, v := range c.header {
			h[k] = v
		}
		if auth != "" {
			h.Set("Authorization", auth)
		}
		if host := h.Get("Host"); host != "" {
			t.host[i] = host
			h.Del("Host")
		}
		if c.path.static() {
			t.path[i] = base.Path + c.path.text
		}
		t.reqs[i], t.header[i] = c, h
	}
	idle := maxIdlePerHost
	if opts.MaxConnections > 0 {
		idle = opts.MaxConnections
	}
	t.transport = &http.Transport{
		Proxy:               nil, // measure the service, not a proxy from the environment
		DialContext:         (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: opts.TLSInsecureSkipVerify}, //nolint:gosec // the user's explicit choice
		TLSHandshakeTimeout: 10 * time.Second,
		DisableKeepAlives:   !opts.KeepAlive,
		DisableCompression:  true, // bodies are discarded; do not spend client CPU on them
		MaxIdleConnsPerHost: idle,
		MaxConnsPerHost:     opts.MaxConnections,
		IdleConnTimeout:     90 * time.Second,
	}
	t.client = &http.Client{
		Transport: t.transport,
		Timeout:   opts.Timeout.Duration,
		// A redirect is a response like any other: it is judged by the
		// success list, not followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return t, nil
}

// Prepare checks that every operation of the workload's mix, and the
// population's inserts when it is about to populate, has a template. It
// cannot empty the service; fresh only means that population follows.
func (t *Target) Prepare(_ context.Context, w workload.Config, fresh bool) error {
	for i, p := range w.Mix {
		if p > 0 && t.reqs[i] == nil {
			name := workload.OpType(i).String()
			return fmt.Errorf("http target: the workload's mix uses %s but target.%s is not given; add a request template for it, e.g. %s: {path: \"/users/{key}\"}", name, name, name)
		}
	}
	if fresh && w.RecordCount > 0 && t.reqs[workload.Insert] == nil {
		return errors.New("http target: the populate phase inserts record_count records but target.insert is not given; add an insert template, or set phases.populate: false when the service already holds the records")
	}
	return nil
}

// NewClient returns a client; all clients share the connection pool.
func (t *Target) NewClient(context.Context) (target.Client, error) {
	c := &client{t: t}
	for i, r := range t.reqs {
		if r == nil {
			continue
		}
		c.proto[i] = http.Request{
			Method:     r.method,
			Header:     t.header[i],
			Host:       t.host[i],
			Proto:      "HTTP/1.1",
			ProtoMajor: 1,
			ProtoMinor: 1,
		}
	}
	c.getBody = c.rewind
	return c, nil
}

// Close closes the idle connections.
func (t *Target) Close() error {
	t.transport.CloseIdleConnections()
	return nil
}
