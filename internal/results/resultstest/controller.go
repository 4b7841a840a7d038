package resultstest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/controller/runlog"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// ControllerHost is a lab host of a designed controller campaign: its
// instance price per hour and one volume's monthly price.
type ControllerHost struct {
	Name          string
	Price         float64
	VolumeMonthly float64
}

// ControllerOp is what one operation did in one measured second: Fast
// requests answered in the campaign's Fast time, Slow in its Slow time,
// and Errors and Dropped requests.
type ControllerOp struct {
	Op                          string
	Fast, Slow, Errors, Dropped int64
}

// ControllerChange is a tier node added or removed during a run, its
// times offsets from the measured phase's start. An added host is priced
// from Requested (when the campaign records the new host), a removed one
// costs nothing from Done (when it records the release); Done 0 = never
// done.
type ControllerChange struct {
	Action          string // results.ActionAddNode or ActionRemoveNode
	Host            string
	Price           float64 // an added host's price per hour
	Requested, Done time.Duration
	Error           string
}

// ControllerDecision is one recorded decision, At an offset from the
// measured phase's start (the entry's own At is replaced).
type ControllerDecision struct {
	At    time.Duration
	Entry runlog.Entry
}

// ControllerRun is one run: its seconds (each a list of operations), its
// node changes and its decisions.
type ControllerRun struct {
	Seconds   [][]ControllerOp
	Changes   []ControllerChange
	Decisions []ControllerDecision
}

// ControllerTreatment is a treatment with its own lab (Hosts, brought up
// as the treatment starts) and its controller's setup (Setup nil: a run
// without a controller). Every run is one repetition.
type ControllerTreatment struct {
	Name  string
	Hosts []ControllerHost
	Setup *runlog.Setup
	Plan  results.Plan
	Runs  []ControllerRun
}

// ControllerCampaign writes a campaign of controller runs as the campaign
// runner records them: per treatment its facts, its lab coming up (a lab
// event at T, each host's limits from T+1 s), then its runs, each
// starting 10 s after the previous one ended, with a 2 s warmup before
// the measured phase. It returns the store and each run's measured-phase
// start, in run order.
func ControllerCampaign(t testing.TB, lab string, fast, slow time.Duration, ts []ControllerTreatment) (*store.Store, []time.Time) {
	t.Helper()
	now := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	st := Create(t, "", store.Campaign{Name: "controllers", SpecFile: "controllers.yaml", Seed: 1, ToolVersion: "test", CreatedAt: now})
	must := Must(t)
	var starts []time.Time
	slot := 0
	for ti, ct := range ts {
		tr := results.Treatment{Name: ct.Name, Index: ti,
			Load:     results.Load{Model: "open", Arrival: "steps", Levels: []float64{100}, Repetitions: len(ct.Runs), Warmup: 2 * time.Second, Interval: time.Second},
			Target:   results.Target{Type: "apptier", Managed: true},
			Analysis: results.Analysis{Plan: ct.Plan}, Lab: &results.LabFacts{Name: lab}}
		var hosts []map[string]any
		var rows []store.HostLimitRow
		for _, h := range ct.Hosts {
			tr.Lab.Hosts = append(tr.Lab.Hosts, h.Name)
			hl := hostLimits(h.Name, lab, h.Price, h.VolumeMonthly, now.Add(time.Second), "up")
			hosts = append(hosts, map[string]any{"name": h.Name, "type": "small", "vcpus": 1, "price_per_hour": h.Price, "volumes": hl.Volumes})
			row, err := hl.Row()
			must(err)
			rows = append(rows, row)
		}
		row, err := tr.Row()
		must(err)
		must(st.PutTreatment(row))
		detail, _ := json.Marshal(map[string]any{"name": lab, "hosts": hosts})
		must(st.AddEvent(store.Event{Time: now, Kind: results.EventLab, Detail: string(detail)}))
		must(st.AddHostLimits(rows))
		now = now.Add(10 * time.Second)
		for ri, cr := range ct.Runs {
			slot++
			id, err := st.StartRun(store.Run{Seq: slot, Slot: slot, Treatment: ct.Name, Model: "open", Level: 100, Repetition: ri + 1, Start: now})
			must(err)
			m := now.Add(2 * time.Second)
			starts = append(starts, m)
			at := func(d time.Duration) time.Time { return m.Add(d) }
			if ct.Setup != nil {
				must(st.AddEvent(store.Event{RunID: id, Time: m, Kind: runlog.SetupKind, Detail: ct.Setup.Encode()}))
			}
			var ivs []store.Interval
			var sent, answered int64
			for s, ops := range cr.Seconds {
				for _, o := range ops {
					h := store.NewHistogram()
					must(h.RecordValues(fast.Microseconds(), o.Fast))
					must(h.RecordValues(slow.Microseconds(), o.Slow))
					ivs = append(ivs, store.Interval{RunID: id, Phase: "measure", Op: o.Op, Start: at(time.Duration(s) * time.Second),
						Duration: time.Second, Count: o.Fast + o.Slow, Errors: o.Errors, Dropped: o.Dropped, Hist: h})
					sent += o.Fast + o.Slow + o.Errors
					answered += o.Fast + o.Slow
				}
			}
			must(st.AddIntervals(ivs))
			for _, c := range cr.Changes {
				ch := results.NodeChange{Action: c.Action, Node: c.Host, Host: c.Host, Requested: at(c.Requested), BytesStreamed: -1, Error: c.Error}
				if c.Done > 0 {
					ch.Done = at(c.Done)
				}
				switch {
				case c.Action == results.ActionAddNode:
					r, err := hostLimits(c.Host, lab, c.Price, 0, at(c.Requested), c.Action).Row()
					must(err)
					must(st.AddHostLimits([]store.HostLimitRow{r}))
				case c.Action == results.ActionRemoveNode && c.Done > 0:
					gone := hostLimits(c.Host, lab, 0, 0, at(c.Done), c.Action)
					gone.Stopped, gone.LinkDown = true, true
					r, err := gone.Row()
					must(err)
					must(st.AddHostLimits([]store.HostLimitRow{r}))
				}
				b, _ := json.Marshal(ch)
				evAt := ch.Done
				if evAt.IsZero() {
					evAt = ch.Requested
				}
				must(st.AddEvent(store.Event{RunID: id, Time: evAt, Kind: results.EventNodeChange, Detail: string(b)}))
			}
			for _, d := range cr.Decisions {
				e := d.Entry
				e.At = at(d.At)
				must(st.AddEvent(store.Event{RunID: id, Time: e.At, Kind: runlog.EventKind, Detail: e.Encode()}))
			}
			end := at(time.Duration(len(cr.Seconds)) * time.Second)
			secs := float64(len(cr.Seconds))
			must(st.FinishRun(id, store.StatusCompleted, "", end, store.RunSummary{Sent: sent, Completed: answered, MeasureStart: m, MeasureEnd: end,
				MeasureSecs: secs, Throughput: float64(answered) / secs, ClientCPU: 10}))
			now = end.Add(10 * time.Second)
		}
	}
	return st, starts
}

func hostLimits(name, lab string, price, volumeMonthly float64, from time.Time, cause string) results.HostLimits {
	hl := results.HostLimits{Host: name, From: from, Lab: lab, Type: "small", VCPUs: 1, PricePerHour: price, Cause: cause}
	if volumeMonthly > 0 {
		hl.Volumes = []results.VolumeLimit{{Name: "data", Type: "gp", SizeGiB: 10, IOPS: 3000, MonthlyPrice: volumeMonthly}}
	}
	return hl
}
