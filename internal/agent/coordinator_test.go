package agent

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
)

// tickRunner is a Runner whose share records known latencies: in interval
// k agent i records k*100+j+i*7 µs for j < 50*(i+1), so that the test
// knows every value. It keeps the schedule of a real run (one interval per
// interval's length from the start instant).
type tickRunner struct {
	index    int
	interval time.Duration
	last     int64
	drain    time.Duration // how much later than its end the last interval is sent (the engine's drain)
	lag      time.Duration // interval k is sent (k+1) x lag late (a host starved of CPU)
	hangFrom int64         // > 0: from this interval on nothing more is sent (a frozen host)
	mu       sync.Mutex
	sent     []int64 // indexes sent
	start    time.Time
}

func (r *tickRunner) Prepare(ctx context.Context, o Order) (Prepared, error) {
	r.index = o.Share.Index
	return r, nil
}
func (r *tickRunner) Hist() HistRange { return Geometry() }
func (r *tickRunner) Close() error    { return nil }

// lastDelay is the drain before interval k is sent: only the last waits.
func (r *tickRunner) lastDelay(k int64) time.Duration {
	if k == r.last {
		return r.drain
	}
	return 0
}

func values(agent int, k int64) []int64 {
	var out []int64
	for j := range 50 * (agent + 1) {
		out = append(out, k*100+int64(j)+int64(agent)*7+1)
	}
	return out
}

func (r *tickRunner) Run(ctx context.Context, start time.Time, send func(IntervalMsg) error) (ResultMsg, error) {
	r.mu.Lock()
	r.start = start
	r.mu.Unlock()
	var done int64
	for k := int64(0); k <= r.last; k++ {
		select {
		case <-ctx.Done():
			return ResultMsg{Interrupted: true}, nil
		case <-time.After(time.Until(start.Add(time.Duration(k+1)*r.interval + r.lastDelay(k) + time.Duration(k+1)*r.lag))):
		}
		if r.hangFrom > 0 && k >= r.hangFrom {
			<-ctx.Done()
			return ResultMsg{Interrupted: true}, nil
		}
		h := store.NewHistogram()
		for _, v := range values(r.index, k) {
			_ = h.RecordValue(v)
		}
		st, err := EncodeStat(Stat{Phase: "measure", Op: "read", Count: h.TotalCount(), Hist: h})
		if err != nil {
			return ResultMsg{}, err
		}
		if err := send(IntervalMsg{Index: k, StartNs: int64(k) * int64(r.interval), Duration: int64(r.interval), Phase: "measure", Stats: []OpStat{st}}); err != nil {
			return ResultMsg{}, err
		}
		done += h.TotalCount()
		r.mu.Lock()
		r.sent = append(r.sent, k)
		r.mu.Unlock()
	}
	return ResultMsg{Measured: Totals{Completed: done}, Throughput: float64(done)}, nil
}

func TestCoordinatorMergesAndMarksALostAgent(t *testing.T) {
	c, err := Listen("127.0.0.1:0", testToken)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const iv = 150 * time.Millisecond
	const last = 5
	runners := []*tickRunner{{interval: iv, last: last}, {interval: iv, last: last}}
	ctxB, killB := context.WithCancel(context.Background())
	defer killB()
	doneA := dial(t, context.Background(), c, "a", testToken, runners[0])
	dial(t, ctxB, c, "b", testToken, runners[1])
	if err := c.Wait(context.Background(), []string{"a", "b"}, 5*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	orders := []Order{{Share: Share{Index: 0, Of: 2}}, {Share: Share{Index: 1, Of: 2}}}
	rs := RunSpec{Agents: []string{"a", "b"}, Orders: orders, Interval: iv, Last: last, Drain: iv, Behind: 600 * time.Millisecond}

	var merged []Merged
	out, err := c.Run(context.Background(), rs, func(m Merged) error {
		merged = append(merged, m)
		if m.Index == 1 {
			killB() // agent b dies after its second interval
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(merged) != last+1 {
		t.Fatalf("%d merged intervals, want %d", len(merged), last+1)
	}
	for _, m := range merged {
		// Expected: a's values always; b's while it lived.
		all := store.NewHistogram()
		var want int64
		for i := range 2 {
			if _, ok := m.PerAgent[[]string{"a", "b"}[i]]; !ok {
				continue
			}
			for _, v := range values(i, m.Index) {
				_ = all.RecordValue(v)
				want++
			}
		}
		if m.Index <= 1 && len(m.PerAgent) != 2 {
			t.Errorf("interval %d merged %d agents before b died", m.Index, len(m.PerAgent))
		}
		if m.Index >= 3 && (len(m.PerAgent) != 1 || len(m.Missing) != 1 || m.Missing[0] != "b") {
			t.Errorf("interval %d: agents %v, missing %v; b was killed after interval 1", m.Index, len(m.PerAgent), m.Missing)
		}
		s := m.Stats[0]
		if s.Count != want || s.Hist.TotalCount() != want || !s.Hist.Equals(all) {
			t.Errorf("interval %d: merged count %d, histogram %d, want %d and the histogram of all values", m.Index, s.Count, s.Hist.TotalCount(), want)
		}
		// a's own data is intact, whatever happened to b.
		a := m.PerAgent["a"][0]
		if a.Count != 50 || a.Hist.ValueAtQuantile(100) != int64(m.Index*100+50) {
			t.Errorf("interval %d: agent a count %d max %d", m.Index, a.Count, a.Hist.ValueAtQuantile(100))
		}
		if want := out.Start.Add(time.Duration(m.Index) * iv); !m.Start.Equal(want) {
			t.Errorf("interval %d starts at %v, want the start instant + %d intervals", m.Index, m.Start, m.Index)
		}
	}
	a, b := out.Agents[0], out.Agents[1]
	if a.Status != store.AgentCompleted || a.Result == nil || a.Result.Measured.Completed != 50*(last+1) {
		t.Errorf("agent a: %+v", a)
	}
	if b.Status != store.AgentLost || b.LostAt.IsZero() || b.LostAt.Before(out.Start) {
		t.Errorf("agent b: %+v; want lost after the start", b)
	}
	if p := out.Partial(); !strings.Contains(p, "agent b lost at +") {
		t.Errorf("partial: %q", p)
	}
	// The clock offsets of two processes on one machine are tiny; the
	// exchange measured them within its round trip.
	for _, ag := range out.Agents {
		if ag.Clock.RTT <= 0 || ag.Clock.Offset > ag.Clock.RTT || -ag.Clock.Offset > ag.Clock.RTT {
			t.Errorf("agent %s clock %+v", ag.Name, ag.Clock)
		}
	}
	// Both started at the ordered instant, in their clock.
	runners[0].mu.Lock()
	if d := runners[0].start.Sub(out.Start); d > a.Clock.RTT || -d > a.Clock.RTT {
		t.Errorf("agent a was told to start %v away from the run's start", d)
	}
	runners[0].mu.Unlock()
	c.Close()
	if err := <-doneA; err != nil {
		t.Errorf("agent a after bye: %v", err)
	}
}

// An agent's engine hands out its last interval only after the requests in
// flight at the end have answered or timed out (the drain), which can be
// longer than Behind: the coordinator must wait for it as long as for the
// results (RunSpec.Drain), not let the agent go as behind. A starved
// Cassandra ring answering for seconds after the end lost its one agent
// this way (2026-12-01).
func TestCoordinatorWaitsOutTheLastIntervalsDrain(t *testing.T) {
	const iv = 100 * time.Millisecond
	const last = 3
	r := &tickRunner{interval: iv, last: last, drain: 800 * time.Millisecond}
	out, merged := runTickAgents(t, map[string]*tickRunner{"a": r},
		RunSpec{Interval: iv, Last: last, Drain: 2 * time.Second, Behind: 200 * time.Millisecond})
	if a := out.Agents[0]; a.Status != store.AgentCompleted || a.Result == nil {
		t.Fatalf("agent a: status %v, result %v; its last interval came within the drain", a.Status, a.Result)
	}
	if len(merged) != last+1 || len(merged[last].PerAgent) != 1 {
		t.Fatalf("%d merged intervals (the last with %d agents), want %d with a's", len(merged), len(merged[len(merged)-1].PerAgent), last+1)
	}
	if p := out.Partial(); p != "" {
		t.Errorf("partial: %q", p)
	}
}

// A host starved of CPU sends its intervals later and later, but keeps
// sending: its agent is slow, not gone, and its share (with its own
// client-limit verdict) is the measurement, so the coordinator waits for
// it. A CPU-starved load agent on a lab host was let go this way, and with
// it the run (2026-12-01). A host that stops sending is still let go.
func TestCoordinatorKeepsASlowAgentAndLetsASilentOneGo(t *testing.T) {
	const iv = 100 * time.Millisecond
	const last = 9
	// Interval k comes (k+1) x 150 ms late: 1.5 s for the last, far past
	// Behind (200 ms), with at most 250 ms between two copies.
	slow := &tickRunner{interval: iv, last: last, lag: 150 * time.Millisecond}
	frozen := &tickRunner{interval: iv, last: last, hangFrom: 3}
	began := time.Now()
	out, merged := runTickAgents(t, map[string]*tickRunner{"slow": slow, "frozen": frozen},
		RunSpec{Interval: iv, Last: last, Drain: 200 * time.Millisecond, Behind: 200 * time.Millisecond})
	// Agents are in name order: frozen, then slow.
	if a := out.Agents[1]; a.Name != "slow" || a.Status != store.AgentCompleted || a.Result == nil {
		t.Errorf("the slow agent: status %v, result %v; it kept sending, so it should have been waited for", a.Status, a.Result)
	}
	if a := out.Agents[0]; a.Name != "frozen" || a.Status != store.AgentBehind || !strings.Contains(a.Reason, "nor anything for") {
		t.Errorf("the frozen agent: status %v (%s); want behind, silent", a.Status, a.Reason)
	}
	if len(merged) != last+1 {
		t.Fatalf("%d merged intervals, want %d", len(merged), last+1)
	}
	for k, m := range merged {
		if _, ok := m.PerAgent["slow"]; !ok {
			t.Errorf("interval %d lacks the slow agent's share", k)
		}
		if _, ok := m.PerAgent["frozen"]; ok != (k < 3) {
			t.Errorf("interval %d: the frozen agent's share present %v, want only before interval 3", k, ok)
		}
	}
	// The frozen agent is let go after 5 s of silence, not at once, and
	// not after the slow one's whole lag.
	if took := time.Since(began); took > 20*time.Second {
		t.Errorf("the run took %v", took)
	}
}

// runTickAgents connects one agent per runner (in name order, each with
// its share) to a new coordinator and runs rs with them; it returns the
// outcome and the merged intervals.
func runTickAgents(t *testing.T, runners map[string]*tickRunner, rs RunSpec) (Outcome, []Merged) {
	t.Helper()
	c, err := Listen("127.0.0.1:0", testToken)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	names := slices.Sorted(maps.Keys(runners))
	for i, name := range names {
		dial(t, context.Background(), c, name, testToken, runners[name])
		rs.Orders = append(rs.Orders, Order{Share: Share{Index: i, Of: len(names)}})
	}
	rs.Agents = names
	if err := c.Wait(context.Background(), names, 5*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	var merged []Merged
	out, err := c.Run(context.Background(), rs, func(m Merged) error {
		merged = append(merged, m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, merged
}
