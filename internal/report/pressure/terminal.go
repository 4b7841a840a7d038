package pressure

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/cost"
	assess "github.com/headroom-dev/headroom/internal/analysis/pressure"
	"github.com/headroom-dev/headroom/internal/analysis/slp"
	"github.com/headroom-dev/headroom/internal/report/format"
)

// Terminal writes the assessment for headroom assess: per treatment the
// SLP table and the findings, then the before/after comparison, the cost
// comparison, the normalisation fits and the notes.
func Terminal(w io.Writer, a *assess.Assessment) {
	fmt.Fprintf(w, "Service level pressure · %s\n", a.Campaign)
	fmt.Fprintln(w, RulesText(a))
	if len(a.Treatments) == 0 || subjectCount(a) == 0 {
		fmt.Fprintln(w, "\nNo monitored resource has an expected service level model: run on a lab (its volumes, CPUs and links have one), or give models with analysis.esl.models or --model.")
	}
	for _, t := range a.Treatments {
		writeTreatment(w, a, t)
	}
	if rows := BeforeAfter(a); len(rows) > 0 {
		fmt.Fprintf(w, "\nBefore and after (base %s)\n", a.Base)
		tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', 0)
		head := "  subject"
		for _, t := range a.Treatments {
			head += "\t" + treatmentLabel(t.Name) + " mean / p99 SLP"
		}
		fmt.Fprintln(tw, head)
		for _, r := range rows {
			line := "  " + r.Label
			for _, c := range r.Cells {
				line += "\t" + c
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
		for _, s := range Shifts(a) {
			fmt.Fprintln(w, "  "+s)
		}
	}
	if len(a.Costs) > 0 {
		fmt.Fprintln(w, "\nCost per achieved req/s (seed 000 Table 1: option A = the change as measured, option B = the base scaled out)")
		for _, c := range a.Costs {
			tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "  option\ttreatment\tnodes\t$/month\treq/s\t$/month per req/s")
			cc := c.Comparison
			fmt.Fprintf(tw, "  base\t%s\t%d\t%s\t%.1f\t%s\n", c.Base, cc.Base.Nodes, cost.Money(cc.Base.MonthlyCost), cc.Base.Throughput, cost.Money(cc.Base.PerReqPerS))
			fmt.Fprintf(tw, "  A (measured)\t%s\t%d\t%s\t%.1f\t%s\n", c.A, cc.A.Nodes, cost.Money(cc.A.MonthlyCost), cc.A.Throughput, cost.Money(cc.A.PerReqPerS))
			fmt.Fprintf(tw, "  B (scale-out, linear)\t%s\t%d\t%s\t%.1f\t%s\n", c.Base, cc.B.Nodes, cost.Money(cc.B.MonthlyCost), cc.B.Throughput, cost.Money(cc.B.PerReqPerS))
			tw.Flush()
			fmt.Fprintf(w, "  %s\n  prices: %s\n", SavingsSentence(c), c.Prices)
		}
	}
	if len(a.Fits) > 0 {
		fmt.Fprintln(w, "\nProvider-side vs client-side series (seed 000 §5.3)")
		for _, f := range a.Fits {
			fmt.Fprintln(w, "  "+fitSentence(f))
		}
	}
	if len(a.Notes) > 0 {
		fmt.Fprintln(w, "\nNotes")
		for _, n := range a.Notes {
			fmt.Fprintln(w, "  "+n)
		}
	}
}

func subjectCount(a *assess.Assessment) int {
	n := 0
	for _, t := range a.Treatments {
		n += len(t.Subjects)
	}
	return n
}

// RulesText states the thresholds and rules in one paragraph.
func RulesText(a *assess.Assessment) string {
	policy := "the op size where the ESL is highest"
	if a.Policy == slp.ObservedSize {
		policy = "each interval's mean op size"
	}
	return fmt.Sprintf("SLP(o) = Σ (o/s_j) f_j; critical thresholds %s; volume ESLs at %s. "+
		"Provision more when SLP > %g%% for at least %g%% of the time (TCPT); a transient event when %s (MCPT) without that; "+
		"over-provisioned when p99 SLP < %g%% on every quality.",
		percents(a.Thresholds), policy, a.Rules.PersistentThreshold, a.Rules.PersistentTCPTPct, a.Rules.TransientText(), a.Rules.OverProvisionedP99)
}

func percents(xs []float64) string {
	var p []string
	for _, x := range xs {
		p = append(p, fmt.Sprintf("%g%%", x))
	}
	return strings.Join(p, ", ")
}

// secs prints a duration to a tenth of a second: MCPT and TCPT are sums
// of whole intervals.
func secs(d time.Duration) string { return format.SecondsRounded(d.Seconds(), 1) }

func treatmentLabel(name string) string {
	if name == "" {
		return "campaign"
	}
	return name
}

func writeTreatment(w io.Writer, a *assess.Assessment, t assess.Treatment) {
	fmt.Fprintln(w)
	head := "Campaign"
	if t.Name != "" {
		head = "Treatment " + t.Name
	}
	if t.Imported {
		head += " · all samples (no runs)"
	} else {
		head += fmt.Sprintf(" · measured phases of %d completed run(s), %s per series at most", t.Runs, secs(t.Covered))
	}
	fmt.Fprintln(w, head)
	if t.Hosts != "" {
		fmt.Fprintln(w, "  "+t.Hosts)
	}
	if !math.IsNaN(t.Throughput) {
		line := fmt.Sprintf("  capacity %.1f req/s (the highest mean throughput that meets the SLO without client limits, at level %g)", t.Throughput, t.Level)
		if t.Cost != nil {
			line += fmt.Sprintf(" · %s/month · %s/month per req/s", cost.Money(t.Cost.MonthlyCost), cost.Money(t.Cost.PerReqPerS))
		}
		fmt.Fprintln(w, line)
	}
	if len(t.Subjects) == 0 {
		fmt.Fprintln(w, "  no subject with an ESL model and samples")
		return
	}
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', 0)
	head = "  host\tservice\tquality\tESL\tobserved\tmean\tp1\tp25\tp75\tp99"
	for _, c := range a.Thresholds {
		head += fmt.Sprintf("\tMCPT>%g%%\tTCPT>%g%%", c, c)
	}
	fmt.Fprintln(tw, head)
	for _, s := range t.Subjects {
		b := s.Summary.Box
		line := fmt.Sprintf("  %s\t%s\t%s\t%s\t%s", s.Host, s.Service, s.Quality, assess.FormatLevel(s.ESLMean, s.Unit), assess.FormatLevel(s.Observed, s.Unit))
		for _, v := range []float64{b.Mean, b.P1, b.P25, b.P75, b.P99} {
			line += "\t" + format.Terminal.Percent(v, 1)
		}
		for _, c := range s.Summary.Critical {
			line += fmt.Sprintf("\t%s\t%s", critText(c.MCPT, c.MCPTPct), critText(c.TCPT, c.TCPTPct))
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	fmt.Fprintln(w, "  ESL models:")
	seen := map[string]bool{}
	for _, s := range t.Subjects {
		k := s.Host + " " + s.Service
		if !seen[k] {
			seen[k] = true
			fmt.Fprintf(w, "    %s: %s\n", k, s.Model)
		}
	}
	if len(t.Findings) == 0 {
		fmt.Fprintln(w, "  Findings: none (no persistent or transient pressure, nothing over-provisioned)")
		return
	}
	fmt.Fprintln(w, "  Findings:")
	for _, f := range t.Findings {
		fmt.Fprintf(w, "    %s %s\n", classMark(f.Class), f.Message)
		if f.Action != "" {
			fmt.Fprintf(w, "      -> %s\n", f.Action)
		}
	}
}

func classMark(c slp.Class) string {
	switch c {
	case slp.ProvisionMore:
		return "[provision more]"
	case slp.TransientSaturation:
		return "[transient]"
	}
	return "[over-provisioned]"
}

func critText(d time.Duration, p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return fmt.Sprintf("%s (%.0f%%)", secs(d), p)
}

// SavingsSentence reads a cost row's savings.
func SavingsSentence(c cost.Row) string {
	cc := c.Comparison
	s := fmt.Sprintf("savings A - B: %s/month per req/s", cost.Money(cc.Savings))
	if cc.Savings < 0 {
		s += " (option A buys a req/s for less)"
	} else {
		s += " (scaling out buys a req/s for less)"
	}
	if cc.Capped {
		s += fmt.Sprintf("; option B was held at %d nodes (analysis.esl.option_b.max_nodes)", cc.B.Nodes)
	}
	return s
}

// BeforeAfterRow is one subject across treatments.
type BeforeAfterRow struct {
	Label string
	Cells []string // per treatment: "mean / p99", "-" when absent
	Means []float64
	P99s  []float64
}

// BeforeAfter lines up each subject's mean and p99 SLP across treatments,
// then throughput and cost per req/s; nil with fewer than two treatments.
func BeforeAfter(a *assess.Assessment) []BeforeAfterRow {
	if len(a.Treatments) < 2 {
		return nil
	}
	var labels []string
	idx := map[string]int{}
	for _, t := range a.Treatments {
		for _, s := range t.Subjects {
			if _, ok := idx[s.Label()]; !ok {
				idx[s.Label()] = len(labels)
				labels = append(labels, s.Label())
			}
		}
	}
	rows := make([]BeforeAfterRow, len(labels))
	for i, l := range labels {
		rows[i] = BeforeAfterRow{Label: l}
		for range a.Treatments {
			rows[i].Cells = append(rows[i].Cells, "-")
			rows[i].Means = append(rows[i].Means, math.NaN())
			rows[i].P99s = append(rows[i].P99s, math.NaN())
		}
	}
	for j, t := range a.Treatments {
		for _, s := range t.Subjects {
			r := &rows[idx[s.Label()]]
			b := s.Summary.Box
			r.Cells[j] = format.Terminal.Percent(b.Mean, 1) + " / " + format.Terminal.Percent(b.P99, 1)
			r.Means[j], r.P99s[j] = b.Mean, b.P99
		}
	}
	tp := BeforeAfterRow{Label: "capacity (req/s)"}
	pr := BeforeAfterRow{Label: "$/month per req/s"}
	for _, t := range a.Treatments {
		tp.Cells = append(tp.Cells, fmt.Sprintf("%.1f", t.Throughput))
		tp.Means = append(tp.Means, t.Throughput)
		v := math.NaN()
		if t.Cost != nil {
			v = t.Cost.PerReqPerS
		}
		pr.Cells = append(pr.Cells, cost.Money(v))
		pr.Means = append(pr.Means, v)
	}
	return append(rows, tp, pr)
}

// Shifts says, per volume, how the pressure moved between the base and
// each other treatment (seed 000 Figs. 6-7: from ops/s towards bandwidth,
// or away).
func Shifts(a *assess.Assessment) []string {
	return shifts(a, func(assess.Subject) bool { return true })
}

// volumeShifts are the Shifts of volumes only, for summaries.
func volumeShifts(a *assess.Assessment) []string {
	return shifts(a, func(s assess.Subject) bool { return assess.IsVolume(s.Resource) })
}

func shifts(a *assess.Assessment, keep func(assess.Subject) bool) []string {
	var base *assess.Treatment
	for i := range a.Treatments {
		if a.Treatments[i].Name == a.Base {
			base = &a.Treatments[i]
		}
	}
	if base == nil {
		return nil
	}
	var out []string
	for _, t := range a.Treatments {
		if t.Name == a.Base {
			continue
		}
		for _, s := range t.Subjects {
			if !keep(s) {
				continue
			}
			for _, b := range base.Subjects {
				if b.Label() != s.Label() {
					continue
				}
				from, to := b.Summary.Box.Mean, s.Summary.Box.Mean
				if math.Abs(to-from) < 0.05 { // the same to the printed digit
					out = append(out, fmt.Sprintf("%s: mean SLP stayed at %s (%s and %s)", s.Label(), format.Terminal.Percent(to, 1), treatmentLabel(base.Name), treatmentLabel(t.Name)))
					continue
				}
				dir := "fell"
				if to > from {
					dir = "rose"
				}
				out = append(out, fmt.Sprintf("%s: mean SLP %s from %s (%s) to %s (%s)", s.Label(), dir, format.Terminal.Percent(from, 1), treatmentLabel(base.Name), format.Terminal.Percent(to, 1), treatmentLabel(t.Name)))
			}
		}
	}
	return out
}
