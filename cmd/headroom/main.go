// Command headroom measures how much load a database deployment takes and
// why it slows down. See README.md and docs/.
package main

import (
	"fmt"
	"os"

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
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
