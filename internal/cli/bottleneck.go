package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	ab "github.com/headroom-dev/headroom/internal/analysis/bottleneck"
	bnreport "github.com/headroom-dev/headroom/internal/report/bottleneck"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/results"
)

// newBottleneckCmd is `headroom bottleneck RESULTS_DIR`: the bottleneck
// analysis of a stored campaign, and of resource data imported into it, as
// text.
func newBottleneckCmd() *cobra.Command {
	var (
		imported, perCore, asJSON bool
		from, to                  string
		window, lambda            time.Duration
		hosts                     []string
	)
	cmd := &cobra.Command{
		Use:   "bottleneck RESULTS_DIR|results.db|postgres://...",
		Short: "Print which resources limited each run (or imported data), the intervention analysis and the maps",
		Long: `Print, for every run of a stored campaign, its multi-bottleneck
classification in one sentence (single, concurrent, oscillatory or
simultaneous bottleneck, with saturation frequencies), the intervention
analysis of each treatment's load sweep (which monitored metric changes its
trend where the SLO starts to fail), and, when analysis.bottleneck.map names
the tiers, the maximum-throughput and bottleneck maps. Settings come from the
spec's analysis.bottleneck section.

Resource data added with headroom import (sar, iostat, node_exporter,
CloudWatch) is classified the same way, per host and resource, over the
imported span or over the windows you name. A store without runs gets this
analysis; a store with runs gets it after the runs' when you ask with
--imported (or any of the flags below, which only concern imported data).
--from and --to take an RFC 3339 time or a duration from the start of the
imported data (90s, +5m). See docs/bottleneck.md.`,
		Example: `  headroom import db1.csv db2.csv db3.csv prod.db
  headroom bottleneck prod.db
  headroom bottleneck --window 10m --from +1h --to +2h prod.db`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opt := ab.ImportedOptions{Config: ab.Config{Lambda: lambda, PerCore: perCore, Hosts: hosts}, Window: window}
			var err error
			if opt.From, err = ab.ParseTimeRef(from); err != nil {
				return &exitError{ExitUsage, "--from: " + err.Error()}
			}
			if opt.To, err = ab.ParseTimeRef(to); err != nil {
				return &exitError{ExitUsage, "--to: " + err.Error()}
			}
			if window < 0 || lambda < 0 {
				return &exitError{ExitUsage, "--window and --lambda take a positive duration such as 10m or 1s"}
			}
			for _, f := range []string{"from", "to", "window", "lambda", "host", "per-core", "json"} {
				imported = imported || c.Flags().Changed(f)
			}
			w := c.OutOrStdout()
			return withResults(args[0], func(r *results.Results) error {
				hasRuns := len(r.Runs()) > 0
				if !hasRuns && !imported {
					// No runs to analyse: the imported data is what there is.
					_, _, n, err := ab.ImportedData(r)
					if err != nil {
						return err
					}
					imported = n > 0 || r.Campaign().SpecYAML == ""
				}
				if asJSON {
					return printImportedJSON(w, r, opt)
				}
				if hasRuns || !imported {
					a, err := ab.FromResults(r)
					if err != nil {
						return err
					}
					bnreport.Terminal(w, a)
				}
				if imported {
					if hasRuns {
						fmt.Fprintln(w)
					}
					return printImported(w, r, opt)
				}
				if hasRuns {
					srcs, hs, n, err := ab.ImportedData(r)
					if err != nil || n == 0 {
						return err
					}
					fmt.Fprintf(w, "\nThe store also holds imported resource data (%s of %s); the analysis above covers its runs only: add --imported to classify it too.\n",
						strings.Join(srcs, ", "), strings.Join(hs, ", "))
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&imported, "imported", false, "also classify the resource data added with headroom import")
	f.StringVar(&from, "from", "", "start of the imported span to classify: RFC 3339 time, or duration from the data's start (default: the data's start)")
	f.StringVar(&to, "to", "", "end of the imported span to classify, as --from (default: the data's end)")
	f.DurationVar(&window, "window", 0, "cut the imported span into consecutive windows of this length, one classification each (default: one)")
	f.DurationVar(&lambda, "lambda", 0, "interval length of the imported data's classification (default: its sampling period, at least 1s)")
	f.StringSliceVar(&hosts, "host", nil, "classify only these hosts of the imported data (repeatable; default: all)")
	f.BoolVar(&perCore, "per-core", false, "judge each imported per-core CPU (cpuN) as a resource of its own")
	f.BoolVar(&asJSON, "json", false, "print the imported data's classification as JSON (only that analysis)")
	return cmd
}

// printImported prints the classification of the imported data, one line
// per window in the same sentence form as a run's.
func printImported(w io.Writer, r *results.Results, opt ab.ImportedOptions) error {
	a, err := ab.FromImported(r, opt)
	if err != nil {
		return err
	}
	cfg := a.Config
	fmt.Fprintf(w, "Bottlenecks of imported data (%s; hosts %s; %v intervals, saturated above %s%%)\n",
		strings.Join(a.Sources, ", "), strings.Join(a.Hosts, ", "), cfg.Lambda, format.Exact(cfg.Alpha))
	for _, n := range a.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	for _, iw := range a.Windows {
		head := fmt.Sprintf("  %s to %s: ", stampUTC(iw.Window.From), stampUTC(iw.Window.To))
		if iw.Err != "" {
			fmt.Fprintln(w, head+"not classified: "+iw.Err)
			continue
		}
		fmt.Fprintln(w, head+iw.Result.Finding)
	}
	return nil
}

// importedJSON is the JSON form of the imported data's classification.
type importedJSON struct {
	Sources  []string             `json:"sources"`
	Hosts    []string             `json:"hosts"`
	Lambda   string               `json:"lambda"`
	Alpha    float64              `json:"alpha"`
	From     time.Time            `json:"from"`
	To       time.Time            `json:"to"`
	Notes    []string             `json:"notes"`
	Windows  []importedWindowJSON `json:"windows"`
	Campaign string               `json:"campaign"`
}

type importedWindowJSON struct {
	From      time.Time              `json:"from"`
	To        time.Time              `json:"to"`
	Intervals int                    `json:"intervals"`
	Finding   string                 `json:"finding,omitempty"`
	Error     string                 `json:"error,omitempty"`
	Primary   [][]string             `json:"primary"`
	Resources []importedResourceJSON `json:"resources"`
}

type importedResourceJSON struct {
	Resource   string  `json:"resource"`
	Class      string  `json:"class"` // "none" when not a bottleneck resource
	Saturation string  `json:"saturation"`
	F          float64 `json:"f"`
	Mean       float64 `json:"mean_util_pct"`
	Intervals  int     `json:"intervals"`
}

func printImportedJSON(w io.Writer, r *results.Results, opt ab.ImportedOptions) error {
	a, err := ab.FromImported(r, opt)
	if err != nil {
		return err
	}
	out := importedJSON{Campaign: r.Campaign().Name, Sources: a.Sources, Hosts: a.Hosts, Lambda: a.Config.Lambda.String(),
		Alpha: a.Config.Alpha, From: a.Span.From.UTC(), To: a.Span.To.UTC(), Notes: a.Notes, Windows: []importedWindowJSON{}}
	for _, iw := range a.Windows {
		jw := importedWindowJSON{From: iw.Window.From.UTC(), To: iw.Window.To.UTC(), Intervals: iw.Result.Intervals,
			Finding: iw.Result.Finding, Error: iw.Err, Primary: [][]string{}, Resources: []importedResourceJSON{}}
		for _, b := range iw.Result.Primary() {
			jw.Primary = append(jw.Primary, b.Resources)
		}
		for _, rs := range iw.Result.Resources {
			class := string(rs.Class)
			if class == "" {
				class = "none"
			}
			jw.Resources = append(jw.Resources, importedResourceJSON{Resource: rs.Resource, Class: class, Saturation: string(rs.Saturation),
				F: rs.F, Mean: rs.Mean, Intervals: rs.Intervals})
		}
		out.Windows = append(out.Windows, jw)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func stampUTC(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
