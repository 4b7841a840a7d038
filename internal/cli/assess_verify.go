package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"github.com/headroom-dev/headroom/internal/analysis/cost"
	assess "github.com/headroom-dev/headroom/internal/analysis/pressure"
	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
)

// verifyRecommendations is headroom assess --verify: each persistent
// pressure's recommendation becomes a treatment of the same campaign
// (campaign.VerifyChanges), its runs are appended to the store
// (campaign.Verify), and the campaign is assessed again to judge each
// change (campaign.Compare). It prints the before/after figures and the
// verdicts to w.
func verifyRecommendations(w, errw io.Writer, arg string, opt assess.Options, quiet bool) error {
	path, err := storePath(arg)
	if err != nil {
		return err
	}
	var changes []campaign.Change
	var notes []string
	var factorial bool
	err = withResults(path, func(r *results.Results) error {
		a, err := assess.FromResults(r, opt)
		if err != nil {
			return err
		}
		c := r.Campaign()
		s, err := spec.Parse(c.SpecFile, []byte(c.SpecYAML))
		if err != nil {
			return fmt.Errorf("the spec stored in %s no longer validates, so no treatment can be added to it: %w", path, err)
		}
		factorial = len(s.Factors) > 0
		changes, notes, err = campaign.VerifyChanges(r, a, s)
		return err
	})
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(w, "not verifiable: %s\n", n)
	}
	if len(changes) == 0 {
		fmt.Fprintln(w, "Nothing to verify: no service is under persistent pressure with a change a spec field can make.")
		return nil
	}
	grows := false
	for _, ch := range changes {
		if ch.Existing {
			fmt.Fprintf(w, "Verify %s (%s): already measured by treatment %s\n", ch.Base, ch.What, ch.Name)
		} else {
			fmt.Fprintf(w, "Verify %s (%s): adding treatment %s\n", ch.Base, ch.What, ch.Name)
			grows = true
		}
	}
	if grows && factorial {
		fmt.Fprintln(w, "The campaign is made from factors:, so each recommended value becomes a level of its factor and runs with every combination of the other factors' levels.")
	}
	ctx, stop := newStopContext()
	defer stop()
	var prog progress.Reporter = progress.Quiet()
	if !quiet {
		prog = progress.New(errw)
	}
	dir := filepath.Dir(path)
	_, err = campaign.Verify(ctx, dir, changes, campaign.Options{Progress: prog, Configure: widenScheduler})
	prog.Finish()
	if errors.Is(err, campaign.ErrInterrupted) {
		return &exitError{ctx.exitCode(), fmt.Sprintf("%s: the verifying runs so far are stored in %s; continue with: headroom run --resume %s", ctx.stoppedBy(), dir, dir)}
	}
	if err != nil {
		return err
	}
	return withResults(path, func(r *results.Results) error {
		a, err := assess.FromResults(r, opt)
		if err != nil {
			return err
		}
		for _, ch := range changes {
			v, err := campaign.Compare(a, ch)
			if err != nil {
				return err
			}
			printVerdict(w, v)
		}
		fmt.Fprintf(w, "\nThe report shows both treatments side by side: headroom report %s\n", dir)
		return nil
	})
}

// printVerdict prints one verified recommendation: before and after, then
// the verdict.
func printVerdict(w io.Writer, v campaign.Verdict) {
	ch := v.Change
	fmt.Fprintf(w, "\nRecommendation for %s: %s (treatment %s)\n", ch.Base, ch.What, ch.Name)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  \t%s\t%s\t\n", v.Before.Treatment, v.After.Treatment)
	pct := func(x float64) string { return fmt.Sprintf("%.1f%%", x) }
	money := func(x float64) string {
		if x != x {
			return "-"
		}
		return cost.Money(x)
	}
	who := ch.Host + " "
	if ch.Group != "" {
		// A scale-out changes the nodes: each side's most pressed one.
		who = "its "
		fmt.Fprintf(tw, "  most pressed node of %s\t%s\t%s\t\n", ch.Group, orDash(v.Before.Host), orDash(v.After.Host))
	}
	fmt.Fprintf(tw, "  %s%s %s mean SLP\t%s\t%s\t\n", who, ch.Service, ch.Quality, pct(v.Before.MeanSLP), pct(v.After.MeanSLP))
	fmt.Fprintf(tw, "  p99 SLP\t%s\t%s\t\n", pct(v.Before.P99SLP), pct(v.After.P99SLP))
	label := "throughput (req/s)"
	if v.Achieved {
		label = "achieved throughput (req/s)"
	}
	fmt.Fprintf(tw, "  %s\t%.1f\t%.1f\t\n", label, v.Before.Throughput, v.After.Throughput)
	fmt.Fprintf(tw, "  $/month per req/s\t%s\t%s\t\n", money(v.Before.PerReqPerS), money(v.After.PerReqPerS))
	tw.Flush()
	fmt.Fprintf(w, "Verdict: %s\n", v.Text)
}
