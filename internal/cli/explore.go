package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/explore"
)

// defaultExploreAddr binds the loopback interface only, on a free port:
// the results stay on this machine unless --addr says otherwise.
const defaultExploreAddr = "127.0.0.1:0"

// newExploreCmd is `headroom explore`: the results explorer in the browser.
func newExploreCmd() *cobra.Command {
	var addr string
	c := &cobra.Command{
		Use:   "explore RESULTS_DIR|results.db|postgres://...",
		Short: "Explore results in a local web page: any metric on any axis, wildcards over parameters, the plan, runs",
		Long: `Explore serves a web page over one or more results stores, read-only: pick
the plotted axes and metrics, fix each configuration parameter to a value or
leave it a wildcard (every value measured, the best by the chosen objective),
see the plot and the plan table (the best configuration at each load) update,
compare configurations side by side, and drill from a point to its runs,
their per-second timelines and their report sections. The page opens on each
store's answers. Stores given together must share a workload, as for
headroom plan.

It listens on 127.0.0.1 on a free port unless --addr says otherwise, prints
the address to open, and runs until Ctrl-C. The page is embedded in the
binary and fetches nothing from the network.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			var paths []string
			for _, a := range args {
				src, err := openSource(a, "") // resultsarg.go: a postgres:// URL is copied first
				if err != nil {
					return err
				}
				defer src.close()
				paths = append(paths, src.path)
			}
			sc, cancel := newStopContext()
			defer cancel()
			return serveExplorer(sc, c.OutOrStdout(), addr, paths)
		},
	}
	c.Flags().StringVar(&addr, "addr", defaultExploreAddr, "host:port to serve on (port 0 picks a free port); anything but a loopback address exposes the results to the network")
	return c
}

// serveExplorer serves the explorer over the stores at paths on addr until
// ctx ends, then stops it cleanly: requests under way finish (for up to 5
// s) and the stores are closed.
func serveExplorer(ctx context.Context, w io.Writer, addr string, paths []string) error {
	e, err := explore.Open(paths)
	if err != nil {
		return err
	}
	defer e.Close()
	e.Warm()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %v; choose another --addr", addr, err)
	}
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() {
		fmt.Fprintf(w, "Note: %s is reachable from other machines; the results are served to anyone who can connect.\n", host)
	}
	fmt.Fprintf(w, "Explorer: http://%s/ (Ctrl-C stops it)\n", ln.Addr())
	select {
	case err := <-served:
		return fmt.Errorf("the explorer stopped serving: %v", err)
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(stop); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	fmt.Fprintln(w, "Explorer stopped.")
	return nil
}
