package campaign

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/testnet"
)

// A target that accepts connections and never answers, and one nobody
// listens for: each run ends on time and fails with one sentence saying
// which, instead of passing as completed with advice to raise
// max_in_flight (issue 15).
func TestUnansweringTargetFailsTheRun(t *testing.T) {
	silent := func(t *testing.T) string { return testnet.SilentListener(t) }
	refused := func(t *testing.T) string { return testnet.RefusedAddress(t) }
	cases := []struct {
		name    string
		addr    func(*testing.T) string
		timeout string
		want    []string
	}{
		{"silent", silent, "300ms", []string{"accepted connections but answered none within the timeout"}},
		// A timeout longer than the run: the requests are still unanswered
		// when it ends, and the run does not wait for them.
		{"silent long timeout", silent, "10s", []string{"accepted connections but answered none", "still unanswered"}},
		{"refused", refused, "1s", []string{"never answered", "connection refused"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := parse(t, dir, fmt.Sprintf(`
name: unanswered
target: {type: http, base_url: "http://%s", read: {path: "/r/{key}"}}
workload: {operations: {read: 1}, record_count: 10}
load: {model: open, arrival: constant, rates: [100], max_in_flight: 4, timeout: %s}
phases: {populate: false, warmup: 0, measure: 1s}
interval: 250ms
monitor: {enabled: false}
output: out
`, c.addr(t), c.timeout))
			start := time.Now()
			out, err := Start(context.Background(), s, Options{})
			if err == nil {
				t.Fatal("the campaign reported success")
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("a campaign of one 1 s run took %v", took)
			}
			runs, err := openStore(t, out).Runs()
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs %v, %v", runs, err)
			}
			r := runs[0]
			if r.Status != store.StatusFailed {
				t.Errorf("status %q, want failed", r.Status)
			}
			for _, w := range c.want {
				if !strings.Contains(r.Message, w) {
					t.Errorf("message %q lacks %q", r.Message, w)
				}
			}
			if strings.Contains(r.Message+r.Summary.ClientNote, "max_in_flight") {
				t.Errorf("message %q, note %q: no advice on slots for a target that does not answer", r.Message, r.Summary.ClientNote)
			}
			if secs := r.Summary.MeasureSecs; secs != 1 {
				t.Errorf("measured %v s, want the planned 1 s", secs)
			}
		})
	}
}
