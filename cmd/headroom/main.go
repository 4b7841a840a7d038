// Command headroom measures how much load a database deployment takes and
// why it slows down. See README.md and docs/.
package main

import (
	"fmt"
	"os"
	"runtime/trace"

	"github.com/headroom-dev/headroom/internal/cli"
)

func main() {
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
