package spec

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// combinedAllocLimit bounds what parsing one combined spec may allocate:
// every construct is bounded on its own, and their product must be too.
const combinedAllocLimit = 400 << 20

// maxCombinedLine bounds one printed error: a file name, line, path and
// message, the last two clipped (errors.go).
const maxCombinedLine = 1200

// combined is a spec that puts several costly constructs together: a long
// anchored value aliased many times, factors with many values, listed
// treatments setting the big value, many levels and repetitions, long
// phases and, sometimes, a budget.
type combined struct {
	factors, values, treatments int // counts
	aliasUses, valueBytes       int // the anchored value and how often it is used
	where                       int // which field the aliases go into
	levels, repetitions         int
	measure                     string
	budget                      string // "" = none
}

// aliasFields are where the aliased value goes: list fields of the spec,
// valid or not for a long string.
var aliasFields = []string{"monitor.processes", "monitor.cgroups", "monitor.disks", "load.rates", "events"}

func (c combined) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: fz\ntarget: {type: fake}\nworkload: {ycsb: a}\n")
	fmt.Fprintf(&b, "load: {model: open, rates: {from: 1, to: %d, step: 1}}\n", c.levels)
	fmt.Fprintf(&b, "phases: {warmup: 0s, measure: %s}\nrepetitions: %d\n", c.measure, c.repetitions)
	if c.budget != "" {
		fmt.Fprintf(&b, "budget: %s\n", c.budget)
	}
	big := "/" + strings.Repeat("v", c.valueBytes)
	uses := "[&b " + big + strings.Repeat(",*b", c.aliasUses) + "]"
	field := aliasFields[c.where%len(aliasFields)]
	if c.treatments == 0 {
		section, key, _ := strings.Cut(field, ".")
		if key == "" {
			fmt.Fprintf(&b, "%s: %s\n", section, uses)
		} else {
			fmt.Fprintf(&b, "%s:\n  %s: %s\n", section, key, uses)
		}
	} else {
		b.WriteString("treatments:\n")
		fmt.Fprintf(&b, "  - {name: t0, set: {%s: %s}}\n", field, uses)
		for i := 1; i < c.treatments; i++ {
			fmt.Fprintf(&b, "  - {name: t%d, set: {%s: *b}}\n", i, field)
		}
	}
	if c.factors > 0 {
		b.WriteString("factors:\n")
		paths := []string{"seed", "order_seed", "workload.record_count", "workload.field_count", "load.max_in_flight", "workload.max_scan_length"}
		for f := 0; f < c.factors; f++ {
			vals := make([]string, c.values)
			for v := range vals {
				vals[v] = fmt.Sprint(v + 1)
			}
			fmt.Fprintf(&b, "  - {path: %s, values: [%s]}\n", paths[f%len(paths)], strings.Join(vals, ", "))
		}
	}
	return b.String()
}

// FuzzCombined checks that constructs that are each bounded stay bounded
// together: whatever mix of factors, treatments, aliases of large values,
// levels, repetitions and phase lengths, Parse answers with a spec within
// its budget or at most maxPrinted+1 one-line errors, in bounded memory.
// Run it with
//
//	go test -run=^$ -fuzz=FuzzCombined -fuzztime=15s ./internal/spec
func FuzzCombined(f *testing.F) {
	// The reported inputs: a 10 KiB value aliased as often as a 1 MiB
	// file holds, and in 590 treatments' set:; 10^8 runs; 237 years.
	f.Add(uint8(1), uint16(2), uint16(0), uint32(340_000), uint32(10<<10), uint8(0), uint16(1), uint32(1), uint32(60), uint8(0))
	f.Add(uint8(0), uint16(0), uint16(590), uint32(590), uint32(10<<10), uint8(0), uint16(1), uint32(1), uint32(60), uint8(0))
	f.Add(uint8(3), uint16(10), uint16(0), uint32(0), uint32(1), uint8(3), uint16(100), uint32(1000), uint32(1), uint8(0))
	f.Add(uint8(0), uint16(0), uint16(0), uint32(0), uint32(1), uint8(3), uint16(901), uint32(32), uint32(3*24*60*60), uint8(0))
	f.Add(uint8(2), uint16(10), uint16(10), uint32(100), uint32(100), uint8(1), uint16(10), uint32(10), uint32(60), uint8(1))
	f.Add(uint8(2), uint16(3), uint16(4), uint32(2), uint32(8), uint8(2), uint16(3), uint32(2), uint32(2), uint8(2))
	f.Fuzz(func(t *testing.T, factors uint8, values, treatments uint16, aliasUses, valueBytes uint32, where uint8, levels uint16, reps uint32, measureSec uint32, budget uint8) {
		c := combined{
			factors: int(factors % 8), values: int(values % 40), treatments: int(treatments % 1200),
			aliasUses: int(aliasUses % 400_000), valueBytes: int(valueBytes % (64 << 10)), where: int(where),
			levels: max(int(levels), 1), repetitions: max(int(reps%200_000), 1),
			measure: fmt.Sprintf("%ds", max(measureSec%(4*24*60*60), 1)),
		}
		switch budget % 4 {
		case 1:
			c.budget = "{max_runs: 1000000, max_hours: 8760}"
		case 2:
			c.budget = "{max_runs: 1}"
		case 3:
			c.budget = "{max_hours: 0.5}"
		}
		data := []byte(c.text())
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s, err := Parse("f.yaml", data)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > combinedAllocLimit {
			t.Fatalf("parsing %+v (%d bytes) allocated %d MiB, more than %d MiB", c, len(data), alloc>>20, combinedAllocLimit>>20)
		}
		if err != nil {
			var es Errors
			if s != nil || !errors.As(err, &es) || len(es) == 0 || len(es) > maxPrinted+1 {
				t.Fatalf("%+v: not a spec or at most %d errors: %v", c, maxPrinted+1, err)
			}
			for _, e := range es {
				line := e.Error()
				if strings.ContainsAny(line, "\r\n") || !strings.HasPrefix(line, "f.yaml") || e.Msg == "" || len(line) > maxCombinedLine {
					t.Fatalf("%+v: malformed error %.300q", c, line)
				}
			}
			return
		}
		// Accepted: its cost is within its budget, and adds up.
		cost := s.Cost()
		maxRuns, maxHours := defaultMaxRuns, float64(defaultMaxHours)
		if s.Budget != nil {
			maxRuns, maxHours = budgetOr(s.Budget.MaxRuns, defaultMaxRuns), budgetOr(s.Budget.MaxHours, defaultMaxHours)
		}
		if cost.Runs > maxRuns || cost.Hours > maxHours {
			t.Fatalf("%+v: accepted %d runs and %.1f hours, over its budget", c, cost.Runs, cost.Hours)
		}
		runs := 0
		for _, tr := range s.Treatments {
			runs += len(tr.Spec.Plan())
		}
		if len(s.Treatments) == 0 {
			runs = len(s.Plan())
		}
		if runs != cost.Runs {
			t.Fatalf("%+v: Cost says %d runs, the plans %d", c, cost.Runs, runs)
		}
	})
}
