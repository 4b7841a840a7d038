package cli

import (
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/agent"
	"github.com/headroom-dev/headroom/internal/campaign"
)

func newAgentCmd() *cobra.Command {
	var connect, name, tokenFile string
	var allowEnv []string
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "agent --connect HOST:PORT --name NAME [--token-file FILE] [--allow-env NAME,...]",
		Short: "Run a load agent: offer a share of a campaign's load for a coordinator",
		Long: `A load agent connects to the coordinator (the headroom run or probe that
lists it under load.agents), and the two prove to each other that they
hold the shared token before anything else is sent: the agent takes no
order from a coordinator that cannot prove it, and sends it nothing more.
It then runs the share of each run the coordinator gives it, sending every
interval's histograms and counters as it completes (docs/fleet.md, "Load
agents").

The token comes from --token-file, or from the HEADROOM_AGENT_TOKEN
environment variable; it is never sent over the connection or logged.

The agent reads an environment variable for a spec's target option
(password_env, auth_header_env, access_key_env, ...) only when --allow-env
names it (repeat the flag, or give a comma list); an order naming any
other variable is refused. The coordinator starts agents on lab and ssh
hosts itself; start one by hand (or from a Kubernetes Job) for a
coordinator that waits for it.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			useLoadCollector(c.ErrOrStderr())
			if connect == "" || name == "" {
				return &exitError{ExitUsage, "headroom agent needs --connect HOST:PORT and --name NAME"}
			}
			if _, _, err := net.SplitHostPort(connect); err != nil {
				return &exitError{ExitUsage, fmt.Sprintf("--connect %q is not HOST:PORT", connect)}
			}
			allowed, err := allowedEnv(allowEnv)
			if err != nil {
				return &exitError{ExitUsage, err.Error()}
			}
			token, err := agent.ReadToken(tokenFile)
			if err != nil {
				return err
			}
			// Read once: no target of an order can find it afterwards.
			_ = os.Unsetenv(agent.TokenEnv)
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
			err = agent.Serve(ctx, nc, name, token, campaign.AgentRunner{Dir: scratch, AllowEnv: allowed}, logf)
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
	cmd.Flags().StringArrayVar(&allowEnv, "allow-env", nil, "an environment variable a spec's target options may name for this agent to read (repeatable, or NAME,NAME)")
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to keep trying to reach the coordinator")
	return cmd
}

// envVarName is a name --allow-env accepts: a portable variable name.
var envVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// allowedEnv splits the --allow-env values (each may be a comma list) into
// variable names.
func allowedEnv(flags []string) ([]string, error) {
	var out []string
	for _, f := range flags {
		for n := range strings.SplitSeq(f, ",") {
			n = strings.TrimSpace(n)
			switch {
			case n == "":
				continue
			case strings.Contains(n, "="):
				// What follows "=" may be a secret: not repeated.
				name, _, _ := strings.Cut(n, "=")
				return nil, fmt.Errorf("--allow-env %s=...: give the variable's name only, never its value", name)
			case !envVarName.MatchString(n):
				return nil, fmt.Errorf("--allow-env %q is not an environment variable name; use letters, digits and underscores, e.g. DB_PASSWORD", n)
			case n == agent.TokenEnv:
				return nil, fmt.Errorf("--allow-env %s: the agent's token is never handed to a target; remove it from --allow-env", n)
			}
			out = append(out, n)
		}
	}
	return out, nil
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
