package controller

import (
	"fmt"
	"io"

	"github.com/headroom-dev/headroom/internal/analysis/elasticityjudge"
	"github.com/headroom-dev/headroom/internal/results"
)

// Terminal prints one line per controller after a run or a report
// (nothing when the store has no controller run).
func Terminal(w io.Writer, r *results.Results) error {
	j, err := elasticityjudge.FromResults(r, nil)
	if err != nil || len(j.Runs) == 0 {
		return err
	}
	fmt.Fprintln(w, "\nElastic controller (means over each controller's runs; evidence: the controller section of report.html)")
	for _, s := range j.Summaries {
		fmt.Fprintf(w, "  %s\n", Line(j, s))
	}
	if n := problems(j); n > 0 {
		fmt.Fprintf(w, "! %d controller run(s) could not be judged; the report says why\n", n)
	}
	return nil
}
