package bottleneck

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	ab "github.com/headroom-dev/headroom/internal/analysis/bottleneck"
	"github.com/headroom-dev/headroom/internal/report/format"
)

// Terminal prints the analysis as text: per treatment each run's finding
// and the intervention analysis, then the maps.
func Terminal(w io.Writer, a *ab.Analysis) {
	for _, n := range a.Notes {
		fmt.Fprintf(w, "%s: %s\n", a.Campaign, n)
	}
	for i, t := range a.Treatments {
		if i > 0 {
			fmt.Fprintln(w)
		}
		title := "Bottlenecks"
		if t.Name != "" {
			title += " · treatment " + t.Name
		}
		cfg := t.Config()
		fmt.Fprintf(w, "%s (%v intervals, saturated above %s%%", title, cfg.Lambda, format.Exact(cfg.Alpha))
		if len(cfg.Hosts) > 0 {
			fmt.Fprintf(w, ", hosts %s", strings.Join(cfg.Hosts, ", "))
		}
		fmt.Fprintln(w, ")")
		for _, r := range t.Runs {
			head := fmt.Sprintf("  level %s, repetition %d (%.1f ok/s): ", format.Num(r.Run.Level), r.Run.Repetition, r.Run.Summary.Throughput)
			if r.Err != "" {
				fmt.Fprintln(w, head+"not classified: "+r.Err)
				continue
			}
			fmt.Fprintln(w, head+r.Result.Finding)
		}
		switch {
		case t.Intervention != nil:
			iv := t.Intervention
			fmt.Fprintf(w, "  intervention analysis: %s\n", iv.Finding)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			for j, r := range iv.Resources {
				if j == maxRanked {
					break
				}
				fmt.Fprintf(tw, "    %d.\t%s\tR = %s\trule %s\t%s\n", j+1, r.Resource, rText(r.R), r.Rule, r.Metric)
			}
			tw.Flush()
		case t.InterventionNote != "":
			fmt.Fprintf(w, "  intervention analysis: %s\n", t.InterventionNote)
		}
		if !math.IsNaN(t.MaxThroughput) {
			fmt.Fprintf(w, "  maximum throughput %.1f ok/s at %s; primary bottleneck there: %s\n", t.MaxThroughput, format.Num(t.MaxLevel), t.MaxLabel)
		}
	}
	if m := a.Map; m != nil {
		fmt.Fprintln(w)
		if m.Err != "" {
			fmt.Fprintf(w, "No maps: %s.\n", m.Err)
			return
		}
		cm := m.Map
		xl, yl := ab.AxisLabel(m.Axes.X), ab.AxisLabel(m.Axes.Y)
		fmt.Fprintf(w, "Maximum throughput (ok/s) and primary bottleneck by %s (rows) and %s (columns)\n", yl, xl)
		tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
		fmt.Fprintf(tw, "  %s \\ %s", yl, xl)
		for _, x := range cm.X {
			fmt.Fprintf(tw, "\t%s", format.Num(x))
		}
		fmt.Fprintln(tw)
		for yi := len(cm.Y) - 1; yi >= 0; yi-- {
			fmt.Fprintf(tw, "  %s", format.Num(cm.Y[yi]))
			for xi := range cm.X {
				c := cm.Cells[yi][xi]
				if c.Config == "" {
					fmt.Fprint(tw, "\t–")
					continue
				}
				fmt.Fprintf(tw, "\t%.0f %s", c.MaxThroughput, c.Bottleneck)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
}
