// Package cli is Headroom's command line: one file per subcommand. Commands
// parse flags, call the packages that do the work, and turn errors into one
// clear line; they hold no measurement logic themselves.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/termtext"

	// Targets register themselves with the registry.
	_ "github.com/headroom-dev/headroom/internal/target/cassandra"
	_ "github.com/headroom-dev/headroom/internal/target/disk"
	_ "github.com/headroom-dev/headroom/internal/target/dynamodb"
	_ "github.com/headroom-dev/headroom/internal/target/http"
	_ "github.com/headroom-dev/headroom/internal/target/mysql"
	_ "github.com/headroom-dev/headroom/internal/target/null"
	_ "github.com/headroom-dev/headroom/internal/target/postgres"
	_ "github.com/headroom-dev/headroom/internal/target/redis"
	_ "github.com/headroom-dev/headroom/internal/target/sqlite"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 2
	ExitInterrupted = 130
)

// exitError carries an exit code with an already-formatted message.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// NewRoot builds the command tree.
func NewRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "headroom",
		Short: "Measure how much load a database deployment takes, and why it slows down",
		Long: `Headroom runs experiment campaigns written in YAML against a system under
test (an embedded SQLite database by default), drives open- or closed-loop
load, stores every interval in a results database, and reports capacity
under a latency SLO with repetitions and standard errors.

Start with:  headroom run examples/quickstart.yaml`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.Version = versionLine()
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newRunCmd(), newProbeCmd(), newValidateCmd(), newExportCmd(), newReportCmd(), newImportCmd(), newTargetsCmd(), newLabCmd(), newEslCmd(), newAssessCmd(), newBottleneckCmd(), newPlanCmd(), newServeAppCmd(), newVersionCmd())
	root.AddCommand(newExploreCmd())
	root.AddCommand(newPushCmd()) // push.go: results into a shared PostgreSQL
	root.AddCommand(newCompareCmd())
	root.AddCommand(newAgentCmd())
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{ExitUsage, fmt.Sprintf("%v (see %s --help)", err, c.CommandPath())}
	})
	return root
}

// Main runs the command line and returns the process exit code. User errors
// are printed as one line; nothing a user can cause prints a stack trace.
//
// Everything it prints goes through termtext: text from outside Headroom
// (an imported host name, a server's error) cannot drive the terminal.
// Data written to standard output (export --table) bypasses it
// (dataOut).
func Main(args []string, stdout, stderr io.Writer) (code int) {
	tout, terr := termtext.NewWriter(stdout), termtext.NewWriter(stderr)
	stdout, stderr = tout, terr
	defer func() {
		_ = tout.Flush()
		_ = terr.Flush()
	}()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "headroom: internal error: %v (this is a bug; please report it with the command you ran)\n", r)
			if os.Getenv("HEADROOM_DEBUG") != "" {
				panic(r)
			}
			code = ExitError
		}
	}()
	root := NewRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "headroom: "+ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "headroom: "+err.Error())
	return ExitError
}

// dataOut is where a command writes data to standard output: under the
// terminal escaping Main puts on it, so that an export's bytes arrive as
// stored.
func dataOut(c *cobra.Command) io.Writer { return raw(c.OutOrStdout()) }

// rawErr is standard error under the escaping, for a program Headroom
// runs on the user's behalf (lab exec) that writes to it.
func rawErr(c *cobra.Command) io.Writer { return raw(c.ErrOrStderr()) }

func raw(w io.Writer) io.Writer {
	if t, ok := w.(*termtext.Writer); ok {
		return t.Raw()
	}
	return w
}
