package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
)

// RunSpec is one run as the coordinator drives it.
type RunSpec struct {
	// Agents name the agents, and Orders their orders, in share order.
	Agents []string
	Orders []Order
	// Interval is the run's interval, Last the index of its last interval
	// (the engine's: (warmup rounded up to intervals + measure - 1) /
	// interval), and Drain how long after the planned end an agent may
	// still be finishing (its request timeout and last interval).
	Interval time.Duration
	Last     int64
	Drain    time.Duration
	// Behind is how long after an interval's end the coordinator waits for
	// an agent's copy before it lets the agent go (its share is then
	// missing from the run from that interval on); 0 = max(2 intervals, 2s).
	Behind time.Duration
	// Prepare bounds how long agents may take to open the target and their
	// clients; 0 = 2 minutes.
	Prepare time.Duration
	// Started, when set, hears the start instant (the coordinator's clock)
	// once the agents have been told it, before any interval: monitors and
	// events follow it.
	Started func(time.Time)
}

// Merged is one interval of the run, merged over the agents that sent it.
type Merged struct {
	Index    int64
	Start    time.Time // the coordinator's clock: the run's start + the interval's offset
	Duration time.Duration
	Phase    string
	Stats    []Stat
	// PerAgent holds each contributing agent's own statistics.
	PerAgent map[string][]Stat
	// Missing names the agents whose share is not in this interval.
	Missing []string
}

// Clock is an agent's clock against the coordinator's, from an NTP-style
// exchange over the control connection: Offset = agent - coordinator,
// within ±RTT/2.
type Clock struct {
	Offset time.Duration `json:"offset_ns"`
	RTT    time.Duration `json:"rtt_ns"`
}

// AgentOutcome is one agent's part of a run.
type AgentOutcome struct {
	Name   string
	Index  int
	Clock  Clock
	Status string // store.AgentCompleted, AgentLost, AgentBehind, AgentFailed
	LostAt time.Time
	Reason string
	Result *ResultMsg // nil unless it sent one
}

// Outcome is a run driven by agents.
type Outcome struct {
	Start  time.Time // the start instant (coordinator's clock)
	Agents []AgentOutcome
}

// Partial says which agents' shares are missing from part of the run, in
// one sentence ("" when every agent completed).
func (o Outcome) Partial() string {
	var parts []string
	for _, a := range o.Agents {
		if a.Status != store.AgentCompleted {
			parts = append(parts, fmt.Sprintf("agent %s %s at +%v (%s)", a.Name, a.Status, a.LostAt.Sub(o.Start).Round(time.Millisecond), a.Reason))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "partial: " + strings.Join(parts, "; ")
}

// clockRounds is how many ping/pong exchanges measure an agent's clock;
// the one with the shortest round trip is kept (NTP's clock filter: the
// fastest exchange has the least queueing, so the least asymmetry).
const clockRounds = 8

// measureClock estimates r's clock offset:
//
//	offset = ((t2 - t1) + (t3 - t4)) / 2,  rtt = (t4 - t1) - (t3 - t2)
//
// with t1, t4 the coordinator's send and receipt and t2, t3 the agent's.
// The error is at most rtt/2 (all of it one way).
func (c *Coordinator) measureClock(ctx context.Context, r *remote, ev *events) (Clock, error) {
	best := Clock{RTT: -1}
	for range clockRounds {
		t1 := time.Now().UnixNano()
		if err := r.send(Msg{Type: msgPing, T1: t1}); err != nil {
			return best, err
		}
		m, err := ev.await(ctx, r, msgPong, 10*time.Second, func(m Msg) bool { return m.T1 == t1 })
		if err != nil {
			return best, err
		}
		t4 := time.Now().UnixNano()
		rtt := time.Duration((t4 - t1) - (m.T3 - m.T2))
		if best.RTT < 0 || rtt < best.RTT {
			best = Clock{Offset: time.Duration(((m.T2 - t1) + (m.T3 - t4)) / 2), RTT: rtt}
		}
	}
	return best, nil
}

// events reads the coordinator's event stream for one run, keeping what
// belongs to other agents for the run loop.
type events struct {
	c       *Coordinator
	run     uint64 // the run's number (Msg.Run)
	pending []event
}

// await returns r's next message of type typ (for which ok holds, when
// given), within timeout. Messages of r of other types are dropped (late
// ones of an earlier run); events of other agents are kept for later. An
// error message of r is returned as a PeerError.
func (ev *events) await(ctx context.Context, r *remote, typ string, timeout time.Duration, ok func(Msg) bool) (Msg, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		var e event
		if i := slices.IndexFunc(ev.pending, func(e event) bool { return e.r == r }); i >= 0 {
			e = ev.pending[i]
			ev.pending = slices.Delete(ev.pending, i, i+1)
		} else {
			select {
			case <-ctx.Done():
				return Msg{}, ctx.Err()
			case <-t.C:
				return Msg{}, fmt.Errorf("load agent %s sent no %s within %v", r.name, typ, timeout)
			case e = <-ev.c.events:
			}
		}
		if e.r != r {
			ev.pending = append(ev.pending, e)
			continue
		}
		switch {
		case e.err != nil:
			r.gone = true
			return Msg{}, fmt.Errorf("load agent %s: the connection ended: %v", r.name, e.err)
		case e.m.Run != ev.run && e.m.Type != msgPong:
			// A late message of an earlier run.
		case e.m.Type == msgError:
			return Msg{}, &PeerError{e.m.Error}
		case e.m.Type == typ && (ok == nil || ok(e.m)):
			return e.m, nil
		}
	}
}

// next returns the next event: a kept one first.
func (ev *events) next() (event, bool) {
	if len(ev.pending) > 0 {
		e := ev.pending[0]
		ev.pending = ev.pending[1:]
		return e, true
	}
	return event{}, false
}

// Run drives one run: it measures each agent's clock, sends the orders,
// waits until all are ready (the barrier), starts them together at an
// instant a little ahead (each in its own clock), and merges their
// intervals as they come, handing each merged interval to sink in order.
// An agent that disconnects, reports an error or falls behind is let go:
// its share is missing from then on and its outcome says so, but the run
// goes on with the others. Cancelling ctx stops the agents' runs; their
// last intervals and results are still collected.
func (c *Coordinator) Run(ctx context.Context, rs RunSpec, sink func(Merged) error) (Outcome, error) {
	n := len(rs.Agents)
	if n == 0 || len(rs.Orders) != n {
		return Outcome{}, fmt.Errorf("a run needs one order per agent (%d agents, %d orders)", n, len(rs.Orders))
	}
	c.mu.Lock()
	c.runs++
	ev := &events{c: c, run: c.runs}
	c.mu.Unlock()
	out := Outcome{Agents: make([]AgentOutcome, n)}
	rem := make([]*remote, n)
	for i, name := range rs.Agents {
		r, err := c.agent(name)
		if err != nil {
			return out, err
		}
		rem[i] = r
		out.Agents[i] = AgentOutcome{Name: name, Index: i, Status: store.AgentCompleted}
	}
	// The barrier: every agent's clock measured and its share ready.
	prepare := rs.Prepare
	if prepare <= 0 {
		prepare = 2 * time.Minute
	}
	var maxRTT time.Duration
	for i, r := range rem {
		clk, err := c.measureClock(ctx, r, ev)
		if err != nil {
			return out, fmt.Errorf("measuring the clock of load agent %s: %w", r.name, err)
		}
		out.Agents[i].Clock = clk
		maxRTT = max(maxRTT, clk.RTT)
		if err := r.send(Msg{Type: msgOrder, Run: ev.run, Order: &rs.Orders[i]}); err != nil {
			return out, fmt.Errorf("sending load agent %s its share: %w", r.name, err)
		}
	}
	for _, r := range rem {
		m, err := ev.await(ctx, r, msgReady, prepare, nil)
		if err != nil {
			return out, fmt.Errorf("load agent %s is not ready: %w", r.name, err)
		}
		if m.Ready == nil {
			return out, fmt.Errorf("load agent %s sent an empty ready message", r.name)
		}
		if err := checkRange(m.Ready.Hist); err != nil {
			return out, fmt.Errorf("load agent %s is refused: %w", r.name, err)
		}
	}
	// The start instant leaves time for the start messages to arrive
	// everywhere: a few round trips, at least 100 ms.
	out.Start = time.Now().Add(max(100*time.Millisecond, 4*maxRTT))
	for i, r := range rem {
		at := out.Start.Add(out.Agents[i].Clock.Offset)
		if err := r.send(Msg{Type: msgStart, StartAt: at.UnixNano()}); err != nil {
			c.let(&out.Agents[i], r, store.AgentLost, time.Now(), fmt.Sprintf("the start could not be sent: %v", err))
		}
	}
	if rs.Started != nil {
		rs.Started(out.Start)
	}
	err := c.collect(ctx, rs, ev, rem, &out, sink)
	live := 0
	for _, a := range out.Agents {
		if a.Status == store.AgentCompleted {
			live++
		}
	}
	if live == 0 && err == nil && ctx.Err() == nil {
		err = fmt.Errorf("every load agent was lost: %s", out.Partial())
	}
	return out, err
}

// let lets agent a go with a status and reason; its later messages are
// ignored.
func (c *Coordinator) let(a *AgentOutcome, r *remote, status string, at time.Time, reason string) {
	if a.Status != store.AgentCompleted {
		return
	}
	a.Status, a.LostAt, a.Reason = status, at, reason
	if status != store.AgentLost {
		_ = r.send(Msg{Type: msgStop})
	}
}

// collect merges the agents' intervals in index order until every agent
// has sent its result or been let go.
func (c *Coordinator) collect(ctx context.Context, rs RunSpec, ev *events, rem []*remote, out *Outcome, sink func(Merged) error) error {
	n := len(rem)
	behind := rs.Behind
	if behind <= 0 {
		behind = max(2*rs.Interval, 2*time.Second)
	}
	got := make([]map[int64]*IntervalMsg, n)
	stats := make([]map[int64][]Stat, n)
	for i := range got {
		got[i], stats[i] = map[int64]*IntervalMsg{}, map[int64][]Stat{}
	}
	indexOf := map[*remote]int{}
	for i, r := range rem {
		indexOf[r] = i
	}
	live := func(i int) bool { return out.Agents[i].Status == store.AgentCompleted }
	finished := func(i int) bool { return out.Agents[i].Result != nil }
	next := int64(0)
	stopped := false
	var sinkErr error
	planEnd := out.Start.Add(time.Duration(rs.Last+1)*rs.Interval + rs.Drain)
	// An agent late with an interval but still sending is slow, not gone:
	// a host starved of CPU sends its copies seconds late, and its share,
	// with its own client-limit verdict, is what the run must report. So
	// a late agent is let go only once it has also been silent for
	// `silent`, and at the latest `lagCap` after the results' deadline.
	silent := max(behind, 5*time.Second)
	lagCap := planEnd.Add(behind + max(30*time.Second, 10*behind))
	heard := make([]time.Time, n)
	for i := range heard {
		heard[i] = time.Now()
	}
	missing := func(i int) bool {
		if !live(i) || finished(i) {
			return false
		}
		_, ok := got[i][next]
		return !ok || next > rs.Last
	}
	for {
		// Hand out every interval all live agents have sent (an agent that
		// has finished sends no more: an interrupted one ends early).
		for sinkErr == nil {
			ready, any := true, false
			for i := range n {
				if !live(i) {
					continue
				}
				if _, ok := got[i][next]; ok {
					any = true
				} else if !finished(i) {
					ready = false
				}
			}
			if !ready || !any {
				break
			}
			m := Merged{Index: next, PerAgent: map[string][]Stat{}}
			var parts [][]Stat
			for i := range n {
				iv, ok := got[i][next]
				if !live(i) || !ok {
					if !live(i) || !finished(i) {
						m.Missing = append(m.Missing, rem[i].name)
					}
					continue
				}
				if m.Start.IsZero() {
					m.Start, m.Duration, m.Phase = out.Start.Add(time.Duration(iv.StartNs)), time.Duration(iv.Duration), iv.Phase
				}
				m.Duration = max(m.Duration, time.Duration(iv.Duration))
				m.PerAgent[rem[i].name] = stats[i][next]
				parts = append(parts, stats[i][next])
				delete(got[i], next)
				delete(stats[i], next)
			}
			merged, err := Merge(parts...)
			if err != nil {
				sinkErr = fmt.Errorf("merging interval %d: %w", next, err)
				break
			}
			m.Stats = merged
			if err := sink(m); err != nil {
				sinkErr = err
				break
			}
			next++
		}
		done := true
		for i := range n {
			if live(i) && !finished(i) {
				done = false
			}
		}
		if done || sinkErr != nil {
			if sinkErr != nil {
				for i, r := range rem {
					c.let(&out.Agents[i], r, store.AgentFailed, time.Now(), "the coordinator stopped the run")
				}
			}
			return sinkErr
		}
		// The deadline of the interval awaited, or of the results. An
		// agent's engine hands out its last interval only once the
		// requests in flight at the end have answered or timed out (the
		// drain), so that one may come as late as the results.
		due := out.Start.Add(time.Duration(next+1)*rs.Interval + behind)
		if next >= rs.Last {
			due = planEnd.Add(behind)
		}
		// letGo is when agent i, missing the interval awaited, is let go.
		letGo := func(i int) time.Time {
			at := due
			if h := heard[i].Add(silent); h.After(at) {
				at = h
			}
			if at.After(lagCap) {
				at = lagCap
			}
			if d := time.Now().Add(behind); stopped && d.Before(at) {
				at = d
			}
			return at
		}
		var deadline time.Time
		for i := range n {
			if missing(i) {
				if at := letGo(i); deadline.IsZero() || at.Before(deadline) {
					deadline = at
				}
			}
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(behind)
		}
		e, ok := ev.next()
		if !ok {
			t := time.NewTimer(time.Until(deadline))
			select {
			case e = <-c.events:
				t.Stop()
			case <-t.C:
				now := time.Now()
				for i := range n {
					if missing(i) && !now.Before(letGo(i)) {
						c.let(&out.Agents[i], rem[i], store.AgentBehind, now, fmt.Sprintf("it had not sent interval %d %v after its end, nor anything for %v", next, now.Sub(due.Add(-behind)).Round(time.Millisecond), now.Sub(heard[i]).Round(time.Millisecond)))
					}
				}
				continue
			case <-ctx.Done():
				t.Stop()
				if !stopped {
					stopped = true
					for i, r := range rem {
						if live(i) {
							_ = r.send(Msg{Type: msgStop})
						}
					}
				}
				ctx = context.Background() // collect what the stopped agents send
				continue
			}
		}
		i, mine := indexOf[e.r]
		if !mine || !live(i) {
			if e.err != nil {
				e.r.gone = true
			}
			continue
		}
		if e.err == nil && e.m.Run == ev.run {
			heard[i] = time.Now()
		}
		switch {
		case e.err != nil:
			e.r.gone = true
			c.let(&out.Agents[i], e.r, store.AgentLost, e.at, fmt.Sprintf("its connection ended: %v", e.err))
		case e.m.Run != ev.run:
			// A late message of an earlier run.
		case e.m.Type == msgError:
			c.let(&out.Agents[i], e.r, store.AgentFailed, e.at, e.m.Error)
		case e.m.Type == msgInterval && e.m.Interval != nil:
			iv := e.m.Interval
			if iv.Index < next {
				continue // a copy of an interval already handed out
			}
			st, err := DecodeStats(iv.Stats)
			if err != nil {
				c.let(&out.Agents[i], e.r, store.AgentFailed, e.at, fmt.Sprintf("interval %d: %v", iv.Index, err))
				continue
			}
			got[i][iv.Index], stats[i][iv.Index] = iv, st
		case e.m.Type == msgResult && e.m.Result != nil:
			out.Agents[i].Result = e.m.Result
		}
	}
}
