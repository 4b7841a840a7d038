package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/pgstore"
)

// newPushCmd is `headroom push`: results stores into a shared PostgreSQL.
func newPushCmd() *cobra.Command {
	var passwordFile string
	c := &cobra.Command{
		Use:   "push RESULTS_DIR|results.db... postgres://USER@HOST:PORT/DATABASE",
		Short: "Copy results into a shared PostgreSQL database, where report, plan, explore and assess read them",
		Long: `Push copies each results store into a PostgreSQL database that a team
shares (schema "headroom"), one transaction per campaign. A campaign is
known by its ID (printed here); pushing it again writes nothing, and pushing
it after it was resumed replaces the tables that changed. An older copy of
a campaign than the one already pushed is refused, and so is a copy whose
finished run differs from the pushed one (a push never rewrites a finished
run) and a damaged store.

Read a pushed campaign with, e.g.:
  headroom report 'postgres://USER@HOST/DATABASE?campaign=ID'

The password never goes in the URL: put it in PGPASSWORD, a password file
(PGPASSFILE, ~/.pgpass, ?passfile=FILE) or --password-file FILE. See
docs/fleet.md.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			url := args[len(args)-1]
			if !pgstore.IsURL(url) {
				return &exitError{ExitUsage, fmt.Sprintf("the last argument, %q, is not a postgres:// URL; write headroom push RESULTS_DIR... postgres://USER@HOST:PORT/DATABASE", url)}
			}
			ctx, cancel := newStopContext()
			defer cancel()
			db, err := pgstore.Connect(ctx, url, pgstore.Options{PasswordFile: passwordFile})
			if err != nil {
				return err
			}
			defer db.Close()
			for _, arg := range args[:len(args)-1] {
				path, err := storePath(arg)
				if err != nil {
					return err
				}
				res, err := db.Push(ctx, path)
				if err != nil {
					return err
				}
				printPush(c.OutOrStdout(), db.Where(), res)
			}
			return nil
		},
	}
	c.Flags().StringVar(&passwordFile, "password-file", "", "file holding the database password (else PGPASSWORD, PGPASSFILE or ~/.pgpass)")
	return c
}

// printPush says what one push did, and how to read the campaign back.
func printPush(w io.Writer, where string, r pgstore.PushResult) {
	switch {
	case len(r.Copied) == 0:
		fmt.Fprintf(w, "campaign %s (%s) is already in %s as it is here: nothing written\n", r.Name, r.ID, where)
		return
	case r.New:
		fmt.Fprintf(w, "pushed campaign %s (%s) to %s:", r.Name, r.ID, where)
	default:
		fmt.Fprintf(w, "updated campaign %s (%s) in %s:", r.Name, r.ID, where)
	}
	parts := make([]string, len(r.Copied))
	for i, t := range r.Copied {
		parts[i] = fmt.Sprintf("%s %d", t.Name, t.Rows)
	}
	fmt.Fprintf(w, " copied %s rows", strings.Join(parts, ", "))
	if r.Unchanged > 0 {
		fmt.Fprintf(w, "; %d table(s) unchanged", r.Unchanged)
	}
	fmt.Fprintf(w, "\nread it with ?%s=%s on the database's URL, e.g. headroom report 'postgres://USER@HOST/DATABASE?%s=%s'\n", pgstore.CampaignParam, r.ID, pgstore.CampaignParam, r.ID)
}
