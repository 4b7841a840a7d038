package cli

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/agent"
	"github.com/headroom-dev/headroom/internal/campaign"
)

func newAgentCmd() *cobra.Command {
	var connect, name, tokenFile string
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "agent --connect HOST:PORT --name NAME [--token-file FILE]",
		Short: "Run a load agent: offer a share of a campaign's load for a coordinator",
		Long: `A load agent connects to the coordinator (the headroom run or probe that
lists it under load.agents), proves it holds the shared token, and runs
the share of each run the coordinator gives it, sending every interval's
histograms and counters as it completes (docs/fleet.md, "Load agents").

The token comes from --token-file, or from the HEADROOM_AGENT_TOKEN
environment variable; it is never sent over the connection or logged.
The coordinator starts agents on lab and ssh hosts itself; start one by
hand (or from a Kubernetes Job) for a coordinator that waits for it.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			useLoadCollector(c.ErrOrStderr())
			if connect == "" || name == "" {
				return &exitError{ExitUsage, "headroom agent needs --connect HOST:PORT and --name NAME"}
			}
			if _, _, err := net.SplitHostPort(connect); err != nil {
				return &exitError{ExitUsage, fmt.Sprintf("--connect %q is not HOST:PORT", connect)}
			}
			token, err := agent.ReadToken(tokenFile)
			if err != nil {
				return err
			}
			ctx, cancel := newStopContext()
			defer cancel()
			logf := func(format string, args ...any) {
				fmt.Fprintf(c.ErrOrStderr(), "headroom agent %s: %s\n", name, fmt.Sprintf(format, args...))
			}
			nc, err := dialRetry(connect, wait)
			if err != nil {
				return err
			}
			scratch, err := os.MkdirTemp("", "headroom-agent-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(scratch)
			err = agent.Serve(ctx, nc, name, token, campaign.AgentRunner{Dir: scratch}, logf)
			_ = nc.Close()
			if ctx.Err() != nil {
				return &exitError{ctx.exitCode(), "headroom agent " + name + ": " + ctx.stoppedBy()}
			}
			var pe *agent.PeerError
			if errors.As(err, &pe) {
				return fmt.Errorf("headroom agent %s: %s", name, pe.Msg)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&connect, "connect", "", "the coordinator's HOST:PORT")
	cmd.Flags().StringVar(&name, "name", "", "this agent's name (as the coordinator expects it)")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "file holding the shared token (default: $"+agent.TokenEnv+")")
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to keep trying to reach the coordinator")
	return cmd
}

// dialRetry dials addr until it answers or wait has passed: an agent may
// start before its coordinator listens (a Kubernetes pod).
func dialRetry(addr string, wait time.Duration) (net.Conn, error) {
	deadline := time.Now().Add(wait)
	for {
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err == nil {
			return nc, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("cannot reach the coordinator at %s: %v", addr, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
