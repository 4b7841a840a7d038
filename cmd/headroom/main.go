// Command headroom measures how much load a database deployment takes and
// why it slows down. See README.md and docs/.
package main

import (
	"os"

	"github.com/headroom-dev/headroom/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
