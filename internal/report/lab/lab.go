// Package lab is the report's "Lab" section: for each lab that came up
// with a compute unit, what a vCPU meant on the machine that ran it (the
// calibration, the reference, what others took) and each host's vCPUs in
// that machine's cores. It only lays out the results model's facts.
package lab

import (
	"fmt"
	"sort"
	"strings"

	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// SectionID is the section's anchor in report.html.
const SectionID = "lab"

// ReportSections is the Lab section, present when a lab recorded its
// compute unit (labs made before compute units have none, and their
// reports stay as they were).
func ReportSections(r *results.Results) ([]page.Section, error) {
	var labs []results.Lab
	for _, l := range r.Labs() {
		if l.ComputeUnit != nil {
			labs = append(labs, l)
		}
	}
	if len(labs) == 0 {
		return nil, nil
	}
	return []page.Section{Section(labs)}, nil
}

// Section lays out labs, each with a compute unit.
func Section(labs []results.Lab) page.Section {
	first := labs[0].ComputeUnit
	s := page.Section{ID: SectionID, Title: "Lab", Summary: Summary(first)}
	for i, l := range labs {
		cu := l.ComputeUnit
		if i > 0 && !sameUnit(cu, labs[i-1].ComputeUnit) {
			s.Blocks = append(s.Blocks, page.Block{Note: &page.Note{Level: "info", Text: fmt.Sprintf("Lab %s (up %s): %s", l.Name, l.Up.UTC().Format("15:04:05"), Summary(cu))}})
		}
		for _, n := range cu.Notes {
			s.Blocks = append(s.Blocks, page.Block{Note: &page.Note{Level: "warning", Text: "Lab " + l.Name + ": " + n}})
		}
		t := &page.Table{ID: fmt.Sprintf("lab-hosts-%d", i+1), Title: fmt.Sprintf("Hosts of lab %s as they came up", l.Name),
			Source:  "the lab's record when it came up: instance type, vCPUs, and the CPU quota they were given on this machine (vCPUs x cores per vCPU, capped by its cores)",
			Columns: []page.Column{{Title: "host"}, {Title: "type"}, {Title: "vCPUs"}, {Title: "quota", Unit: "cores"}, {Title: "price", Unit: "$/hour"}}}
		hosts := append([]results.HostLimits(nil), l.Hosts...)
		sort.Slice(hosts, func(a, b int) bool { return hosts[a].Host < hosts[b].Host })
		for _, h := range hosts {
			q := Quota(cu, h.VCPUs)
			t.Rows = append(t.Rows, []page.Cell{page.Text(h.Host), page.Text(h.Type), page.Number(fmt.Sprintf("%g", h.VCPUs), h.VCPUs),
				page.Number(fmt.Sprintf("%.3g", q), q), page.Number(fmt.Sprintf("%.3f", h.PricePerHour), h.PricePerHour)})
		}
		s.Blocks = append(s.Blocks, page.Block{Table: t})
	}
	return s
}

// Quota is the cores a host of vcpus vCPUs was given under cu.
func Quota(cu *results.ComputeUnit, vcpus float64) float64 {
	q := vcpus * cu.CoresPerVCPU()
	if cu != nil && cu.Mode == "reference" && cu.Cores > 0 && q > float64(cu.Cores) {
		q = float64(cu.Cores)
	}
	return q
}

// Summary says in plain words what a vCPU meant.
func Summary(cu *results.ComputeUnit) string {
	var b strings.Builder
	if cu.Mode == "machine" {
		fmt.Fprintf(&b, "A vCPU was one core of the machine that ran the lab (lab.compute_unit: machine), so hosts were as fast as that machine: %.2f compute units per core.", cu.Score)
	} else {
		fmt.Fprintf(&b, "A vCPU was one compute unit: the work %s does in a second. The machine that ran the lab did %.2f units per core, so each vCPU got %.3g of its cores.", cu.Reference, cu.Score, cu.CoresPerVCPU())
	}
	if m := cu.Measurement; m != nil {
		fmt.Fprintf(&b, " Measured over %d tries (spread %.0f%%) while other processes used %.2f of %d cores (steal %.1f%%).", m.Tries, 100*m.Spread, m.OthersCores, cu.Cores, m.StealPct)
	}
	b.WriteString(" docs/lab.md explains the unit and what it cannot make equal (memory bandwidth, caches, JIT compilers).")
	return b.String()
}

func sameUnit(a, b *results.ComputeUnit) bool {
	return a.Mode == b.Mode && a.Score == b.Score
}
