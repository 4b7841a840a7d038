package httptarget

import (
	"fmt"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/workload"
)

// Options are the http target's spec fields (docs/targets.md).
type Options struct {
	// BaseURL is the scheme, host and optional path prefix every request
	// goes to, e.g. "http://127.0.0.1:8080/api". Required.
	BaseURL string `yaml:"base_url"`
	// One request template per operation type; nil when the spec has none.
	Read            *Request `yaml:"read"`
	Update          *Request `yaml:"update"`
	Insert          *Request `yaml:"insert"`
	Scan            *Request `yaml:"scan"`
	ReadModifyWrite *Request `yaml:"read_modify_write"`
	// Success lists the status codes that count as success: single codes
	// ("404"), classes ("2xx") and inclusive ranges ("200-299"). Default
	// ["2xx"].
	Success []string `yaml:"success"`
	// KeepAlive reuses connections between requests (default true).
	KeepAlive bool `yaml:"keep_alive"`
	// MaxConnections caps the open connections to the host (default 0: no
	// cap); requests beyond it wait for a connection, in their latency.
	MaxConnections int `yaml:"max_connections"`
	// Timeout bounds each request from dial to the end of the response body
	// (default 10s; 0 = only the load section's timeout applies).
	Timeout spec.Duration `yaml:"timeout"`
	// TLSInsecureSkipVerify accepts any server certificate (default false).
	TLSInsecureSkipVerify bool `yaml:"tls_insecure_skip_verify"`
	// Headers are sent with every request; a template's headers override them.
	Headers map[string]string `yaml:"headers"`
	// AuthHeaderEnv names an environment variable whose value is sent as the
	// Authorization header. The value is never written to results or errors.
	AuthHeaderEnv string `yaml:"auth_header_env"`
}

// Request is the request template of one operation type.
type Request struct {
	// Method defaults to GET for read and scan, PUT for update and
	// read_modify_write, POST for insert.
	Method string `yaml:"method"`
	// Path is appended to the base URL's path; it starts with "/" and may
	// carry a query ("/users?id={key}"). Placeholders in it are
	// percent-escaped.
	Path string `yaml:"path"`
	// Body is sent as written, placeholders replaced without escaping
	// (optional; no body when empty).
	Body string `yaml:"body"`
	// Headers are added to this operation's requests (literal values).
	Headers map[string]string `yaml:"headers"`
}

func defaultOptions() *Options {
	return &Options{
		Success:   []string{"2xx"},
		KeepAlive: true,
		Timeout:   spec.Duration{Duration: 10 * time.Second},
	}
}

// templates returns the request templates indexed by operation type.
func (o *Options) templates() [workload.NumOpTypes]*Request {
	var t [workload.NumOpTypes]*Request
	t[workload.Read] = o.Read
	t[workload.Update] = o.Update
	t[workload.Insert] = o.Insert
	t[workload.Scan] = o.Scan
	t[workload.ReadModifyWrite] = o.ReadModifyWrite
	return t
}

var defaultMethods = [workload.NumOpTypes]string{"GET", "PUT", "POST", "GET", "PUT"}

func validate(o any) error {
	opts := o.(*Options)
	if _, err := parseBaseURL(opts.BaseURL); err != nil {
		return err
	}
	have := false
	for t, r := range opts.templates() {
		if r == nil {
			continue
		}
		have = true
		if _, err := compileRequest(workload.OpType(t), r); err != nil {
			return err
		}
	}
	if !have {
		return fmt.Errorf("read: no request template is given; add one for each operation of the workload, e.g. read: {path: \"/users/{key}\"}")
	}
	if _, err := parseSuccess(opts.Success); err != nil {
		return err
	}
	if opts.MaxConnections < 0 {
		return fmt.Errorf("max_connections: must be 0 (no limit) or more")
	}
	if opts.Timeout.Duration < 0 {
		return fmt.Errorf("timeout: must not be negative")
	}
	if err := checkHeaders("headers", opts.Headers); err != nil {
		return err
	}
	if opts.AuthHeaderEnv != "" && !validEnvName(opts.AuthHeaderEnv) {
		return fmt.Errorf("auth_header_env: %q is not an environment variable name; use letters, digits and underscores", opts.AuthHeaderEnv)
	}
	return nil
}

// parseBaseURL checks base_url and returns it with any trailing slash of its
// path removed (templates' paths start with one).
func parseBaseURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, fmt.Errorf("base_url: is required; give the service's address, e.g. http://127.0.0.1:8080")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base_url: %q is not an http or https URL; write it as http://host:port or https://host/prefix", s)
	}
	if u.User != nil {
		return nil, fmt.Errorf("base_url: must not contain a user name or password; put credentials in an environment variable named by auth_header_env")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, fmt.Errorf("base_url: must not contain a query or fragment; put queries in the request templates' paths")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// statusRange is an inclusive range of status codes.
type statusRange struct{ lo, hi int }

func parseSuccess(list []string) ([]statusRange, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("success: must list at least one status code, class (2xx) or range (200-299)")
	}
	out := make([]statusRange, 0, len(list))
	for i, s := range list {
		r, ok := parseStatus(strings.TrimSpace(s))
		if !ok {
			return nil, fmt.Errorf("success[%d]: %q is not a status code (404), class (2xx) or range (200-299) within 100-599", i, s)
		}
		out = append(out, r)
	}
	return out, nil
}

func parseStatus(s string) (statusRange, bool) {
	code := func(s string) (int, bool) {
		n, err := strconv.Atoi(s)
		return n, err == nil && len(s) == 3 && n >= 100 && n <= 599
	}
	if len(s) == 3 && (s[1:] == "xx" || s[1:] == "XX") && s[0] >= '1' && s[0] <= '5' {
		lo := int(s[0]-'0') * 100
		return statusRange{lo, lo + 99}, true
	}
	if a, b, ok := strings.Cut(s, "-"); ok {
		lo, ok1 := code(strings.TrimSpace(a))
		hi, ok2 := code(strings.TrimSpace(b))
		return statusRange{lo, hi}, ok1 && ok2 && lo <= hi
	}
	n, ok := code(s)
	return statusRange{n, n}, ok
}

// checkHeaders validates header names and values without ever quoting a
// value, which may be a secret.
func checkHeaders(field string, h map[string]string) error {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !validToken(k) {
			return fmt.Errorf("%s: %q is not a valid header name; use letters, digits and - only", field, k)
		}
		if strings.ContainsAny(h[k], "\r\n\x00") {
			return fmt.Errorf("%s: the value of %s must be on one line", field, k)
		}
	}
	return nil
}

// validToken reports whether s is an HTTP token (RFC 9110 §5.6.2).
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

func validEnvName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// authHeader reads the Authorization value from the environment.
func authHeader(env string) (string, error) {
	if env == "" {
		return "", nil
	}
	v, ok := os.LookupEnv(env)
	if !ok || v == "" {
		return "", fmt.Errorf("http target: auth_header_env: environment variable %s is not set or empty; export it before running", env)
	}
	if strings.ContainsAny(v, "\r\n\x00") {
		return "", fmt.Errorf("http target: auth_header_env: the value of %s must be on one line", env)
	}
	return v, nil
}
