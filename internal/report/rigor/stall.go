package rigor

import (
	"fmt"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/stall"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// StallSections is the report section of the closed loop's stall watch
// (internal/analysis/stall): per run the stalled share of the measured
// time, the longest stall and the requests that waited through stalls, and
// beside the measured percentiles the percentiles corrected for
// coordinated omission. No section without a closed-loop treatment; open
// loops measure latency from the intended start already.
func StallSections(r *results.Results) ([]page.Section, error) {
	ts, err := stall.FromResults(r)
	if err != nil || len(ts) == 0 {
		return nil, err
	}
	sec := page.Section{ID: "stalls", Title: "Closed loop: stalls and latency corrected for coordinated omission"}
	var summary []string
	for _, t := range ts {
		s := stallText(t)
		if len(ts) > 1 || t.Treatment.Name != "" {
			s = label(t.Treatment.Name) + ": " + s
		}
		summary = append(summary, format.Sentence(s))
		sec.Blocks = append(sec.Blocks, stallTable(t))
		for _, n := range stallNotes(t) {
			sec.Blocks = append(sec.Blocks, note("warning", capital(n)))
		}
	}
	sec.Summary = strings.Join(summary, " ")
	return []page.Section{sec}, nil
}

// stallText is a treatment's stall verdict in a sentence; the finding and
// the section's summary use it.
func stallText(t stall.Treatment) string {
	w := t.Worst()
	if t.Understates() {
		return fmt.Sprintf("closed-loop latency understates: use an open loop. At %s (repetition %d) no request completed for %s of the measured time (longest stall %s, %s waited through stalls); p99 corrected for coordinated omission is %s against %s measured",
			format.LoadText("closed", w.Run.Level), w.Run.Repetition, format.Page.Percent(100*w.Share, 1), dur(w.Longest),
			format.Plural(w.Waited, "request"), dur(w.Corrected.P99), dur(w.Measured.P99))
	}
	watched := 0
	for _, r := range t.Runs {
		if r.Watched {
			watched++
		}
	}
	if watched == 0 {
		return fmt.Sprintf("no stall watch was recorded for these runs; p99 corrected for coordinated omission is %s against %s measured at %s",
			dur(w.Corrected.P99), dur(w.Measured.P99), format.LoadText("closed", w.Run.Level))
	}
	s := "no material stall"
	if n := stallCount(t); n > 0 {
		s = fmt.Sprintf("%s, none material (the largest covers %s of the measured time)", format.Plural(n, "short stall"), format.Page.Percent(100*w.Share, 2))
	}
	return s + fmt.Sprintf(" in %s: the closed loop's percentiles stand (corrected for coordinated omission they move by at most %s at p99)",
		format.Plural(watched, "watched run"), format.Page.Percent(100*maxP99Shift(t), 0))
}

func stallCount(t stall.Treatment) int {
	n := 0
	for _, r := range t.Runs {
		n += len(r.Stalls)
	}
	return n
}

func maxP99Shift(t stall.Treatment) float64 {
	worst := 0.0
	for _, r := range t.Runs {
		if r.Measured.P99 > 0 {
			worst = max(worst, float64(r.Corrected.P99)/float64(r.Measured.P99)-1)
		}
	}
	return worst
}

func stallTable(t stall.Treatment) page.Block {
	latCol := func(title string) page.Column { return page.Column{Title: title, Unit: "µs"} }
	tb := &page.Table{
		ID:    format.ID("stalls-" + t.Treatment.Name),
		Title: "Stalls and latency percentiles corrected for coordinated omission, " + label(t.Treatment.Name),
		Source: fmt.Sprintf("from %s of %s, measured phase, all operations; pace E = the mean interval between one client's requests outside stalls "+
			"(clients x (measured time - stalled time) / (requests - requests that waited through stalls), think time included); "+
			"stall = a period in which no request completed, at least %d paces and at least %s long; "+
			"corrected for coordinated omission = each latency v above E also counts v-E, v-2E, ... (HdrHistogram's corrected recording)",
			format.Plural(len(t.Runs), "completed run"), label(t.Treatment.Name), stall.StallPaces, dur(stall.MinStall)),
		Columns: []page.Column{
			{Title: "Clients", Unit: "clients"}, {Title: "Repetition"}, latCol("Pace"), {Title: "Stalls"},
			{Title: "Stalled (% of time)", Unit: "%"}, latCol("Longest stall"), {Title: "Requests waited"},
			latCol("p50 measured"), latCol("p50 corrected"), latCol("p99 measured"), latCol("p99 corrected"),
			latCol("p99.9 measured"), latCol("p99.9 corrected"), latCol("max"),
		},
	}
	for _, r := range t.Runs {
		stalls, share, longest, waited := page.Text("not watched"), page.Text("–"), page.Text("–"), page.Text("–")
		if r.Watched {
			stalls = intCell(int64(len(r.Stalls)))
			share = numCell(100*r.Share, 1)
			longest = latCell(r.Longest)
			waited = intCell(int64(r.Waited))
		}
		if r.Understates() {
			share.Mark = "warn"
		}
		p99 := latCell(r.Corrected.P99)
		if r.Understates() {
			p99.Mark = "warn"
		}
		tb.Rows = append(tb.Rows, []page.Cell{
			numCell(r.Run.Level, 0), intCell(int64(r.Run.Repetition)), latCell(r.Pace), stalls, share, longest, waited,
			latCell(r.Measured.P50), latCell(r.Corrected.P50), latCell(r.Measured.P99), p99,
			latCell(r.Measured.P999), latCell(r.Corrected.P999), latCell(r.Measured.Max),
		})
	}
	return page.Block{Table: tb}
}

// stallNotes are what a reader must know about the watch's coverage.
func stallNotes(t stall.Treatment) []string {
	var out []string
	for _, r := range t.Runs {
		if !r.Watched {
			continue
		}
		if r.Unread > 0 {
			out = append(out, fmt.Sprintf("run %d (%s, repetition %d): %s still in a request when the run ended could not be read, so its quiet periods are judged from the other clients",
				r.Run.ID, format.LoadText("closed", r.Run.Level), r.Run.Repetition, format.Plural(r.Unread, "client")))
		}
		if floor := r.Threshold; floor > max(stall.StallPaces*r.Pace, stall.MinStall) {
			out = append(out, fmt.Sprintf("run %d (%s, repetition %d) logged so many quiet periods that only those of at least %s are complete; shorter stalls are not counted",
				r.Run.ID, format.LoadText("closed", r.Run.Level), r.Run.Repetition, dur(floor)))
		}
	}
	return out
}

// latCell prints a latency with its value in µs.
func latCell(d time.Duration) page.Cell {
	u := us(d)
	return page.Number(format.Page.Micros(u), u)
}

func dur(d time.Duration) string { return format.Page.Micros(us(d)) }

// addStallFinding adds the treatment's "closed-loop latency understates"
// finding when a run of it stalled materially (stall.Result.Understates).
func addStallFinding(r *results.Results, treatment string, add func(label, text string)) error {
	ts, err := stall.FromResults(r)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if t.Treatment.Name == treatment && t.Understates() {
			add("Stalls", stallText(t))
		}
	}
	return nil
}
