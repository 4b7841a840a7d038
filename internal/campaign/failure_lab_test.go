package campaign

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/availability"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// failureRun reads the one run of a campaign with the availability
// analysis and the fault times the campaign recorded.
func failureRun(t *testing.T, st *store.Store) (availability.Run, map[string]time.Time) {
	t.Helper()
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := availability.FromResults(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Problem != nil {
		t.Fatalf("availability runs: %+v", runs)
	}
	fs, err := r.Faults(runs[0].Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]time.Time{}
	for _, f := range fs {
		if f.Error != "" {
			t.Errorf("event %s failed: %s", f.Action, f.Error)
		}
		at[f.Action] = f.Time
	}
	return runs[0], at
}

// The PostgreSQL server on db1 is killed 6 s into the measured phase and
// started again at 10 s (the designed outage) while 200 requests/s of
// YCSB a (half reads, half updates) and a few inserts arrive. The seconds
// wholly inside the outage have no success; those before it all succeed;
// the analysis pairs the kill with the start, detects it within the
// interval it happened in, and finds the service back after the start
// (the server's restart and the pool's reconnection). Every acknowledged
// record is read back afterwards: none lost.
func TestKillAndStartPostgres(t *testing.T) {
	labtest.NeedServer(t, "postgres", "postgresql")
	dir := labtest.SearchableDir(t)
	s := parse(t, dir, `
name: lab-kill-start
lab:
  name: t-camp-killst
  hosts: [{name: db1, type: medium}]
target: {type: postgres, managed: {host: db1}, connect_timeout: 1s}
workload: {operations: {read: 0.45, update: 0.45, insert: 0.1}, record_count: 2000, field_count: 2, field_length: 20}
load: {model: open, arrival: constant, rates: [200], max_in_flight: 64, timeout: 1s}
phases: {warmup: 2s, measure: 32s}
events:
  - {at: 6s, action: kill, host: db1}
  - {at: 10s, action: start, host: db1}
analysis:
  failures: {tolerance: 0.5, stable: 3}
monitor: {disks: [], interfaces: []}
output: out
`)
	_, st := start(t, s)
	x, at := failureRun(t, st)
	kill, restart := at["kill"], at["start"]
	if kill.IsZero() || restart.IsZero() {
		t.Fatalf("fault times: %v", at)
	}
	res := x.Result
	if len(res.Scenarios) != 1 {
		t.Fatalf("scenarios: %+v", res.Scenarios)
	}
	sc := res.Scenarios[0]
	if sc.Fault.Action != "kill" || sc.Recovery.Action != "start" || !sc.From.Equal(kill) || !sc.To.Equal(restart) {
		t.Errorf("window %s %v -> %s %v, want kill %v -> start %v", sc.Fault.Action, sc.From, sc.Recovery.Action, sc.To, kill, restart)
	}
	// Per second: every second wholly before the kill answered all its
	// requests; every second from half a second after the kill (requests
	// in flight have failed) to the start answered none.
	for _, sec := range res.Timeline {
		end := sec.Start.Add(sec.Dur)
		switch {
		case !end.After(kill) && sec.Availability < 0.99:
			t.Errorf("second at %v before the kill: availability %.3f", sec.Start.Sub(x.Origin), sec.Availability)
		case !sec.Start.Before(kill.Add(500*time.Millisecond)) && !end.After(restart) && sec.Availability != 0:
			t.Errorf("second at %v while the server was down: availability %.3f", sec.Start.Sub(x.Origin), sec.Availability)
		}
	}
	if !sc.Detected || sc.Detect <= 0 || sc.Detect > 1100*time.Millisecond {
		t.Errorf("time to detect %v (detected %v by %q), want within the interval of the kill", sc.Detect, sc.Detected, sc.DetectedBy)
	}
	// Recovered no earlier than the start, and where the timeline shows
	// it: the seconds from the recovery on answered their requests. How
	// long after the start that is depends on the machine (the server's
	// restart, the pool's reconnection and the latency settling back
	// within the band: 4-5 s on most days, 6 s in a CI run of 2026-12-07,
	// which failed a fixed bound of 5 s), so it is logged, not bounded.
	// The measured phase leaves 22 s after the start for it and the 3
	// stable seconds the analysis needs: another CI run that day had the
	// service back only 10 s after the start, 4 s before a 20 s phase
	// ended, and the analysis could not call it recovered.
	down := restart.Sub(kill)
	if !sc.Recovered || sc.MTTR < down {
		t.Errorf("MTTR %v (recovered %v), want the service back after the start, %v after the kill", sc.MTTR, sc.Recovered, down)
	}
	t.Logf("back %v after the start (MTTR %v)", sc.MTTR-down, sc.MTTR)
	for _, sec := range res.Timeline {
		if !sec.Start.Before(sc.RecoveredAt) && sec.Start.Before(sc.RecoveredAt.Add(3*time.Second)) && sec.Availability < 0.99 {
			t.Errorf("second at %v, after the recovery at %v: availability %.3f", sec.Start.Sub(x.Origin), sc.RecoveredAt.Sub(x.Origin), sec.Availability)
		}
	}
	// 4 s window, at least 3 of them down.
	if !(sc.Yield < 0.3) || math.IsNaN(sc.Degraded) || sc.Degraded > 0.3 {
		t.Errorf("yield %.3f, degraded capacity %.3f over a window mostly down", sc.Yield, sc.Degraded)
	}
	if res.Failures != 1 || res.Availability >= 1 || res.Availability < 0.5 {
		t.Errorf("failures %d, availability %.3f", res.Failures, res.Availability)
	}
	if len(x.Checks) != 1 {
		t.Fatalf("write checks: %+v", x.Checks)
	}
	c := x.Checks[0]
	if c.Trigger != "fault" || c.Checked < 2000 || c.Lost != 0 || c.NeverRead != 0 || c.Stable != c.Checked || !c.Strong {
		t.Errorf("write check after kill and start: %+v", c)
	}
}

// The deliberate loss (Jepsen's set-full check in miniature): a
// PostgreSQL primary (pg1) with an async replica (pg2) takes 200 inserts
// per second; at 3 s a partition cuts the replica off, and the primary
// goes on acknowledging inserts the replica never receives; at 6 s the
// primary is killed, at 7 s the partition heals, at 8 s the replica is
// promoted and the clients move to it. Every insert acknowledged between
// 3 s and 6 s is gone: the write check must find them lost. The control,
// sync mode with synchronous_commit = remote_apply, promoted the same
// way, loses nothing: during the partition no commit is acknowledged.
func TestPromoteAfterKillLosesAsyncWrites(t *testing.T) {
	labtest.NeedServer(t, "postgres", "postgresql")
	labtest.NeedServer(t, "iptables", "iptables")
	for _, c := range []struct {
		mode, settings string
		lose           bool
	}{
		{"async", "{}", true},
		{"sync", "{synchronous_commit: remote_apply}", false},
	} {
		t.Run(c.mode, func(t *testing.T) {
			dir := labtest.SearchableDir(t)
			s := parse(t, dir, `
name: lab-promote-`+c.mode+`
lab:
  name: t-camp-promo
  hosts: [{name: pg, count: 2, type: medium}]
target:
  type: postgres
  connect_timeout: 1s
  managed: {cluster: {nodes: 2, hosts: pg, mode: `+c.mode+`}, settings: `+c.settings+`}
workload: {operations: {insert: 0.8, read: 0.2}, record_count: 500, field_count: 2, field_length: 20}
load: {model: open, arrival: constant, rates: [200], max_in_flight: 64, timeout: 1s}
phases: {warmup: 2s, measure: 14s}
events:
  - {at: 3s, action: partition, groups: [[pg1], [pg2]]}
  - {at: 6s, action: kill, host: pg1}
  - {at: 7s, action: heal}
  - {at: 8s, action: promote, host: pg2}
monitor: {disks: [], interfaces: []}
output: out
`)
			var notes syncBuffer
			out, err := Start(context.Background(), s, Options{Progress: progress.NewLines(&notes, time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			x, at := failureRun(t, openStore(t, out))
			if said := strings.Contains(notes.String(), "LOST WRITES: "); said != c.lose {
				t.Errorf("the terminal said LOST WRITES: %v, want %v:\n%s", said, c.lose, notes.String())
			}
			if at["promote"].IsZero() {
				t.Fatalf("no promote event: %v", at)
			}
			if len(x.Checks) != 1 {
				t.Fatalf("write checks: %+v", x.Checks)
			}
			wc := x.Checks[0]
			t.Logf("%s: write check %+v", c.mode, wc)
			if wc.Trigger != "fault" || wc.Stable+wc.Lost+wc.NeverRead != wc.Checked || wc.NeverRead != 0 {
				t.Errorf("write check: %+v", wc)
			}
			// About 3 s of 160 inserts/s acknowledged on the cut-off primary.
			if c.lose && wc.Lost < 100 {
				t.Errorf("async replica promoted after the primary was killed: %d lost, want the inserts of the partition (~480)", wc.Lost)
			}
			if !c.lose && wc.Lost != 0 {
				t.Errorf("sync remote_apply replica promoted: %d acknowledged records lost, want none", wc.Lost)
			}
			// The kill pairs with the promote, and the clients came back
			// on the new primary.
			var sc *availability.Scenario
			for i := range x.Result.Scenarios {
				if x.Result.Scenarios[i].Fault.Action == "kill" {
					sc = &x.Result.Scenarios[i]
				}
			}
			if sc == nil || sc.Recovery.Action != "promote" || !sc.To.Equal(at["promote"]) {
				t.Fatalf("kill scenario: %+v", sc)
			}
			var after int64
			for _, sec := range x.Result.Timeline {
				if sec.Start.After(at["promote"].Add(time.Second)) {
					after += int64(sec.Throughput * sec.Dur.Seconds())
				}
			}
			if after < 200 {
				t.Errorf("%d requests succeeded after the promote; the clients did not move to the new primary", after)
			}
		})
	}
}

// syncBuffer is a buffer the campaign's goroutines may write to at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// stallRun runs the disk-stall campaign src in a new directory and reads
// its failure run back.
func stallRun(t *testing.T, src string) (*store.Store, availability.Run, map[string]time.Time) {
	t.Helper()
	_, st := start(t, parse(t, labtest.SearchableDir(t), src))
	x, at := failureRun(t, st)
	if at["stall_disk"].IsZero() || at["resume_disk"].IsZero() {
		t.Fatalf("fault times: %v", at)
	}
	return st, x, at
}

// stallOps counts each operation's requests (ok, failed, dropped) over
// the intervals from a second after the stall to the resume, and logs
// them with the failed ones' kinds.
func stallOps(t *testing.T, st *store.Store, x availability.Run, at map[string]time.Time) map[string][3]int64 {
	t.Helper()
	stall, resume := at["stall_disk"], at["resume_disk"]
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	ivs, err := r.Intervals(x.Run.ID, "measure")
	if err != nil {
		t.Fatal(err)
	}
	n := map[string][3]int64{}             // op -> ok, failed, dropped
	kinds := map[string]map[string]int64{} // op -> error kind -> count
	for _, iv := range ivs {
		if iv.Start.Before(stall.Add(time.Second)) || iv.Start.Add(iv.Duration).After(resume) {
			continue
		}
		c := n[iv.Op]
		c[0], c[1], c[2] = c[0]+iv.Count, c[1]+iv.Errors, c[2]+iv.Dropped
		n[iv.Op] = c
		for k, v := range iv.ErrorKinds {
			if kinds[iv.Op] == nil {
				kinds[iv.Op] = map[string]int64{}
			}
			kinds[iv.Op][k] += v
		}
	}
	t.Logf("inside the stall (ok, failed, dropped): %v; errors by kind: %v", n, kinds)
	return n
}

// The designed disk stall: PostgreSQL on db1 keeps its data and WAL on a
// 400-IOPS volume, and 20 requests/s arrive, half reads of records its
// buffers hold and half updates, each of which waits for its commit's WAL
// flush. 6 s into the measured phase the volume is stalled, at 10 s it
// is resumed. During the stall the server runs and answers the reads,
// while every update waits on the volume until the load's 1 s timeout:
// the seconds wholly inside the stall answer every read and no update. (At
// 200 requests/s the stuck updates hold every pooled connection within a
// second, and the reads time out waiting for one: availability 0, as in
// an outage. The rate and pool here keep the stuck updates, 10 a second
// for 4 s, below the pool's 64 connections and the server's 100.) The
// 64 connections are opened before the run (min_connections): each
// update that times out costs its connection, and a new one needs a new
// backend, which, when the files it starts from have left the page cache
// (as in a full test suite), waits on the stalled disk too; the reads
// would then fail for want of a connection, not of their data. The
// analysis pairs the stall with the resume, detects it once the first
// updates time out, and finds the service back after the resume; nothing
// acknowledged is lost, and the recorded limits say when the volume was
// stalled.
func TestDiskStallFailsWritesNotCachedReads(t *testing.T) {
	labtest.NeedServer(t, "postgres", "postgresql")
	const src = `
name: lab-stall-disk
lab:
  name: t-camp-stall
  hosts: [{name: db1, type: medium, volumes: [{name: data, type: piops, size_gib: 20, iops: 400}]}]
target: {type: postgres, managed: {host: db1}, connect_timeout: 1s, pool_size: 64, min_connections: 64}
workload: {operations: {read: 0.5, update: 0.5}, record_count: 2000, field_count: 2, field_length: 20}
load: {model: open, arrival: constant, rates: [20], max_in_flight: 128, timeout: 1s}
phases: {warmup: 2s, measure: 20s}
events:
  - {at: 6s, action: stall_disk, host: db1}
  - {at: 10s, action: resume_disk, host: db1}
analysis:
  failures: {tolerance: 0.5, stable: 3}
monitor: {disks: [], interfaces: []}
output: out
`
	st, x, at := stallRun(t, src)
	stall, resume := at["stall_disk"], at["resume_disk"]
	res := x.Result
	if len(res.Scenarios) != 1 {
		t.Fatalf("scenarios: %+v", res.Scenarios)
	}
	sc := res.Scenarios[0]
	if sc.Fault.Action != "stall_disk" || sc.Recovery.Action != "resume_disk" || !sc.From.Equal(stall) || !sc.To.Equal(resume) {
		t.Errorf("window %s %v -> %s %v, want stall_disk %v -> resume_disk %v", sc.Fault.Action, sc.From, sc.Recovery.Action, sc.To, stall, resume)
	}
	var inside []float64
	for _, sec := range res.Timeline {
		end := sec.Start.Add(sec.Dur)
		switch {
		case !end.After(stall) && sec.Availability < 0.99:
			t.Errorf("second at %v before the stall: availability %.3f", sec.Start.Sub(x.Origin), sec.Availability)
		case !sec.Start.Before(stall.Add(time.Second)) && !end.After(resume):
			// From a second in: the updates due then have timed out.
			inside = append(inside, sec.Availability)
		}
	}
	t.Logf("availability of the seconds inside the stall: %.2f; detect %v by %q, MTTR %v, yield %.2f", inside, sc.Detect, sc.DetectedBy, sc.MTTR, sc.Yield)
	if len(inside) < 2 {
		t.Fatalf("only %d seconds inside the stall", len(inside))
	}
	// Per operation over the same seconds: every read answered, no update.
	n := stallOps(t, st, x, at)
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	if rd := n["read"]; rd[0] == 0 || rd[1] != 0 || rd[2] != 0 {
		t.Errorf("reads inside the stall: %d ok, %d failed, %d dropped; want all answered", rd[0], rd[1], rd[2])
	}
	if up := n["update"]; up[0] != 0 || up[1] == 0 {
		t.Errorf("updates inside the stall: %d ok, %d failed, %d dropped; want none answered", up[0], up[1], up[2])
	}
	// The first updates stuck in the stall time out 1 s after it.
	if !sc.Detected || sc.Detect <= 0 || sc.Detect > 2100*time.Millisecond {
		t.Errorf("time to detect %v (detected %v by %q), want within the second after the updates' 1 s timeout", sc.Detect, sc.Detected, sc.DetectedBy)
	}
	// Idle, the service is back 1-2 s after the resume (MTTR 5-6 s in
	// three runs); a CI run on a machine shared with builds measured 10 s,
	// so the bound leaves room for that. The seconds after the resume are
	// logged to tell a slow recovery from a wrong one.
	down := resume.Sub(stall)
	var after []string
	for _, sec := range res.Timeline {
		if !sec.Start.Before(resume.Add(-time.Second)) && sec.Start.Before(resume.Add(9*time.Second)) {
			after = append(after, fmt.Sprintf("%.0fs:%.2f/%.0f ok/s/p99 %.1f ms", sec.Start.Sub(stall).Seconds(), sec.Availability, sec.Throughput, sec.P99/1000))
		}
	}
	t.Logf("availability/throughput/p99 by second from the stall, around and after the resume: %s; steady before: %.1f ok/s, p99 %.1f ms", strings.Join(after, " "), sc.Before.Throughput, sc.Before.P99/1000)
	if !sc.Recovered || sc.MTTR < down-time.Second || sc.MTTR > down+8*time.Second {
		t.Errorf("MTTR %v (recovered %v), want from about the resume's %v to 8 s after it", sc.MTTR, sc.Recovered, down)
	}
	if !(sc.Yield > 0.3 && sc.Yield < 0.8) {
		t.Errorf("yield %.3f over a 4 s window whose reads succeeded and updates mostly failed", sc.Yield)
	}
	if len(x.Checks) != 1 || x.Checks[0].Trigger != "fault" || x.Checks[0].Lost != 0 || x.Checks[0].Stable != x.Checks[0].Checked {
		t.Errorf("write checks: %+v", x.Checks)
	}
	// The limits say when the volume was stalled, and that the undo left
	// it serving.
	for _, c := range []struct {
		at   time.Time
		want bool
	}{{stall.Add(-time.Second), false}, {stall.Add(time.Second), true}, {resume.Add(time.Second), false}, {x.Run.Summary.MeasureEnd.Add(time.Minute), false}} {
		h, ok := r.HostLimits("db1", c.at)
		v, vok := h.Volume("data")
		if !ok || !vok || v.Stalled != c.want {
			t.Errorf("db1's volume at %v: %+v; want stalled %v", c.at.Sub(stall), h.Volumes, c.want)
		}
	}
}
