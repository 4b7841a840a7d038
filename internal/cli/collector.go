package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/headroom-dev/headroom/internal/gcpolicy"
)

// useLoadCollector sets Go's collector for a command that drives or
// serves load: run, probe, agent, serve-app and assess --verify. A rarer
// collector leaves the request goroutines their processor
// (internal/gcpolicy). The other commands (import, report, the analyses)
// keep Go's default: their live heap grows with the results they read,
// and GOGC 400 would let it grow to five times that before a cycle.
func useLoadCollector(stderr io.Writer) {
	p := gcpolicy.Apply(os.Getenv)
	if os.Getenv("HEADROOM_DEBUG") != "" {
		fmt.Fprintf(stderr, "headroom: collector: GOGC %d (0: the environment's), soft memory limit %d bytes (0: none set)\n", p.Percent, p.MemLimit)
	}
}
