// Command genstore writes a synthetic results store of any length for
// benchmarks of the readers of a store (docs/performance.md):
//
//	go run ./cmd/genstore -o /tmp/day/results.db -measure 24h -interval 1s
//
// The store holds one campaign on the null target: every run's
// intervals per operation (and per agent with -agents), each host's
// samples, and one designed stall per run (internal/storegen).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/storegen"
)

func main() {
	var (
		out      = flag.String("o", "", "the store to write (a new file; its directory is created)")
		levels   = flag.String("levels", "500", "offered rates in req/s, comma-separated")
		reps     = flag.Int("repetitions", 1, "runs per level")
		measure  = flag.Duration("measure", time.Minute, "each run's measured phase")
		interval = flag.Duration("interval", time.Second, "interval length")
		ops      = flag.Int("ops", 5, "operations (1-5, of read, update, insert, scan, read_modify_write)")
		hosts    = flag.Int("hosts", 1, "monitored hosts")
		agents   = flag.Int("agents", 0, "load agents (0: none)")
		seed     = flag.Uint64("seed", 1, "random seed")
	)
	flag.Parse()
	if err := run(*out, *levels, *reps, *measure, *interval, *ops, *hosts, *agents, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "genstore:", err)
		os.Exit(1)
	}
}

func run(out, levels string, reps int, measure, interval time.Duration, ops, hosts, agents int, seed uint64) error {
	if out == "" {
		return fmt.Errorf("-o is required: the path of the store to write")
	}
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists; give a new path", out)
	}
	if ops < 1 || ops > len(storegen.DefaultOps) {
		return fmt.Errorf("-ops %d: give 1 to %d", ops, len(storegen.DefaultOps))
	}
	var ls []float64
	for _, f := range strings.Split(levels, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return fmt.Errorf("-levels: %q is not a rate", f)
		}
		ls = append(ls, v)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	began := time.Now()
	c := storegen.Config{Levels: ls, Repetitions: reps, Measure: measure, Interval: interval, Ops: storegen.DefaultOps[:ops],
		Hosts: hosts, Agents: agents, Seed: seed,
		Progress: func(run, runs int) { fmt.Fprintf(os.Stderr, "\rrun %d of %d written", run, runs) }}
	sum, err := storegen.Write(out, c)
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return err
	}
	fi, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d runs, %d interval rows, %d agent interval rows, %d samples, %.1f MB, written in %.1f s\n",
		out, sum.Runs, sum.IntervalRows, sum.AgentIntervalRows, sum.Samples, float64(fi.Size())/1e6, time.Since(began).Seconds())
	return nil
}
