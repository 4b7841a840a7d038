package cli

import (
	"strings"
	"testing"
)

// validate shows a sweep: from, step, stop rules, cap, whose CPU is
// judged, and the runs up to the cap.
func TestValidatePrintsSweep(t *testing.T) {
	out, errOut, code := headroom(t, "validate", "../../examples/sweep-sqlite.yaml")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want the summary and the sweep, got:\n%s", out)
	}
	if want := "ok: up to 24 runs (12 levels x 2 repetitions, sequential order)"; !strings.Contains(lines[0], want) {
		t.Errorf("summary %q, want it to contain %q", lines[0], want)
	}
	for _, want := range []string{"  sweep: from 5000 by 5000 req/s until saturated (the target's CPU >= 95% or errors > 1% of requests or the SLO fails), at most 60000 req/s",
		"up to 12 levels", "the CPU rule does not apply: an in-process target shares the load generator's process"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("sweep line %q lacks %q", lines[1], want)
		}
	}
}
