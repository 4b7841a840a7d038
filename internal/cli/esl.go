package cli

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/analysis/eslbuild"
	assess "github.com/headroom-dev/headroom/internal/analysis/pressure"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/results"
)

func newEslCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "esl",
		Short: "Expected service level models: build one from a disk benchmark, compare two, show one",
		Long: `Expected service level (ESL) models say what a rented service should deliver
per quality (a volume's ops/s and bandwidth): a single value, a
distribution, the analytical provisioned-IOPS volume model, or an empirical
model built from a disk-target benchmark (docs/esl.md). headroom assess
judges monitored resources against them.`,
	}
	c.AddCommand(newEslBuildCmd(), newEslCompareCmd(), newEslShowCmd())
	return c
}

func newEslBuildCmd() *cobra.Command {
	var out, name, volume string
	var bins int
	cmd := &cobra.Command{
		Use:   "build RESULTS_DIR|results.db",
		Short: "Build an empirical ESL model from a disk-target campaign",
		Long: `Build an empirical ESL model (docs/esl.md) from a campaign of the disk target:
each treatment (or campaign) is one op size (target.block_size) and
read/write mix (workload.operations: read vs update/insert), with any
number of repetitions. The per-second samples of every completed run's
measured phase form the distributions, per op size, mix and quality
(seed-digest §4).

The samples are the disk target's own per-interval throughput (operations
completed per interval; read_modify_write counts two I/Os; bandwidth is
ops/s x block size), or, with --volume HOST/RESOURCE, the monitored
samples of that volume (read+write ops and bytes per second), e.g. a lab
host's volume:data when the campaign's I/O ran on it.

The model is written as YAML to --output (default: standard output).`,
		Example: `  headroom lab exec db1 -- headroom run -o /tmp/esl examples/esl-lab-volume.yaml
  headroom esl build /tmp/esl/esl-lab-volume-* -o lab-300.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withResults(args[0], func(r *results.Results) error {
				runs, err := eslbuild.FromResults(r, volume)
				if err != nil {
					return err
				}
				if name == "" {
					name = r.Campaign().Name
				}
				m, err := esl.Build(name, runs, bins)
				if err != nil {
					return err
				}
				doc, err := yaml.Marshal(m)
				if err != nil {
					return err
				}
				summary := c.OutOrStdout()
				if out == "" {
					if _, err := c.OutOrStdout().Write(doc); err != nil {
						return err
					}
					summary = c.ErrOrStderr()
				} else if err := os.WriteFile(out, doc, 0o644); err != nil {
					return fmt.Errorf("cannot write %s: %w", out, err)
				}
				writeBuildSummary(summary, m, runs)
				if out != "" {
					fmt.Fprintf(summary, "Model: %s\n", out)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the model to this file (default: standard output)")
	cmd.Flags().StringVar(&name, "name", "", "the model's name (default: the campaign's)")
	cmd.Flags().IntVar(&bins, "bins", 0, fmt.Sprintf("equal-width bins per distribution (default %d)", esl.DefaultBins))
	cmd.Flags().StringVar(&volume, "volume", "", "HOST/RESOURCE: take ops and bytes from this monitored volume instead of the disk target's intervals")
	return cmd
}

// writeBuildSummary prints, per op size and mix, the samples and mean
// ops/s and bandwidth of the built model.
func writeBuildSummary(w io.Writer, m *esl.Empirical, runs []esl.BenchmarkRun) {
	count := map[[2]float64]int{}
	for _, r := range runs {
		count[[2]float64{r.OpSizeKiB, r.ReadPct}]++
	}
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "op size\tmix\truns\tseconds\tmean ops/s\tp1 ops/s\tp99 ops/s\tmean MiB/s")
	type row struct{ size, read float64 }
	seen := map[row]bool{}
	for _, e := range m.Entries {
		r := row{e.OpSizeKiB, e.ReadPct}
		if seen[r] {
			continue
		}
		seen[r] = true
		ops, _ := m.ESLMix(esl.OpsPerS, r.size, r.read)
		bw, _ := m.ESLMix(esl.BytesPerS, r.size, r.read)
		fmt.Fprintf(tw, "%g KiB\t%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.2f\n", r.size, mixName(r.read), count[[2]float64{r.size, r.read}], e.Samples+e.Zero,
			ops.Mean(), ops.Quantile(0.01), ops.Quantile(0.99), bw.Mean()/(1<<20))
	}
	tw.Flush()
}

// mixName is R100, R75/W25, ..., W100.
func mixName(read float64) string {
	switch read {
	case 100:
		return "R100"
	case 0:
		return "W100"
	}
	return fmt.Sprintf("R%g/W%g", read, 100-read)
}

func newEslCompareCmd() *cobra.Command {
	var threshold float64
	cmd := &cobra.Command{
		Use:   "compare MODEL_A MODEL_B",
		Short: "Show where two ESL models disagree (e.g. the documented and the measured)",
		Long: `Evaluate one model at every op size the other (empirical) one benchmarked, per
quality, and print both means, the empirical 1st and 99th percentiles, the
relative difference (empirical - other) / other, and which limit binds in an
analytical model. Rows beyond --threshold are flagged. One of the two models
must be empirical (docs/esl.md).`,
		Example: `  headroom esl show --lab examples/esl-lab-volume.yaml db1 -o documented.yaml
  headroom esl compare documented.yaml measured.yaml`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			// esl.Compare reads 0 as its default, which the header would
			// then misstate as ±0%.
			if !(threshold > 0) || math.IsInf(threshold, 1) {
				return &exitError{ExitUsage, fmt.Sprintf("--threshold %v: give a positive percentage, e.g. 10", threshold)}
			}
			a, err := esl.Load(args[0])
			if err != nil {
				return err
			}
			b, err := esl.Load(args[1])
			if err != nil {
				return err
			}
			ref, refName := a, args[0]
			emp, ok := b.(*esl.Empirical)
			if !ok {
				if emp, ok = a.(*esl.Empirical); !ok {
					return fmt.Errorf("neither %s nor %s is an empirical model; compare a model with a benchmark (esl build)", args[0], args[1])
				}
				ref, refName = b, args[1]
			}
			diffs, err := esl.Compare(ref, emp, threshold/100)
			if err != nil {
				return err
			}
			writeComparison(c.OutOrStdout(), refName, diffs, threshold)
			return nil
		},
	}
	cmd.Flags().Float64Var(&threshold, "threshold", 100*esl.DefaultDisagreement, "flag relative differences above this many percent")
	return cmd
}

func writeComparison(w io.Writer, refName string, diffs []esl.Difference, threshold float64) {
	fmt.Fprintf(w, "Reference: %s; rel = (empirical - reference) / reference; flagged beyond ±%g%%\n", refName, threshold)
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "op size\tquality\treference\tempirical mean\tp1\tp99\trel\tlimit\t")
	n := 0
	for _, d := range diffs {
		flag := ""
		if d.Disagree {
			flag = "DISAGREE"
			n++
		}
		q := d.Quality
		fmt.Fprintf(tw, "%g KiB\t%s\t%s\t%s\t%s\t%s\t%+.1f%%\t%s\t%s\n", d.OpSizeKiB, q, level(q, d.Analytical), level(q, d.Empirical),
			level(q, d.P1), level(q, d.P99), 100*d.Rel, orDash(d.Limit), flag)
	}
	tw.Flush()
	fmt.Fprintf(w, "%d of %d rows disagree by more than %g%%.\n", n, len(diffs), threshold)
}

func level(q esl.Quality, v float64) string {
	if q == esl.BytesPerS {
		return fmt.Sprintf("%.2f MiB/s", v/(1<<20))
	}
	return fmt.Sprintf("%.1f", v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newEslShowCmd() *cobra.Command {
	var labRef, out, host, resource, treatment string
	cmd := &cobra.Command{
		Use:   "show MODEL.yaml | RESULTS_DIR | --lab SPEC.yaml|LAB HOST",
		Short: "Print an ESL model and what it expects at each op size",
		Long: `Print a model file; or every model a results store gives its hosts'
resources (from the hosts' limits, each with the time it came into force
when a limit changed during the runs; stored models; the spec's
analysis.esl.models), per treatment; or, with --lab, the analytical model
of a lab host's volume, from a spec's lab: section (nothing needs to be up)
or from a lab that is up. -o writes the one model shown (with a results
directory, select it with --host and --resource, and --treatment when the
campaign has several).`,
		Example: `  headroom esl show --lab examples/aisle-lab.yaml db1
  headroom esl show --lab examples/aisle-lab.yaml db1 -o documented.yaml
  headroom esl show results/aisle-lab-20261124-101500`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			w := c.OutOrStdout()
			var entries []modelShown
			switch {
			case labRef != "":
				m, origin, err := labVolumeModel(labRef, args[0])
				if err != nil {
					return err
				}
				entries = append(entries, modelShown{host: args[0], model: m, origin: origin})
			case isResults(args[0]):
				err := withResults(args[0], func(r *results.Results) error {
					a, err := assess.FromResults(r, assess.Options{})
					if err != nil {
						return err
					}
					for _, t := range a.Treatments {
						for _, m := range t.Models {
							if (host == "" || m.Host == host) && (resource == "" || m.Resource == resource) && (treatment == "" || t.Name == treatment) {
								entries = append(entries, modelShown{treatment: t.Name, host: m.Host, resource: m.Resource, model: m.Model, origin: m.Origin, from: m.From})
							}
						}
					}
					return nil
				})
				if err != nil {
					return err
				}
				if len(entries) == 0 {
					return fmt.Errorf("%s gives no ESL model%s; models come from a lab event, analysis.esl.models or headroom assess --model", args[0], selection(host, resource, treatment))
				}
			default:
				m, err := esl.Load(args[0])
				if err != nil {
					return err
				}
				entries = append(entries, modelShown{model: m, origin: "file " + args[0]})
			}
			if out != "" {
				if len(entries) != 1 {
					return &exitError{ExitUsage, fmt.Sprintf("-o writes one model, but %d are shown; select one with --host, --resource and --treatment", len(entries))}
				}
				doc, err := yaml.Marshal(entries[0].model)
				if err != nil {
					return err
				}
				if err := os.WriteFile(out, doc, 0o644); err != nil {
					return fmt.Errorf("cannot write %s: %w", out, err)
				}
			}
			for i, e := range entries {
				if i > 0 {
					fmt.Fprintln(w)
				}
				writeModel(w, e)
			}
			if out != "" {
				fmt.Fprintf(w, "Model: %s\n", out)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&labRef, "lab", "", "a spec with a lab: section, or the name of a lab that is up; the argument is then a host")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the model shown to this file")
	cmd.Flags().StringVar(&host, "host", "", "with a results directory: only this host")
	cmd.Flags().StringVar(&resource, "resource", "", "with a results directory: only this resource, e.g. volume:data")
	cmd.Flags().StringVar(&treatment, "treatment", "", "with a results directory: only this treatment")
	return cmd
}

type modelShown struct {
	treatment, host, resource, origin string
	from                              time.Time // when the model came into force (zero: throughout)
	model                             esl.Model
}

func selection(host, resource, treatment string) string {
	var parts []string
	for _, p := range []struct{ k, v string }{{"host", host}, {"resource", resource}, {"treatment", treatment}} {
		if p.v != "" {
			parts = append(parts, p.k+" "+p.v)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " for " + strings.Join(parts, ", ")
}

// isResults says whether arg is a results directory or database rather
// than a model file.
func isResults(arg string) bool {
	fi, err := os.Stat(arg)
	return err == nil && (fi.IsDir() || strings.HasSuffix(arg, ".db"))
}

// labVolumeModel is the analytical model of a lab host's volume, from a
// spec's lab: section or from a lab that is up.
func labVolumeModel(ref, hostName string) (esl.Model, string, error) {
	var hosts []lab.HostState
	var cat *lab.Catalog
	from := ""
	if fi, err := os.Stat(ref); err == nil && !fi.IsDir() {
		def, dir, _, err := readLabSection(ref)
		if err != nil {
			return nil, "", err
		}
		hcs, c, err := def.Resolve(dir)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", ref, err)
		}
		for _, h := range hcs {
			hosts = append(hosts, lab.HostState{HostConfig: h})
		}
		cat, from = c, "the lab: section of "+ref
	} else {
		for _, st := range lab.List() {
			if st.Name == ref {
				hosts, cat, from = st.Hosts, st.Catalog, "lab "+ref+" (up)"
			}
		}
		if from == "" {
			return nil, "", fmt.Errorf("--lab %s is neither a spec file nor a lab that is up (headroom lab status lists them)", ref)
		}
	}
	var names []string
	for _, h := range hosts {
		names = append(names, h.Name)
		if h.Name != hostName {
			continue
		}
		if len(h.Volumes) == 0 {
			return nil, "", fmt.Errorf("host %s in %s has no volume", hostName, from)
		}
		m, err := labVolume(h, cat)
		if err != nil {
			return nil, "", err
		}
		if m == nil {
			return nil, "", fmt.Errorf("the volume of %s in %s has no provisioned IOPS, so no analytical model", hostName, from)
		}
		return m, fmt.Sprintf("analytical, from %s: %s volume %s, %g GiB, %g IOPS, on a %s host", from, h.Volumes[0].Type, h.Volumes[0].Name, h.Volumes[0].SizeGiB, h.Volumes[0].IOPS, h.Type), nil
	}
	return nil, "", fmt.Errorf("%s has no host %s; its hosts are %s", from, hostName, strings.Join(names, ", "))
}

// labVolume is the analytical model of a lab host's first volume, as
// esl.FromLabVolume derives it from the results of a lab campaign.
func labVolume(h lab.HostState, cat *lab.Catalog) (*esl.Analytical, error) {
	v := h.Volumes[0]
	vol := results.VolumeLimit{Name: v.Name, Type: v.Type, SizeGiB: v.SizeGiB, IOPS: v.IOPS, MiBps: v.MiBps, MonthlyPrice: v.MonthlyPrice}
	var it *results.InstanceType
	var vt *results.VolumeType
	if cat != nil {
		if t, ok := cat.Instance(h.Type); ok {
			it = &results.InstanceType{Name: t.Name, VCPUs: t.VCPUs, MemoryMiB: t.MemoryMiB, NetworkMbit: t.NetworkMbit, VolumeMiBps: t.VolumeMiBps, PricePerHour: t.PricePerHour}
		}
		if t, ok := cat.Volume(v.Type); ok {
			vt = &results.VolumeType{Name: t.Name, IOPSPerGiB: t.IOPSPerGiB, MaxIOPS: t.MaxIOPS, DefaultIOPS: t.DefaultIOPS, MaxMiBps: t.MaxMiBps,
				PricePerGiBMonth: t.PricePerGiBMonth, PricePerIOPSMonth: t.PricePerIOPSMonth}
		}
	}
	return esl.FromLabVolume(h.Name, vol, it, vt)
}

// showSizesKiB are the op sizes a size-dependent model is evaluated at:
// the benchmark sizes of seed-digest §4.
var showSizesKiB = []float64{4, 32, 64, 256, 1024}

func writeModel(w io.Writer, e modelShown) {
	head := ""
	if e.treatment != "" {
		head = "treatment " + e.treatment + ": "
	}
	if e.host != "" {
		head += e.host
		if e.resource != "" {
			head += " " + e.resource
		}
		head += ": "
	}
	if !e.from.IsZero() {
		head += "from " + e.from.UTC().Format("15:04:05.000") + ": "
	}
	fmt.Fprintf(w, "%s%s model (%s)\n", head, e.model.Kind(), e.origin)
	doc, err := yaml.Marshal(e.model)
	if err == nil {
		for _, line := range strings.Split(strings.TrimRight(string(doc), "\n"), "\n") {
			if len(line) > 0 && strings.HasPrefix(strings.TrimSpace(line), "- {level") {
				continue // a distribution's levels: the table below summarises them
			}
			fmt.Fprintln(w, "  "+line)
		}
	}
	sizes := []float64{0}
	switch m := e.model.(type) {
	case *esl.Analytical:
		sizes = showSizesKiB
	case *esl.Empirical:
		sizes = m.OpSizes()
	}
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  op size\tquality\tmean ESL\tp1\tp99\tsource")
	for _, d := range sizes {
		for _, q := range e.model.Qualities() {
			x, err := e.model.ESL(q, math.Max(d, 1))
			if err != nil {
				continue
			}
			size := "-"
			if d > 0 {
				size = fmt.Sprintf("%g KiB", d)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", size, q, level(q, x.Mean()), level(q, x.Quantile(0.01)), level(q, x.Quantile(0.99)), x.Source)
		}
	}
	tw.Flush()
}
