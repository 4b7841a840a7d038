package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/headroom-dev/headroom/internal/cpuref"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/spec"
)

func newLabCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "lab",
		Short: "Bring an emulated IaaS lab up or down, show it, run commands on its hosts",
		Long: `The lab emulates rented hosts on this machine: each host is a network
namespace with its own address, CPU quota, memory limit, shaped link and an
IOPS-limited volume, from an instance-type catalog with prices. A campaign
with a lab: section brings its lab up and down by itself; these commands are
for looking at a lab, keeping one up between campaigns, and cleaning up.
See docs/lab.md.`,
	}
	c.AddCommand(newLabUpCmd(), newLabStatusCmd(), newLabDownCmd(), newLabExecCmd(), newLabCatalogCmd(), newLabCalibrateCmd())
	return c
}

func newLabUpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "up SPEC.yaml",
		Short: "Bring up the lab of a spec's lab: section (it stays up until lab down)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			def, dir, name, err := readLabSection(args[0])
			if err != nil {
				return err
			}
			hosts, cat, err := def.Resolve(dir)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			out := c.OutOrStdout()
			l, err := lab.Up(name, hosts, cat, lab.Options{Persistent: true, Progress: func(s string) { fmt.Fprintln(out, s) }})
			if err != nil {
				return err
			}
			printLab(out, l.State())
			return nil
		},
	}
}

// readLabSection reads the lab: section of a spec file (a whole campaign,
// or a file with only name: and lab:), strictly, with file:line errors.
func readLabSection(path string) (*lab.Definition, string, string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", "", fmt.Errorf("cannot read %s: %v", path, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, "", "", fmt.Errorf("%s: not valid YAML: %v", path, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, "", "", fmt.Errorf("%s: expected a mapping with a lab: section", path)
	}
	root := doc.Content[0]
	var labNode *yaml.Node
	name := ""
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "lab":
			labNode = root.Content[i+1]
		case "name":
			name = root.Content[i+1].Value
		}
	}
	if labNode == nil {
		return nil, "", "", fmt.Errorf("%s has no lab: section; add one like lab: {hosts: [{name: db1, type: small}]}", path)
	}
	var def lab.Definition
	if errs := spec.DecodeNode(path, labNode, "lab", &def); len(errs) > 0 {
		return nil, "", "", errs
	}
	if def.Name != "" {
		name = def.Name
	}
	if name == "" {
		return nil, "", "", fmt.Errorf("%s: the lab has no name; set lab.name (or the campaign's name)", path)
	}
	return &def, filepath.Dir(path), name, nil
}

func newLabStatusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status [NAME]",
		Short: "Show the labs that are up: hosts, addresses, limits now, processes, prices",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			out := c.OutOrStdout()
			sts := lab.List()
			shown := 0
			for _, st := range sts {
				if len(args) == 1 && st.Name != args[0] {
					continue
				}
				if shown > 0 {
					fmt.Fprintln(out)
				}
				printLab(out, st)
				shown++
			}
			if shown == 0 {
				if len(args) == 1 {
					return fmt.Errorf("no lab named %s is up", args[0])
				}
				fmt.Fprintln(out, "no lab is up")
			}
			return nil
		},
	}
}

func printLab(out io.Writer, st lab.State) {
	fmt.Fprintf(out, "lab %s: %d hosts on %s (gateway %s, cgroup %s), up since %s\n",
		st.Name, len(st.Hosts), st.Subnet, st.Gateway, st.Cgroups, st.Created.Format("2006-01-02 15:04:05 UTC"))
	printOwner(out, st)
	fmt.Fprintln(out, "  "+st.ComputeUnit.String())
	if st.ComputeUnit != nil {
		for _, n := range st.ComputeUnit.Notes {
			fmt.Fprintln(out, "  note: "+n)
		}
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tTYPE\tADDRESS\tVCPU\tCORES\tMEMORY\tLINK\tVOLUME\tPROCS\t$/HOUR\t$/MONTH")
	var hourly, monthly float64
	var l *lab.Lab
	if opened, err := lab.Open(st.Name); err == nil {
		l = opened
	}
	for _, h := range st.Hosts {
		link := "unlimited"
		if h.Now.NetworkMbit > 0 {
			link = fmt.Sprintf("%g Mbit/s", h.Now.NetworkMbit)
		}
		if h.Now.LinkDown {
			link += " (down)"
		}
		vol := "-"
		volMonth := 0.0
		if len(h.Volumes) > 0 {
			v := h.Volumes[0]
			vol = fmt.Sprintf("%s %s %g GiB", v.Name, v.Type, v.SizeGiB)
			if h.Now.IOPS > 0 {
				vol += fmt.Sprintf(" %g IOPS", h.Now.IOPS)
			}
			if h.Now.MiBps > 0 {
				vol += fmt.Sprintf(" %g MiB/s", h.Now.MiBps)
			}
			volMonth = v.MonthlyPrice
		}
		procs := "?"
		if l != nil {
			if pids, err := l.PIDs(h.Name); err == nil {
				procs = fmt.Sprint(len(pids))
				if h.Now.Stopped {
					procs += " (stopped)"
				}
			}
		}
		month := h.PricePerHour*lab.HoursPerMonth + volMonth
		hourly += h.PricePerHour
		monthly += month
		cores := h.Now.Cores
		if cores == 0 { // a lab made before compute units
			cores = h.Now.VCPUs
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%g\t%.3g\t%d MiB\t%s\t%s\t%s\t%.3f\t%.2f\n", h.Name, h.Type, h.Addr, h.Now.VCPUs, cores, h.MemoryBytes>>20, link, vol, procs, h.PricePerHour, month)
	}
	_ = tw.Flush()
	fmt.Fprintf(out, "total: $%.3f per hour for instances, $%.2f per month with volumes (emulated prices from the catalog)\n", hourly, monthly)
}

// printOwner says whose lab it is and what that means for lab down, in
// words for someone who did not start it.
func printOwner(out io.Writer, st lab.State) {
	since := st.OwnerSince().Format("2006-01-02 15:04:05 UTC")
	o := st.OwnedBy
	switch {
	case st.Owner == 0:
		fmt.Fprintf(out, "owner: none, the lab was brought up to stay, since %s\n", since)
	case st.OwnerRunning() || st.Owner == os.Getpid():
		fmt.Fprintf(out, "owner: process %d, still running, since %s\n", st.Owner, since)
	default:
		fmt.Fprintf(out, "owner: process %d, no longer running, since %s\n", st.Owner, since)
	}
	for _, f := range [][2]string{{"command", o.Command}, {"campaign", o.Campaign}, {"results", o.Results}} {
		if f[1] != "" {
			fmt.Fprintf(out, "  %-9s %s\n", f[0]+":", f[1])
		}
	}
	switch {
	case st.Owner == 0:
		fmt.Fprintf(out, "  it stays up until headroom lab down %s; campaigns with the same hosts use it\n", st.Name)
	case st.OwnerRunning() || st.Owner == os.Getpid():
		fmt.Fprintf(out, "  that process takes the lab down when it ends; until then lab down refuses it (--force takes it anyway)\n")
	default:
		fmt.Fprintf(out, "  the lab was left behind: headroom lab down %s removes it, or a campaign with the same hosts takes it over\n", st.Name)
	}
}

func newLabDownCmd() *cobra.Command {
	var all, force bool
	c := &cobra.Command{
		Use:   "down [NAME]",
		Short: "Remove a lab, or every lab no running campaign owns",
		Long: `Remove a lab and everything it made: processes on its hosts, namespaces,
links, cgroups, volume directories and its state file. This works also after
Headroom was killed in the middle of a campaign. Removing a lab that is not up
does nothing.

A lab that a campaign still running owns is refused (lab status shows the
owner): without a name, lab down refuses everything while any lab is in use;
--all takes down every lab no running process owns and leaves the others;
--force takes down the lab(s) even from under a running campaign.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			// The refusals first: they need no root and say more than
			// "needs root" to whoever runs this.
			if !force {
				if err := refuseLabDown(args, all); err != nil {
					return err
				}
			}
			if os.Geteuid() != 0 {
				if len(lab.List()) == 0 {
					fmt.Fprintln(c.OutOrStdout(), "no lab is up")
					return nil
				}
				return errors.New("taking a lab down needs root; run it as root")
			}
			var err error
			switch {
			case len(args) == 1 && !all && force:
				err = lab.ForceDown(args[0])
			case len(args) == 1 && !all:
				err = lab.Down(args[0])
			default:
				err = lab.DownAll(force)
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout(), "lab down: nothing of it is left")
			return nil
		},
	}
	c.Flags().BoolVar(&all, "all", false, "remove every lab whose owner is no longer running, and every lab brought up to stay")
	c.Flags().BoolVar(&force, "force", false, "remove the lab(s) even while the campaign that owns them runs")
	return c
}

// refuseLabDown is lab down's refusal without --force: the named lab while
// its owner runs, or, without a name or --all, every lab while any is in
// use (a bare lab down must not take a lab from under a campaign).
func refuseLabDown(args []string, all bool) error {
	if len(args) == 1 && !all {
		return lab.CheckDown(args[0])
	}
	if all {
		return nil // DownAll leaves the labs in use and says so
	}
	var errs []error
	for _, st := range lab.InUse() {
		errs = append(errs, fmt.Errorf("lab %s is in use by %s, so lab down without a name takes nothing down; wait for that process to end or stop it, take down only the labs nobody uses with headroom lab down --all, or take it down anyway with headroom lab down --force", st.Name, st.DescribeOwner()))
	}
	return errors.Join(errs...)
}

func newLabExecCmd() *cobra.Command {
	var name string
	c := &cobra.Command{
		Use:   "exec HOST -- COMMAND [ARGS...]",
		Short: "Run a command on a lab host (inside its namespace and limits)",
		Long: `Run a command on a lab host: it joins the host's cgroups (CPU quota, memory
limit, volume IOPS) and network namespace, so it sees the host's address and
link. Use it to run fio against a volume, or Headroom itself with an in-process
target (headroom lab exec db1 -- headroom run disk.yaml) so that its I/O is
the host's.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			if name == "" {
				sts := lab.List()
				if len(sts) != 1 {
					return fmt.Errorf("%d labs are up; name one with --lab", len(sts))
				}
				name = sts[0].Name
			}
			l, err := lab.Open(name)
			if err != nil {
				return err
			}
			path, err := exec.LookPath(args[1])
			if err != nil {
				return fmt.Errorf("%s: %v", args[1], err)
			}
			cmd := exec.Command(path, args[2:]...)
			// The command's own output, as a terminal would get it from
			// the command run directly (an interactive tool draws with
			// escapes).
			cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, dataOut(c), rawErr(c)
			if err := l.Command(args[0], cmd, 0, 0); err != nil {
				return err
			}
			if err := cmd.Run(); err != nil {
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					return &exitError{ee.ExitCode(), fmt.Sprintf("%s exited with status %d on %s", args[1], ee.ExitCode(), args[0])}
				}
				return err
			}
			return nil
		},
	}
	c.Flags().StringVar(&name, "lab", "", "the lab (default: the only one that is up)")
	return c
}

func newLabCatalogCmd() *cobra.Command {
	var file string
	c := &cobra.Command{
		Use:   "catalog",
		Short: "List the instance and volume types a lab can use, with prices",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cat, err := lab.LoadCatalog(file)
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "INSTANCE TYPE\tVCPU\tMEMORY\tLINK\tVOLUME LINK\t$/HOUR")
			for _, t := range cat.InstanceTypes {
				vl := "not guaranteed"
				if t.VolumeMiBps > 0 {
					vl = fmt.Sprintf("%g MiB/s", t.VolumeMiBps)
				}
				fmt.Fprintf(tw, "%s\t%g\t%d MiB\t%g Mbit/s\t%s\t%.3f\n", t.Name, t.VCPUs, t.MemoryMiB, t.NetworkMbit, vl, t.PricePerHour)
			}
			_ = tw.Flush()
			fmt.Fprintln(out)
			tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "VOLUME TYPE\tIOPS\tDEFAULT\tCAP\t$/GiB-MONTH\t$/IOPS-MONTH")
			for _, t := range cat.VolumeTypes {
				iops := "not provisioned"
				if t.IOPSPerGiB > 0 || t.MaxIOPS > 0 {
					iops = fmt.Sprintf("<= %g/GiB, <= %g", t.IOPSPerGiB, t.MaxIOPS)
				}
				capMiB := "none"
				if t.MaxMiBps > 0 {
					capMiB = fmt.Sprintf("%g MiB/s", t.MaxMiBps)
				}
				fmt.Fprintf(tw, "%s\t%s\t%g\t%s\t%.3f\t%.3f\n", t.Name, iops, t.DefaultIOPS, capMiB, t.PricePerGiBMonth, t.PricePerIOPSMonth)
			}
			_ = tw.Flush()
			fmt.Fprintln(out)
			fmt.Fprintln(out, strings.TrimSpace(`
These types are emulations on this machine, modelled on the m1 family and a
provisioned-IOPS volume of the seeds; they are not a provider's offerings.`))
			return nil
		},
	}
	c.Flags().StringVar(&file, "catalog", "", "a catalog file whose types are added to the shipped ones")
	return c
}

func newLabCalibrateCmd() *cobra.Command {
	var tries, times int
	c := &cobra.Command{
		Use:   "calibrate",
		Short: "Measure this machine's speed per core in compute units (what a lab vCPU gets here)",
		Long: `Runs the lab's reference workload (integer, hash and memory loops) on one
thread and prints this machine's speed per core in compute units, what
other processes and the hypervisor took meanwhile, and how many of this
machine's cores one vCPU gets. A lab does this when it comes up; this
command needs no root. See docs/lab.md, "The compute unit".`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if tries < 1 || times < 1 {
				return errors.New("--tries and --times must be at least 1")
			}
			out := c.OutOrStdout()
			for i := 0; i < times; i++ {
				m, err := cpuref.Measure(cpuref.Options{Tries: tries})
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%s; a vCPU gets %.3g cores (took %v)\n", m, 1/m.Score, m.Took.Round(time.Millisecond))
			}
			return nil
		},
	}
	c.Flags().IntVar(&tries, "tries", 5, "runs of each part; the median is kept")
	c.Flags().IntVar(&times, "times", 1, "calibrations to print, one after another")
	return c
}
