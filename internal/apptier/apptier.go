// Package apptier is a small HTTP application tier that ships with
// Headroom: it serves YCSB-style requests (read, update, insert, scan and
// read-modify-write by key) by running SQL against a PostgreSQL or
// MariaDB/MySQL database, and spends a configurable amount of CPU time on
// every request. With it, a campaign can build an n-tier system in the lab
// (application servers in front of a database; seed-digest §6, the
// RUBBoS/RUBiS set-ups of 003) whose application tier is the bottleneck by
// design, or not, and check what the bottleneck analyses say.
//
// `headroom serve-app` runs one server (Main); the apptier target starts
// them on lab hosts and sends requests to them.
package apptier

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Config is one application server's configuration.
type Config struct {
	// Listen is the address to serve HTTP on, e.g. "10.201.0.11:8080".
	Listen string
	// DSN is the database URL (see ParseDSN); it holds the password, so it
	// only ever comes from the environment.
	DSN string
	// Work is the CPU time spent on each data request before it touches
	// the database (default 0).
	Work time.Duration
	// Pool is the most database connections the server opens (default 16);
	// requests beyond it wait for one.
	Pool int
	// Table is the YCSB table (default usertable).
	Table string
}

// Defaults.
const (
	DefaultPool  = 16
	DefaultTable = "usertable"
	// DefaultDSNEnv is the environment variable the database URL is read
	// from unless --db names another.
	DefaultDSNEnv = "HEADROOM_APP_DSN"
)

func (c Config) check() error {
	switch {
	case c.Listen == "":
		return errors.New("--listen is required: the address to serve on, e.g. 127.0.0.1:8080")
	case c.DSN == "":
		return errors.New("no database URL: set the environment variable that --db names to postgres://USER:PASSWORD@HOST:PORT/DB")
	case c.Work < 0:
		return fmt.Errorf("--cpu-work %v is negative; give a CPU time per request such as 2ms, or 0", c.Work)
	case c.Pool < 1 || c.Pool > 10000:
		return fmt.Errorf("--pool %d is out of range; give 1 to 10000 database connections", c.Pool)
	case !isIdentifier(c.Table):
		return fmt.Errorf("--table %q must be letters, digits and underscores, not starting with a digit", c.Table)
	}
	return nil
}

func isIdentifier(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// ParseArgs reads the command line of `headroom serve-app` (without the
// command name). The database URL comes from the environment variable
// --db names, never from the command line, where other users could see it.
func ParseArgs(args []string, stderr io.Writer) (Config, error) {
	fs := flag.NewFlagSet("headroom serve-app", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := Config{}
	fs.StringVar(&cfg.Listen, "listen", "", "address to serve HTTP on, e.g. 127.0.0.1:8080")
	env := fs.String("db", DefaultDSNEnv, "name of the environment variable that holds the database URL (postgres://USER:PASSWORD@HOST:PORT/DB or mysql://...)")
	fs.DurationVar(&cfg.Work, "cpu-work", 0, "CPU time spent on each request, e.g. 2ms")
	fs.IntVar(&cfg.Pool, "pool", DefaultPool, "most database connections")
	fs.StringVar(&cfg.Table, "table", DefaultTable, "the YCSB table")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: headroom serve-app --listen ADDR [--db ENV] [--cpu-work D] [--pool N] [--table NAME]")
		fmt.Fprintln(fs.Output(), "Serves YCSB requests over HTTP from a SQL database (the apptier target starts it; see docs/bottleneck.md).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q; every setting is a flag", fs.Arg(0))
	}
	cfg.DSN = os.Getenv(*env)
	if cfg.DSN == "" {
		return Config{}, fmt.Errorf("the environment variable %s is empty; set it to the database URL (postgres://USER:PASSWORD@HOST:PORT/DB)", *env)
	}
	return cfg, cfg.check()
}

// shutdownGrace is how long requests in flight may finish once the server
// is asked to stop.
var shutdownGrace = 5 * time.Second

// Serve runs the server until ctx ends, then shuts it down, letting
// requests in flight finish for up to 5 s and then cancelling the rest (their
// queries end with their contexts), so that a stop is always clean.
func Serve(ctx context.Context, cfg Config, ready func(addr string)) error {
	s, err := NewServer(cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr().String())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); errors.Is(err, context.DeadlineExceeded) {
		// Closing the connections cancels the requests' contexts, so
		// their database calls return before the pool closes.
		return srv.Close()
	} else if err != nil {
		return err
	}
	return nil
}

// Main is `headroom serve-app`: it serves until SIGTERM or SIGINT and
// returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	cfg, err := ParseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "headroom serve-app:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err = Serve(ctx, cfg, func(addr string) {
		fmt.Fprintf(stdout, "serving on %s (cpu work %v per request, %d database connections)\n", addr, cfg.Work, cfg.Pool)
	})
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "headroom serve-app:", err)
		return 1
	}
	return 0
}
