package campaign

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	_ "github.com/headroom-dev/headroom/internal/target/postgres"
	_ "github.com/headroom-dev/headroom/internal/target/redis"
)

// needServerBinary skips a test unless bin is installed (and this process
// is root: the managed servers run as an unprivileged user), and fails it
// instead under HEADROOM_REQUIRE_SERVERS=1.
func needServerBinary(t *testing.T, bin string) {
	t.Helper()
	_, err := exec.LookPath(bin)
	if err != nil {
		if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + bin); len(m) > 0 {
			err = nil
		}
	}
	why := ""
	switch {
	case err != nil:
		why = bin + " is not installed"
	case os.Geteuid() != 0:
		why = "the managed servers run as an unprivileged user: needs root"
	}
	if why == "" {
		return
	}
	if os.Getenv("HEADROOM_REQUIRE_SERVERS") == "1" {
		t.Fatalf("%s (HEADROOM_REQUIRE_SERVERS=1)", why)
	}
	t.Skip(why)
}

// staleReads counts, per read level, the reads that returned an older
// version than one whose write had completed (ok) before the read was
// invoked: the reads that t-visibility is made of (seed-digest §5).
func staleReads(ops []history.Op) (stale, reads map[string]int) {
	type ack struct{ v, done int64 }
	acks := map[string][]ack{}
	for _, o := range ops {
		if o.Kind == history.Write && o.Outcome == history.OK {
			acks[o.Key] = append(acks[o.Key], ack{o.Value, o.CompleteNS})
		}
	}
	stale, reads = map[string]int{}, map[string]int{}
	for _, o := range ops {
		if o.Kind != history.Read || o.Outcome != history.OK {
			continue
		}
		reads[o.Level]++
		for _, a := range acks[o.Key] {
			if a.done <= o.InvokeNS && o.Value < a.v {
				stale[o.Level]++
				break
			}
		}
	}
	return stale, reads
}

// checkHistory checks what every consistency run's history must hold: the
// writers' versions in order per key, every session's operations one at a
// time, reads that name versions that were written, and the writes the
// schedule asked for.
func checkHistory(t *testing.T, name string, ops []history.Op, writes int) {
	t.Helper()
	last := map[int]int64{}   // process -> last completion
	ver := map[string]int64{} // key -> last version written
	nw := 0
	for _, o := range ops {
		if o.InvokeNS < last[o.Process] || o.CompleteNS < o.InvokeNS {
			t.Fatalf("%s: process %d overlaps its own operations or completes before it starts: %+v", name, o.Process, o)
		}
		last[o.Process] = o.CompleteNS
		if o.Kind == history.Write {
			if o.Value != ver[o.Key]+1 {
				t.Fatalf("%s: %s written at version %d after %d", name, o.Key, o.Value, ver[o.Key])
			}
			ver[o.Key] = o.Value
			if o.Outcome == history.OK {
				nw++
			}
		}
	}
	for _, o := range ops {
		if o.Kind == history.Read && o.Outcome == history.OK && (o.Value < 0 || o.Value > ver[o.Key]) {
			t.Fatalf("%s: a read of %s returned version %d, which was never written (last %d)", name, o.Key, o.Value, ver[o.Key])
		}
	}
	if nw < writes {
		t.Errorf("%s: %d acknowledged writes, want at least %d", name, nw, writes)
	}
}

// clockOffsets are run id's clock_offset events, which must name each of
// hosts once; on this one machine every offset is 0 within its bound.
func clockOffsets(t *testing.T, st *store.Store, id int64, hosts ...string) {
	t.Helper()
	evs, err := st.Events(id)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]clockOffsetDetail{}
	for _, e := range evs {
		if e.Kind == eventClockOffset {
			var d clockOffsetDetail
			if err := json.Unmarshal([]byte(e.Detail), &d); err != nil {
				t.Fatal(err)
			}
			seen[d.Host] = d
		}
		if e.Kind == "clock_offset_error" {
			t.Errorf("run %d: %s", id, e.Detail)
		}
	}
	for _, h := range hosts {
		d, ok := seen[h]
		if !ok {
			t.Errorf("run %d: no clock offset of %s: %+v", id, h, seen)
			continue
		}
		if abs(d.OffsetNS) > d.UncertaintyNS || d.UncertaintyNS <= 0 || d.UncertaintyNS > int64(50*time.Millisecond) || d.Exchanges != 2*clockExchanges {
			t.Errorf("run %d: %s's clock is this machine's, so its offset must be 0 within a small bound: %+v", id, h, d)
		}
	}
	if len(seen) != len(hosts) {
		t.Errorf("run %d: clock offsets of %d hosts, want %v", id, len(seen), hosts)
	}
}

func abs(v int64) int64 { return max(v, -v) }

// startWithMessages runs s's campaign and opens its store; when it ends
// with an error, the failed runs' messages say why.
func startWithMessages(t *testing.T, s *spec.Spec) *store.Store {
	t.Helper()
	out, err := Start(context.Background(), s, Options{})
	if err != nil {
		if out.StorePath != "" {
			st := openStore(t, out)
			runs, _ := st.Runs()
			for _, r := range runs {
				t.Logf("run %d (%s): %s %s", r.ID, r.Treatment, r.Status, r.Message)
			}
		}
		t.Fatal(err)
	}
	return openStore(t, out)
}

// PostgreSQL with one streaming replica whose replay is held back by
// 20 ms (recovery_min_apply_delay, the designed cause): with the async
// mode, reads on the replica after an acknowledged write see the older
// version; with sync and synchronous_commit = remote_apply, a commit
// returns only once the replica has applied it, so no read is stale. The
// primary is never stale. The consistency workload runs alone (with:
// only), so the runs' intervals are its reads and writes.
func TestConsistencyPostgresAsyncVersusRemoteApply(t *testing.T) {
	needServerBinary(t, "postgres")
	dir := labtest.SearchableDir(t)
	s := parse(t, dir, `
name: staleness-pg
target:
  type: postgres
  managed:
    cluster:
      nodes: 2
      mode: async
      node_settings: {node2: {recovery_min_apply_delay: 20ms}}
workload:
  record_count: 10
  consistency: {with: only, writers: 1, write_interval: 100ms, readers: 4, read_interval: 1ms, keys: 2}
load: {model: closed, clients: [1]}
phases: {warmup: 0s, measure: 4s}
treatments:
  - {name: async}
  - {name: remote_apply, set: {target.managed.cluster.mode: sync, target.managed.settings: {synchronous_commit: remote_apply}}}
output: out
`)
	st := startWithMessages(t, s)
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range []string{"async", "remote_apply"} {
		runs := r.CompletedRuns(tr)
		if len(runs) != 1 {
			t.Fatalf("%s: completed runs %+v", tr, runs)
		}
		run := runs[0]
		ops, err := r.History(run.ID)
		if err != nil {
			t.Fatal(err)
		}
		checkHistory(t, tr, ops, 30) // 40 ticks of 100 ms
		stale, reads := staleReads(ops)
		t.Logf("%s: %d ops; reads %v; stale %v", tr, len(ops), reads, stale)
		if reads["primary"] < 1000 || reads["replica1"] < 1000 {
			t.Errorf("%s: reads per level %v, want thousands on each (4 readers every 1 ms for 4 s)", tr, reads)
		}
		if stale["primary"] != 0 {
			t.Errorf("%s: %d stale reads on the primary, which has every acknowledged write", tr, stale["primary"])
		}
		switch tr {
		case "async":
			if stale["replica1"] == 0 {
				t.Errorf("async: no stale read on a replica that applies 20 ms late")
			}
		case "remote_apply":
			if stale["replica1"] != 0 {
				t.Errorf("remote_apply: %d stale reads on the replica; a commit waits until it has applied", stale["replica1"])
			}
		}
		ivs, err := r.Intervals(run.ID, "measure")
		if err != nil {
			t.Fatal(err)
		}
		var nr, nu int64
		for _, iv := range ivs {
			switch iv.Op {
			case "read":
				nr += iv.Count
			case "update":
				nu += iv.Count
			}
		}
		if nr < int64(reads["primary"]+reads["replica1"])/2 || nu < 30 {
			t.Errorf("%s: the intervals count %d reads and %d updates, want the history's (%v reads)", tr, nr, nu, reads)
		}
		clockOffsets(t, st, run.ID, "node1", "node2")
	}
}

// Redis with one replica, the consistency workload beside a YCSB mix: the
// mix's intervals are recorded as usual, the history has the writer's and
// the readers' operations on both paths, the primary is never stale, and
// the replica (asynchronous) only ever returns versions that were written.
func TestConsistencyRedisReplicaBesideTheMix(t *testing.T) {
	needServerBinary(t, "redis-server")
	dir := labtest.SearchableDir(t)
	s := parse(t, dir, `
name: staleness-redis
target:
  type: redis
  managed:
    cluster: {nodes: 2, mode: replicas}
workload:
  ycsb: a
  record_count: 500
  field_count: 2
  field_length: 20
  consistency: {writers: 1, write_interval: 50ms, readers: 4, read_interval: 2ms, keys: 3}
load: {model: open, arrival: constant, rates: [300]}
phases: {warmup: 1s, measure: 3s}
output: out
`)
	st := startWithMessages(t, s)
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	runs := r.CompletedRuns("")
	if len(runs) != 1 {
		t.Fatalf("completed runs %+v", runs)
	}
	run := runs[0]
	if run.Summary.Completed < 800 {
		t.Errorf("the YCSB mix beside the consistency workload completed %d requests, want about 900", run.Summary.Completed)
	}
	ops, err := r.History(run.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkHistory(t, "redis", ops, 60) // 80 ticks of 50 ms over warmup and measure
	stale, reads := staleReads(ops)
	t.Logf("redis: %d ops; reads %v; stale %v", len(ops), reads, stale)
	if reads["primary"] < 500 || reads["replica1"] < 500 || stale["primary"] != 0 {
		t.Errorf("reads per level %v, stale %v: want hundreds on both paths and none stale on the primary", reads, stale)
	}
	clockOffsets(t, st, run.ID, "node1", "node2")
	// Beside the mix, the sessions' schedule is counted in an event of
	// its own, matching the history.
	evs, err := st.Events(run.ID)
	if err != nil {
		t.Fatal(err)
	}
	var tot *scheduleTotals
	for _, e := range evs {
		if e.Kind == eventConsistencyLoad {
			tot = new(scheduleTotals)
			if err := json.Unmarshal([]byte(e.Detail), tot); err != nil {
				t.Fatal(err)
			}
		}
	}
	if tot == nil || tot.Reads.Ops+tot.Writes.Ops != int64(len(ops)) {
		t.Errorf("consistency_load %+v, want the history's %d operations", tot, len(ops))
	}
}
