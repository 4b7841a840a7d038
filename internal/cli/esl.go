package cli

import (
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/analysis/slp"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/report/pressure"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target/disk"
	"github.com/headroom-dev/headroom/internal/workload"
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
			path, err := storePath(args[0])
			if err != nil {
				return err
			}
			st, err := store.Open(path)
			if err != nil {
				return err
			}
			defer st.Close()
			runs, err := benchmarkRuns(st, volume)
			if err != nil {
				return err
			}
			if name == "" {
				cp, _ := st.Campaign()
				name = cp.Name
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
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the model to this file (default: standard output)")
	cmd.Flags().StringVar(&name, "name", "", "the model's name (default: the campaign's)")
	cmd.Flags().IntVar(&bins, "bins", 0, fmt.Sprintf("equal-width bins per distribution (default %d)", esl.DefaultBins))
	cmd.Flags().StringVar(&volume, "volume", "", "HOST/RESOURCE: take ops and bytes from this monitored volume instead of the disk target's intervals")
	return cmd
}

// benchmarkRuns turns every completed run of a disk-target campaign into
// an esl.BenchmarkRun: its op size and read share from its treatment's
// spec, its per-second samples from its measured intervals (or from the
// monitored volume).
func benchmarkRuns(st *store.Store, volume string) ([]esl.BenchmarkRun, error) {
	cp, err := st.Campaign()
	if err != nil {
		return nil, err
	}
	if cp.SpecYAML == "" {
		return nil, fmt.Errorf("%s holds no campaign spec (imported data); build the model from the results of a disk-target campaign", st.Path())
	}
	sp, err := spec.Parse(cp.SpecFile, []byte(cp.SpecYAML))
	if err != nil {
		return nil, fmt.Errorf("the spec stored in %s does not validate with this version: %w", st.Path(), err)
	}
	specs := map[string]*spec.Spec{"": sp}
	for _, t := range sp.Treatments {
		specs[t.Name] = t.Spec
	}
	var vhost, vres string
	if volume != "" {
		var src string
		if vhost, vres, src, err = spec.ParseSeries(volume); err != nil {
			return nil, fmt.Errorf("--volume: %v", err)
		}
		if src != "" {
			return nil, fmt.Errorf("--volume %q: leave out @%s; the campaign's own samples are used", volume, src)
		}
	}
	runs, err := st.Runs()
	if err != nil {
		return nil, err
	}
	last := map[int]store.Run{}
	for _, r := range runs {
		if r.Status == store.StatusCompleted {
			last[r.Slot] = r
		}
	}
	var out []esl.BenchmarkRun
	for _, r := range runs {
		if lr, ok := last[r.Slot]; !ok || lr.ID != r.ID {
			continue
		}
		s := specs[r.Treatment]
		if s == nil {
			return nil, fmt.Errorf("run %d belongs to treatment %q, which the stored spec does not have", r.ID, r.Treatment)
		}
		where := "the campaign"
		if r.Treatment != "" {
			where = "treatment " + r.Treatment
		}
		opts, ok := s.Target.Options.(*disk.Options)
		if s.Target.Type != "disk" || !ok {
			return nil, fmt.Errorf("%s uses the %s target; an empirical ESL is built from the disk target (docs/targets.md)", where, s.Target.Type)
		}
		block, err := parseBlockSize(opts.BlockSize)
		if err != nil {
			return nil, fmt.Errorf("%s: target.block_size: %w", where, err)
		}
		readPct, rmw, err := readShare(s.Workload)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		b := esl.BenchmarkRun{OpSizeKiB: float64(block) / 1024, ReadPct: readPct}
		if vhost != "" {
			b.OpsPerS, b.BytesPerS, err = volumeSamples(st, r, vhost, vres)
		} else {
			b.OpsPerS, err = intervalRates(st, r, rmw)
			for _, o := range b.OpsPerS {
				b.BytesPerS = append(b.BytesPerS, o*float64(block))
			}
		}
		if err != nil {
			return nil, fmt.Errorf("run %d (%s): %w", r.ID, where, err)
		}
		if len(b.OpsPerS) == 0 {
			continue
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no completed run with measured intervals; run the benchmark campaign first", st.Path())
	}
	return out, nil
}

// parseBlockSize reads the disk target's block_size ("4KiB", "1MiB",
// "4096"); the target has checked it when the campaign ran.
func parseBlockSize(s string) (int64, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	mul := map[string]int64{"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30}[strings.TrimSpace(v[i:])]
	n, err := strconv.ParseInt(v[:i], 10, 64)
	if err != nil || mul == 0 || n <= 0 {
		return 0, fmt.Errorf("%q is not a block size like 4KiB", s)
	}
	return n * mul, nil
}

// readShare is the read percentage of the workload's operation mix
// (reads over reads and writes; read_modify_write is one of each) and
// whether it has read_modify_write operations (two I/Os each).
func readShare(w spec.Workload) (float64, bool, error) {
	name := w.YCSB
	if name == "" {
		name = "a"
	}
	cfg, err := workload.Preset(name)
	if err != nil {
		return 0, false, err
	}
	if len(w.Operations) > 0 {
		cfg.Mix = [workload.NumOpTypes]float64{}
		for op, weight := range w.Operations {
			t, ok := workload.ParseOpType(op)
			if !ok {
				return 0, false, fmt.Errorf("workload.operations: unknown operation %q", op)
			}
			cfg.Mix[t] = weight
		}
	}
	if cfg.Mix[workload.Scan] > 0 {
		return 0, false, fmt.Errorf("the workload has scans; an ESL benchmark issues single reads and writes (workload.operations: {read: 1} or {update: 1})")
	}
	rmw := cfg.Mix[workload.ReadModifyWrite]
	reads := cfg.Mix[workload.Read] + rmw
	writes := cfg.Mix[workload.Update] + cfg.Mix[workload.Insert] + rmw
	if reads+writes <= 0 {
		return 0, false, fmt.Errorf("the workload has no reads or writes")
	}
	// Rounded to 0.1%, so that a mix of 3:1 is labelled R75 exactly.
	return math.Round(1000*reads/(reads+writes)) / 10, rmw > 0, nil
}

// intervalRates are the run's operations per second in each measured
// interval, all operation types together (read_modify_write counts two
// I/Os). A short last interval (less than half the others) is left out.
func intervalRates(st *store.Store, r store.Run, rmw bool) ([]float64, error) {
	ivs, err := st.Intervals(r.ID, "measure")
	if err != nil {
		return nil, err
	}
	type acc struct {
		count float64
		dur   time.Duration
	}
	by := map[int64]*acc{}
	var starts []int64
	var longest time.Duration
	for _, iv := range ivs {
		k := iv.Start.UnixNano()
		a := by[k]
		if a == nil {
			a = &acc{dur: iv.Duration}
			by[k] = a
			starts = append(starts, k)
		}
		n := float64(iv.Count)
		if rmw && iv.Op == workload.ReadModifyWrite.String() {
			n *= 2
		}
		a.count += n
		longest = max(longest, iv.Duration)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	var out []float64
	for _, k := range starts {
		a := by[k]
		if a.dur <= 0 || a.dur < longest/2 {
			continue
		}
		out = append(out, a.count/a.dur.Seconds())
	}
	return out, nil
}

// volumeSamples are a monitored volume's ops and bytes per second over
// the run's measured phase.
func volumeSamples(st *store.Store, r store.Run, host, resource string) ([]float64, []float64, error) {
	xs, err := st.Samples(store.SampleFilter{RunID: -1, Host: host, Resource: resource, From: r.Summary.MeasureStart, To: r.Summary.MeasureEnd})
	if err != nil {
		return nil, nil, err
	}
	var keep = xs[:0]
	for _, x := range xs {
		if !x.Start.Add(x.Period).After(r.Summary.MeasureEnd) {
			keep = append(keep, x)
		}
	}
	if len(keep) == 0 {
		return nil, nil, fmt.Errorf("no samples of %s/%s in its measured phase; check --volume against headroom export -t samples", host, resource)
	}
	obs, err := slp.VolumeObservations(keep)
	if err != nil {
		return nil, nil, err
	}
	var ops, bytes []float64
	for _, o := range obs {
		ops, bytes = append(ops, o.Ops), append(bytes, o.Bytes)
	}
	return ops, bytes, nil
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
resources (from the lab event, stored models and the spec's
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
				path, err := storePath(args[0])
				if err != nil {
					return err
				}
				st, err := store.Open(path)
				if err != nil {
					return err
				}
				defer st.Close()
				a, err := pressure.Assess(st, pressure.Options{})
				if err != nil {
					return err
				}
				for _, t := range a.Treatments {
					for _, m := range t.Models {
						if (host == "" || m.Host == host) && (resource == "" || m.Resource == resource) && (treatment == "" || t.Name == treatment) {
							entries = append(entries, modelShown{treatment: t.Name, host: m.Host, resource: m.Resource, model: m.Model, origin: m.Origin})
						}
					}
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
		m, err := pressure.VolumeModel(h, h.Volumes[0], cat)
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
