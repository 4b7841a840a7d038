package campaign

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/agent"
	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/probe"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/target"
)

// fleetWindows runs the probe's windows with load agents (seed 004's
// multi-client probe): each window's rate is dealt out among the agents
// (rate/N each, Poisson, so the sum is the window's Poisson process), and
// the probe judges the merged seconds, exactly as it judges one process's.
type fleetWindows struct {
	f          *fleet
	s          *spec.Spec
	treatment  string
	address    string
	user       string
	password   string
	seed       uint64
	windows    uint64
	nextInsert uint64
}

func newFleetWindows(f *fleet, s *spec.Spec, treatment string, tgt target.Target, seed, nextInsert uint64) *fleetWindows {
	w := &fleetWindows{f: f, s: s, treatment: treatment, seed: seed, nextInsert: nextInsert}
	w.address, w.user, w.password = agentTarget(tgt)
	return w
}

// RunWindow implements probe.WindowRunner.
func (w *fleetWindows) RunWindow(ctx context.Context, rate float64, dur time.Duration) (probe.WindowResult, error) {
	n := int(dur / time.Second)
	if n < 1 || dur%time.Second != 0 {
		return probe.WindowResult{}, fmt.Errorf("window: %v must be a whole number of seconds, at least 1s", dur)
	}
	names := w.f.names
	shares, err := agent.Split("open", rate, w.s.Load.MaxInFlight, w.seed+w.windows, w.nextInsert, len(names))
	if err != nil {
		return probe.WindowResult{}, fmt.Errorf("window at %g req/s: %w", rate, err)
	}
	w.windows++
	w.nextInsert = agent.NextInsert(w.nextInsert, len(names))
	rs := agent.RunSpec{Agents: names, Interval: time.Second, Last: int64(n - 1), Drain: w.s.Load.Timeout.Duration + 2*time.Second}
	for i := range names {
		rs.Orders = append(rs.Orders, agent.Order{Spec: string(w.s.Source), SpecFile: w.s.File, Treatment: w.treatment, Address: w.address, User: w.user, Password: w.password,
			Level: rate, Share: shares[i], Phases: &agent.Phases{Measure: int64(dur), Interval: int64(time.Second)}})
	}
	out := probe.WindowResult{Seconds: make([]probe.SecondResult, n)}
	for i := range out.Seconds {
		out.Seconds[i].Hist = load.NewHistogram()
	}
	var sent int64
	sink := func(m agent.Merged) error {
		// As with one process (probe.EngineRunner): what the agents drained
		// after the window counts in its last second.
		s := &out.Seconds[min(int(m.Index), n-1)]
		for _, o := range m.Stats {
			s.Completed += o.Count
			s.Errors += o.Errors
			s.Late += o.Late
			s.Dropped += o.Dropped
			sent += o.Count + o.Errors
			if dropped := s.Hist.Merge(o.Hist); dropped != 0 {
				return fmt.Errorf("second %d: merging dropped %d latency values", m.Index, dropped)
			}
			for k, c := range o.ErrorKinds {
				if out.ErrorKinds == nil {
					out.ErrorKinds = map[string]int64{}
				}
				out.ErrorKinds[k] += c
			}
		}
		return nil
	}
	o, err := w.f.coord.Run(ctx, rs, sink)
	out.Start, out.Interrupted = o.Start, ctx.Err() != nil
	out.Offered = float64(sent) / dur.Seconds()
	var notes []string
	for _, a := range o.Agents {
		r := a.Result
		if r == nil {
			continue
		}
		out.Achieved += r.Throughput
		// As EngineRunner: the client is the limit only when an agent's
		// CPU was saturated.
		if r.ClientLimited && (r.CPUSaturated || r.ClientCPU >= 90*float64(r.Cores)) {
			out.ClientLimited = true
		}
		if r.Note != "" {
			notes = append(notes, "agent "+a.Name+": "+r.Note)
		}
	}
	if p := o.Partial(); p != "" {
		notes = append(notes, p)
	}
	out.Note = strings.Join(notes, "; ")
	if err != nil && !out.Interrupted {
		return out, err
	}
	return out, nil
}
