package httptarget

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/workload"
)

// kvServer is a REST key-value service: PUT or POST /kv/{key} stores the
// body, GET /kv/{key} returns it or 404.
func kvServer(t *testing.T) (*httptest.Server, func() (gets, puts int)) {
	var mu sync.Mutex
	data := map[string][]byte{}
	var gets, puts int
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, ok := strings.CutPrefix(r.URL.Path, "/kv/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		switch r.Method {
		case http.MethodGet:
			mu.Lock()
			v, found := data[key]
			gets++
			mu.Unlock()
			if !found {
				http.NotFound(w, r)
				return
			}
			w.Write(v)
		case http.MethodPut, http.MethodPost:
			b, err := io.ReadAll(r.Body)
			if err != nil || len(b) == 0 {
				http.Error(w, "empty body", http.StatusBadRequest)
				return
			}
			mu.Lock()
			data[key] = b
			puts++
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	}))
	t.Cleanup(s.Close)
	return s, func() (int, int) { mu.Lock(); defer mu.Unlock(); return gets, puts }
}

// YCSB workload A through the load engine against a REST service: populate
// through insert requests, then a closed loop of two clients for a second.
func TestEndToEndWorkloadA(t *testing.T) {
	s, counts := kvServer(t)
	o := defaultOptions()
	o.BaseURL = s.URL
	o.Read = &Request{Path: "/kv/{key}"}
	o.Update = &Request{Path: "/kv/{key}", Body: `{"field{field}":"{value}"}`}
	o.Insert = &Request{Method: "PUT", Path: "/kv/{key}", Body: "{fields_json}"}
	tg, err := Open(*o)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()

	w, err := workload.Preset("a")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := tg.Prepare(ctx, w, true); err != nil {
		t.Fatal(err)
	}
	gen, err := workload.New(w, 7)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tg.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	op := gen.NewOp()
	for i := range w.RecordCount {
		gen.Populate(i, op)
		if err := c.Do(ctx, op); err != nil {
			t.Fatalf("populate %d: %v", i, err)
		}
	}
	c.Close()

	cfg := load.Config{Model: "closed", Clients: 2, Timeout: time.Second, Measure: time.Second,
		Interval: time.Second, Seed: 1, Ops: []workload.OpType{workload.Read, workload.Update}}
	kinds := map[string]int64{}
	res, err := load.Run(ctx, cfg, tg, gen, func(tk load.Tick) error {
		for _, st := range tk.Stats {
			for k, n := range st.ErrorKinds {
				kinds[k] += n
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Measured.Completed == 0 || res.Measured.Errors != 0 {
		t.Fatalf("completed %d, errors %d %v", res.Measured.Completed, res.Measured.Errors, kinds)
	}
	gets, puts := counts()
	if gets == 0 || puts <= int(w.RecordCount) {
		t.Fatalf("server saw %d gets and %d puts", gets, puts)
	}
	t.Logf("%d requests in 1 s (%.0f/s)", res.Measured.Completed, res.Throughput)
}

// The options decode from a spec's target section with the spec's own
// decoder, and validation errors point at the option.
func TestSpecDecoding(t *testing.T) {
	decode := func(src string) (*Options, spec.Errors) {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(src), &n); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Target spec.Target `yaml:"target"`
		}
		errs := spec.DecodeNode("spec.yaml", &n, "", &doc)
		o, _ := doc.Target.Options.(*Options)
		return o, errs
	}
	o, errs := decode(`
target:
  type: http
  base_url: https://kv.example.com/v1
  read: {path: "/kv/{key}"}
  update:
    method: PATCH
    path: /kv/{key}
    body: '{"field{field}":"{value}"}'
    headers: {Content-Type: application/json}
  success: [2xx, 404, 300-302]
  keep_alive: false
  max_connections: 8
  timeout: 2s
  headers: {X-Client: headroom}
  auth_header_env: KV_TOKEN
`)
	if errs != nil {
		t.Fatal(errs)
	}
	if o.BaseURL != "https://kv.example.com/v1" || o.Read.Path != "/kv/{key}" || o.Update.Method != "PATCH" ||
		o.Update.Headers["Content-Type"] != "application/json" || strings.Join(o.Success, ",") != "2xx,404,300-302" ||
		o.KeepAlive || o.MaxConnections != 8 || o.Timeout.Duration != 2*time.Second || o.Headers["X-Client"] != "headroom" ||
		o.AuthHeaderEnv != "KV_TOKEN" || o.TLSInsecureSkipVerify {
		t.Fatalf("decoded %+v", o)
	}
	o, _ = decode("target: {type: http, base_url: 'http://h', read: {path: /x}}")
	if !o.KeepAlive || o.Timeout.Duration != 10*time.Second || strings.Join(o.Success, ",") != "2xx" {
		t.Fatalf("defaults %+v", o)
	}
	_, errs = decode("target:\n  type: http\n  base_url: http://h\n  read:\n    path: /kv/{id}\n")
	if len(errs) != 1 || errs[0].Path != "target.read.path" || errs[0].Line != 5 || !strings.Contains(errs[0].Msg, "unknown placeholder {id}") {
		t.Fatalf("errors %v", errs)
	}
}
