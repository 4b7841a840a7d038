package failures

import (
	"fmt"
	"io"

	"github.com/headroom-dev/headroom/internal/analysis/availability"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/results"
)

// Terminal prints the failure verdicts that lead the terminal summary:
// every lost-write verdict first, then one line per run with fault events
// (its scenarios and availability). Nothing is printed for a campaign
// without faults or write checks.
func Terminal(w io.Writer, r *results.Results) error {
	runs, err := availability.FromResults(r)
	if err != nil || len(runs) == 0 {
		return err
	}
	fmt.Fprintf(w, "\nFailures (evidence: #%s of report.html)\n", SectionID)
	for _, v := range LostVerdicts(runs) {
		fmt.Fprintf(w, "! %s\n", v)
	}
	for _, x := range runs {
		switch {
		case x.Problem != nil:
			fmt.Fprintf(w, "  %s: %v\n", runName(x), x.Problem)
		case len(x.Result.Scenarios) > 0:
			fmt.Fprintf(w, "  %s\n", format.Capitalize(runName(x)+": "+RunText(x)))
		}
	}
	if lost, checked := lostTotal(runs); lost == 0 && checked > 0 {
		fmt.Fprintf(w, "  %s\n", format.Capitalize(checksText(runs)))
	}
	return nil
}

func lostTotal(runs []availability.Run) (lost, checked int64) {
	for _, x := range runs {
		l, c := x.Lost()
		lost += l
		checked += c
	}
	return lost, checked
}
