// Package answer is the report's answer card: the operator's questions
// answered in a few lines before any evidence. Build reads the results
// model, runs the analyses' drivers (capacity, bottleneck, pressure,
// stall) and returns plain data: each line's text and the ID of the
// report section that holds its evidence. Rendering is internal/report/page's
// (report.html) and internal/report's (the terminal); the explorer reuses
// the same Card.
package answer

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	ab "github.com/headroom-dev/headroom/internal/analysis/bottleneck"
	"github.com/headroom-dev/headroom/internal/analysis/capacity"
	"github.com/headroom-dev/headroom/internal/analysis/levels"
	assess "github.com/headroom-dev/headroom/internal/analysis/pressure"
	"github.com/headroom-dev/headroom/internal/analysis/slp"
	"github.com/headroom-dev/headroom/internal/analysis/stall"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/results"
)

// Topics of the card's lines, in the order the card shows them.
const (
	Capacity       = "Capacity"
	Bottleneck     = "Bottleneck"
	Pressure       = "Pressure"
	Recommendation = "Recommendation"
	Plan           = "Plan"
	// Findings that need attention.
	SLOMissed   = "SLO"
	ClientLimit = "Client limit"
	Stalls      = "Stalls"
	LostWrites  = "Lost writes"
	FailedRuns  = "Failed runs"
)

// Evidence section IDs: the sections of the report that hold each line's
// evidence (the IDs their builders give them: rigor.CapacitySections,
// bottleneck.ReportSections, pressure.ReportSections, rigor.StallSections
// and page.Build). A renderer drops a link whose section the report lacks.
const (
	CapacitySection        = "capacity"
	BottleneckSection      = "bottlenecks" // + "-" + format.ID(treatment) for a named treatment
	PressureSection        = "slp"
	RecommendationsSection = "slp-recommendations"
	StallSection           = "stalls"
	EventsSection          = "events"
	FailuresSection        = "failures" // report/failures.SectionID
	RunsSection            = "runs"
)

// eventWriteCheck is the store event kind of a write check after a
// cluster change (internal/campaign/writecheck.go); its detail is JSON
// with "checked" and "lost" counts.
const eventWriteCheck = "write_check"

// Line is one answer or one finding.
type Line struct {
	Topic     string `json:"topic"`
	Treatment string `json:"treatment,omitempty"` // "" for the campaign as a whole
	Text      string `json:"text"`                // one or two plain sentences, no trailing full stop
	Evidence  string `json:"evidence,omitempty"`  // ID of the report section with the evidence
}

// Card is a campaign's answers: Answers in topic order (capacity,
// bottleneck, pressure, recommendation, plan; per treatment in campaign
// order), then Attention: what a reader must not miss (a client that
// limited the load, closed-loop stalls, lost writes, failed runs), drawn
// in red.
type Card struct {
	Answers   []Line `json:"answers"`
	Attention []Line `json:"attention,omitempty"`
	// Saturated are the resources the bottleneck analysis found to be a
	// bottleneck in at least one run, per treatment, most often saturated
	// first ("db1/volume:data#iops"); the report charts them over time.
	Saturated map[string][]string `json:"saturated,omitempty"`
	// SLOLevels counts the levels judged against an SLO, over every
	// treatment, and SLOFailed those that failed it.
	SLOLevels int `json:"slo_levels,omitempty"`
	SLOFailed int `json:"slo_failed,omitempty"`
}

// Shown is a line of the card in the order it is shown, with whether it
// is drawn as a finding that needs attention.
type Shown struct {
	Line
	Alert bool
}

// Lines are the card's lines in the order every renderer shows them:
// lost writes first (a result that lost acknowledged data is the first
// thing a reader must see, docs/failures.md), then the answers, then the
// other findings that need attention.
func (c Card) Lines() []Shown {
	var out []Shown
	for _, l := range c.Attention {
		if l.Topic == LostWrites {
			out = append(out, Shown{l, true})
		}
	}
	for _, l := range c.Answers {
		out = append(out, Shown{l, false})
	}
	for _, l := range c.Attention {
		if l.Topic != LostWrites {
			out = append(out, Shown{l, true})
		}
	}
	return out
}

// Summary is the one sentence every renderer puts above the card: how
// many findings need attention, or that none does, and how many levels
// failed their SLO. It never says nothing needs attention while a write
// was lost or a level failed its SLO.
func (c Card) Summary() string {
	switch {
	case len(c.Answers) == 0 && len(c.Attention) == 0:
		return "The results hold nothing the analyses can answer yet: no completed run, and no pressure, bottleneck or plan to report."
	case len(c.Attention) == 1:
		return "1 finding in red needs attention before the numbers are trusted or acted on."
	case len(c.Attention) > 1:
		return fmt.Sprintf("%d findings in red need attention before the numbers are trusted or acted on.", len(c.Attention))
	}
	s := "Nothing was found that makes these numbers untrustworthy (no client limit, stall, lost write or failed run)."
	if c.SLOFailed > 0 {
		s += fmt.Sprintf(" The SLO failed at %d of %s measured; the capacity line says where.", c.SLOFailed, format.Plural(c.SLOLevels, "level"))
	}
	return s
}

// PlanLines, when set, gives the card's plan lines (the configuration to
// run at each load, from the planning analysis). It is the hook by which
// internal/report/plan joins the card once it exists; nil = no plan line.
var PlanLines func(r *results.Results) ([]Line, error)

// Build answers the campaign in r. An analysis that cannot run on these
// results gives no line (its section says why); the error is a failure to
// read the results.
//
// The card is built once per Results (results.Memo) and the same value is
// rendered by the terminal, report.html and report.json, so they cannot
// differ; callers must not change it.
func Build(r *results.Results) (Card, error) {
	v, err := r.Memo("answer.Build", func() (any, error) { return build(r) })
	if err != nil {
		return Card{}, err
	}
	return v.(Card), nil
}

func build(r *results.Results) (Card, error) {
	var c Card
	cc, err := capacity.FromResults(r, capacity.Config{})
	if err != nil {
		return c, err
	}
	for _, tc := range cc.Curves {
		c.Answers = append(c.Answers, Line{Topic: Capacity, Treatment: tc.Treatment.Name, Text: capacityText(tc), Evidence: CapacitySection})
	}
	if len(r.Runs()) > 0 {
		a, err := ab.FromResults(r)
		if err != nil {
			return c, err
		}
		for _, t := range a.Treatments {
			if l, ok := bottleneckLine(t); ok {
				c.Answers = append(c.Answers, l)
			}
			if len(t.Resources) > 0 {
				if c.Saturated == nil {
					c.Saturated = map[string][]string{}
				}
				c.Saturated[t.Name] = t.Resources
			}
		}
	}
	// A failing assessment is the pressure section's to explain.
	if a, err := assess.FromResults(r, assess.Options{}); err == nil {
		c.Answers = append(c.Answers, pressureLines(a)...)
	}
	if PlanLines != nil {
		ls, err := PlanLines(r)
		if err != nil {
			return c, err
		}
		c.Answers = append(c.Answers, ls...)
	}
	for _, tc := range cc.Curves {
		judged, failed := sloCounts(tc.Curve)
		c.SLOLevels += judged
		c.SLOFailed += failed
		if judged > 0 && failed == judged {
			lowest := format.LoadText(tc.Curve.Model, tc.Curve.Points[0].Level.Level)
			text := fmt.Sprintf("no level met the SLO %s, not even the lowest (%s): the target met it at no load measured", sloText(tc.Input.SLO), lowest)
			if judged == 1 {
				text = fmt.Sprintf("the SLO %s was not met (at %s)", sloText(tc.Input.SLO), lowest)
			}
			c.Attention = append(c.Attention, Line{Topic: SLOMissed, Treatment: tc.Treatment.Name, Evidence: CapacitySection, Text: text})
		}
		if s := clientText(tc); s != "" {
			c.Attention = append(c.Attention, Line{Topic: ClientLimit, Treatment: tc.Treatment.Name, Text: s, Evidence: CapacitySection})
		}
	}
	sts, err := stall.FromResults(r)
	if err != nil {
		return c, err
	}
	for _, t := range sts {
		if t.Understates() {
			w := t.Worst()
			c.Attention = append(c.Attention, Line{Topic: Stalls, Treatment: t.Treatment.Name, Evidence: StallSection,
				Text: fmt.Sprintf("the closed loop stalled: at %s no request completed for %s of the measured time, so its percentiles understate latency; measure with an open loop",
					format.LoadText("closed", w.Run.Level), format.Page.Percent(100*w.Share, 1))})
		}
	}
	lost, err := lostWrites(r)
	if err != nil {
		return c, err
	}
	c.Attention = append(c.Attention, lost...)
	if l, ok := failedRuns(r); ok {
		c.Attention = append(c.Attention, l)
	}
	return c, nil
}

// capacityText is the curve's capacity figure (capacity.Curve's
// MaxThroughput) with the t interval of its level's throughput.
func capacityText(tc capacity.TreatmentCurve) string {
	cv := tc.Curve
	if cv.MaxIndex < 0 {
		return cv.NoCapacity
	}
	p := cv.Points[cv.MaxIndex]
	s := format.Num(cv.MaxThroughput) + " ok/s"
	switch {
	case !math.IsNaN(p.ThroughputCI):
		s += fmt.Sprintf(" ± %s (%s%% confidence, %s)", format.Num(p.ThroughputCI), format.Num(100*capacity.DefaultConfidence), format.Plural(p.Reps, "repetition"))
	default:
		s += " (1 repetition, so no interval)"
	}
	s += " at " + format.LoadText(cv.Model, p.Level.Level)
	if o := tc.Input.SLO; o != nil {
		s += fmt.Sprintf(", the highest throughput that meets the SLO p%s ≤ %v", format.Num(o.Percentile), o.Threshold)
		if cv.FirstFail >= 0 {
			s += "; it first fails at " + format.LoadText(cv.Model, cv.Points[cv.FirstFail].Level.Level)
		} else {
			s += " (met at every level measured, so capacity may be higher)"
		}
	} else {
		s += ", the highest throughput the client did not limit (no SLO was set)"
	}
	return s
}

// sloCounts counts a curve's levels judged against an SLO and those that
// failed it.
func sloCounts(cv capacity.Curve) (judged, failed int) {
	for _, p := range cv.Points {
		if p.Level.SLO == nil {
			continue
		}
		judged++
		if !p.Level.SLO.Pass {
			failed++
		}
	}
	return judged, failed
}

// sloText is "p90 ≤ 1s" (with the operation when the SLO names one).
func sloText(o *levels.SLO) string {
	if o == nil {
		return ""
	}
	s := fmt.Sprintf("p%s ≤ %v", format.Num(o.Percentile), o.Threshold)
	if o.Op != "" {
		s += " of " + o.Op + " requests"
	}
	return s
}

// clientText names the levels the client limited; "" when none.
func clientText(tc capacity.TreatmentCurve) string {
	var ls []string
	for _, i := range tc.Curve.ClientLimited {
		ls = append(ls, format.LoadText(tc.Curve.Model, tc.Curve.Points[i].Level.Level))
	}
	if len(ls) == 0 {
		return ""
	}
	return "the load generator itself was the limit at " + strings.Join(ls, ", ") + ": those levels measure the client, not the target, and are left out of the capacity"
}

// bottleneckLine is the primary bottleneck at a treatment's highest
// throughput.
func bottleneckLine(t *ab.Treatment) (Line, bool) {
	if math.IsNaN(t.MaxThroughput) || t.MaxLabel == "" {
		return Line{}, false
	}
	ev := BottleneckSection
	if t.Name != "" {
		ev += "-" + format.ID(t.Name)
	}
	text := fmt.Sprintf("%s at the highest throughput (%s ok/s at level %s)", t.MaxLabel, format.Num(t.MaxThroughput), format.Num(t.MaxLevel))
	if t.MaxLabel == "none" {
		text = fmt.Sprintf("no resource was saturated at the highest throughput (%s ok/s at level %s): the limit is elsewhere (locks, the client, the network path)",
			format.Num(t.MaxThroughput), format.Num(t.MaxLevel))
	}
	return Line{Topic: Bottleneck, Treatment: t.Name, Text: text, Evidence: ev}, true
}

// pressureLines are the pressure verdict of each assessed treatment and
// the change each persistent pressure asks for.
func pressureLines(a *assess.Assessment) []Line {
	var out []Line
	for _, t := range a.Treatments {
		if len(t.Subjects) == 0 {
			continue
		}
		var pressed []string
		var recs []Line
		for _, f := range t.Findings {
			switch f.Class {
			case slp.ProvisionMore, slp.TransientSaturation:
				pressed = append(pressed, strings.TrimSuffix(f.Message, "."))
				if f.Action != "" {
					recs = append(recs, Line{Topic: Recommendation, Treatment: t.Name, Text: f.Action, Evidence: RecommendationsSection})
				}
			}
		}
		text := strings.Join(pressed, "; ")
		if len(pressed) == 0 {
			text = fmt.Sprintf("no service was under persistent or transient pressure (%s assessed)", format.Plural(len(t.Subjects), "series"))
		}
		out = append(out, Line{Topic: Pressure, Treatment: t.Name, Text: text, Evidence: PressureSection})
		out = append(out, recs...)
	}
	return out
}

// lostWrites reports every write check that found acknowledged records
// missing.
func lostWrites(r *results.Results) ([]Line, error) {
	evs, err := r.Events(-1)
	if err != nil {
		return nil, err
	}
	treatment := map[int64]string{}
	for _, run := range r.Runs() {
		treatment[run.ID] = run.Treatment
	}
	var out []Line
	for _, e := range evs {
		if e.Kind != eventWriteCheck {
			continue
		}
		var d struct {
			Checked, Lost int64
			Trigger       string
		}
		if json.Unmarshal([]byte(e.Detail), &d) != nil || d.Lost <= 0 {
			continue
		}
		after := "its cluster change" // stores written before the check ran after faults
		if d.Trigger == "fault" || d.Trigger == "spec" {
			after = "its faults were healed"
		}
		out = append(out, Line{Topic: LostWrites, Treatment: treatment[e.RunID], Evidence: FailuresSection,
			Text: fmt.Sprintf("run %d lost %d of %d acknowledged records: after %s they could not be read back", e.RunID, d.Lost, d.Checked, after)})
	}
	return out, nil
}

// failedRuns counts the runs that failed or were interrupted and whose
// slot has no completed run (a resumed slot that completed later is fine).
func failedRuns(r *results.Results) (Line, bool) {
	type slot struct {
		t string
		s int
	}
	done := map[slot]bool{}
	for _, run := range r.Runs() {
		if run.Status == results.StatusCompleted {
			done[slot{run.Treatment, run.Slot}] = true
		}
	}
	n, first := 0, ""
	for _, run := range r.Runs() {
		if run.Status == results.StatusCompleted || run.Status == results.StatusRunning || done[slot{run.Treatment, run.Slot}] {
			continue
		}
		n++
		if first == "" {
			first = fmt.Sprintf("run %d (%s): %s", run.ID, run.Status, format.Truncate(run.Message, 160))
		}
	}
	if n == 0 {
		return Line{}, false
	}
	return Line{Topic: FailedRuns, Evidence: RunsSection,
		Text: fmt.Sprintf("%s did not complete and left a planned slot unmeasured, first %s", format.Plural(n, "run"), strings.TrimSuffix(first, ": "))}, true
}
