package consistency

import (
	"fmt"
	"io"

	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/results"
)

// Finding is one verdict line for the terminal and the answer card:
// Attention marks what a reader must not miss (a session guarantee or
// linearizability broken).
type Finding struct {
	Topic     string // "Staleness", "Session guarantees", "Linearizability"
	Treatment string
	Text      string // no trailing full stop
	Evidence  string // the report section's ID
	Attention bool
}

// Findings are the verdicts of the runs' consistency analyses, one
// staleness line per run and level pair, then a session-guarantee and a
// linearizability line per run.
func Findings(runs []Run) []Finding {
	var out []Finding
	for _, run := range runs {
		for _, l := range run.Staleness.Levels {
			p99, ok := l.Quantile(0.99)
			if !ok {
				continue
			}
			text := fmt.Sprintf("%s: p99 t-visibility %s, %s of writes visible at once, %s of reads stale",
				groupName(l.Group), ms(p99, l.UncertaintyNS), format.Terminal.Percent(100*l.ShareWithin(0), 1),
				format.Terminal.Percent(100*l.StaleShare(), 3))
			if c := l.Censored(); c > 0 {
				text += fmt.Sprintf("; %s still stale at the end", format.Plural(c, "write"))
			}
			out = append(out, Finding{Topic: "Staleness", Treatment: run.Treatment, Evidence: SectionID, Text: text})
		}
		t := run.Sessions.Total
		f := Finding{Topic: "Session guarantees", Treatment: run.Treatment, Evidence: SectionID,
			Text: fmt.Sprintf("no violation in %s", format.Plural(t.Reads, "read"))}
		if n := t.MonotonicRead + t.ReadYourWrites + t.MonotonicWrite; n > 0 {
			f.Attention = true
			f.Text = fmt.Sprintf("%d monotonic-read (%s per million reads), %d read-your-writes (%s per million), %d monotonic-write violations in %s",
				t.MonotonicRead, format.Num(t.PerMillion(t.MonotonicRead)), t.ReadYourWrites, format.Num(t.PerMillion(t.ReadYourWrites)),
				t.MonotonicWrite, format.Plural(t.Reads, "read"))
		}
		out = append(out, f)
		n := LinCounts(run.Linearized)
		lf := Finding{Topic: "Linearizability", Treatment: run.Treatment, Evidence: SectionID,
			Text: fmt.Sprintf("%d of %s linearizable", n[history.Linearizable], format.Plural(len(run.Linearized), "key"))}
		if n[history.Violation] > 0 {
			lf.Attention = true
			lf.Text = fmt.Sprintf("%d of %s not linearizable", n[history.Violation], format.Plural(len(run.Linearized), "key"))
		}
		if s := n[history.TooLarge] + n[history.TimedOut]; s == len(run.Linearized) && s > 0 {
			// Nothing was checked: say so rather than "0 of N".
			lf.Text = fmt.Sprintf("not checked: the histories of all %s were too large for the check or ran out of its time (%d too large, %d timed out)",
				format.Plural(s, "key"), n[history.TooLarge], n[history.TimedOut])
		} else if s > 0 {
			lf.Text += fmt.Sprintf(" (%d not checked: too large or timed out)", s)
		}
		out = append(out, lf)
	}
	return out
}

// Terminal prints the consistency verdicts of r, attention first, for the
// CLI's summary; nothing for a campaign without an operation history.
func Terminal(w io.Writer, r *results.Results) error {
	runs, err := Build(r)
	if err != nil || len(runs) == 0 {
		return err
	}
	fs := Findings(runs)
	fmt.Fprintln(w, "\nConsistency (evidence: the consistency section of report.html)")
	for _, attention := range []bool{true, false} {
		for _, f := range fs {
			if f.Attention != attention {
				continue
			}
			mark := " "
			if f.Attention {
				mark = "!"
			}
			topic := f.Topic
			if f.Treatment != "" {
				topic += " · " + f.Treatment
			}
			fmt.Fprintf(w, "%s %-20s %s\n", mark, topic, f.Text)
		}
	}
	return nil
}
