package httptarget

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/headroom-dev/headroom/internal/workload"
)

// BenchmarkDo measures one update request (rendered path and body) against a
// local server; allocations include net/http's own, client and server side.
func BenchmarkDo(b *testing.B) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer s.Close()
	o := defaultOptions()
	o.BaseURL = s.URL
	o.Update = &Request{Path: "/kv/{key}", Body: `{"field{field}":"{value}"}`}
	tg, err := Open(*o)
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close()
	c, _ := tg.NewClient(context.Background())
	op := testOp(workload.Update)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Do(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRender measures rendering alone: it allocates nothing.
func BenchmarkRender(b *testing.B) {
	tp, _ := parseTemplate("update.path", "/kv/{key}?f={field}")
	tb, _ := parseTemplate("update.body", `{"field{field}":"{value}"}`)
	op := testOp(workload.Update)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = tp.render(buf[:0], op, true)
		buf = tb.render(buf, op, false)
	}
}
