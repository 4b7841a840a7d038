package cli

import (
	"os"
	"runtime"
	"testing"

	"github.com/headroom-dev/headroom/internal/spec"
)

// widenScheduler runs once per treatment: the scheduler must be sized from
// the starting value every time, not doubled again per treatment (which
// once grew GOMAXPROCS, and memory, exponentially with the treatments).
func TestWidenSchedulerDoesNotCompound(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set in the environment; widenScheduler leaves it alone")
	}
	defer runtime.GOMAXPROCS(startProcs)
	inProc := &spec.Spec{Target: spec.Target{Type: "sqlite"}}
	server := &spec.Spec{Target: spec.Target{Type: "postgres"}}
	for range 3 {
		widenScheduler(inProc)
	}
	if got := runtime.GOMAXPROCS(0); got != 2*startProcs {
		t.Errorf("after three in-process treatments GOMAXPROCS = %d, want %d", got, 2*startProcs)
	}
	widenScheduler(server)
	if got := runtime.GOMAXPROCS(0); got != startProcs {
		t.Errorf("a server target's treatment after them: GOMAXPROCS = %d, want %d", got, startProcs)
	}
}
