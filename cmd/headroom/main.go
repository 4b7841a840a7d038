// Command headroom measures how much load a database deployment takes and
// why it slows down. See README.md and docs/.
package main

import (
	"fmt"
	"os"
	"runtime/trace"

	"github.com/headroom-dev/headroom/internal/cli"
	"github.com/headroom-dev/headroom/internal/gcpolicy"
)

func main() {
	// A rarer, memory-bounded collector: the client's own cycles delay
	// the requests it measures (internal/gcpolicy).
	p := gcpolicy.Apply(os.Getenv)
	if os.Getenv("HEADROOM_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, "headroom: collector: GOGC %d (0: the environment's), soft memory limit %d bytes (0: none set)\n", p.Percent, p.MemLimit)
	}
	stop := startTrace(os.Getenv("HEADROOM_TRACE"))
	code := cli.Main(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// startTrace writes the Go execution trace of the whole command to path
// (go tool trace reads it), for finding where a client's time goes
// (docs/performance.md); nothing when path is empty. It costs the client
// CPU, so a traced run's figures are not to be compared.
func startTrace(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		if err = trace.Start(f); err != nil {
			_ = f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "headroom: HEADROOM_TRACE: %v; running without the trace\n", err)
		return func() {}
	}
	return func() {
		trace.Stop()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "headroom: HEADROOM_TRACE: %v\n", err)
		}
	}
}
