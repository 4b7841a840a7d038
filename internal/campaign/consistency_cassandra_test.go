package campaign

import (
	"errors"
	"os"
	"testing"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/results"
	_ "github.com/headroom-dev/headroom/internal/target/cassandra"
)

// Cassandra, 3 nodes, replication factor 3, writes at QUORUM; readers
// split over ONE, QUORUM and ALL (one cluster start for all three). A
// QUORUM or ALL read overlaps every QUORUM write in at least one replica
// (R + W > RF), so neither is ever stale; ONE may be, which is not
// asserted (on loopback the replicas rarely lag).
func TestConsistencyCassandraQuorum(t *testing.T) {
	_, errJava := deploy.Java()
	_, errJars := deploy.JarDir("cassandra")
	if err := errors.Join(errJava, errJars); err != nil {
		if os.Getenv("HEADROOM_REQUIRE_SERVERS") == "1" {
			t.Fatalf("Cassandra cannot run (HEADROOM_REQUIRE_SERVERS=1): %v", err)
		}
		t.Skipf("Cassandra cannot run: %v", err)
	}
	needServerBinary(t, "java")
	dir := labtest.SearchableDir(t)
	s := parse(t, dir, `
name: staleness-cassandra
target:
  type: cassandra
  write_consistency: QUORUM
  managed:
    cluster: {nodes: 3, replication_factor: 3}
workload:
  record_count: 10
  field_count: 1
  consistency: {with: only, writers: 1, write_interval: 100ms, readers: 6, read_interval: 20ms, keys: 3}
load: {model: closed, clients: [1], timeout: 5s}
phases: {warmup: 0s, measure: 6s}
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
	ops, err := r.History(runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	// Three JVMs on the 2-core machine answer in tens of milliseconds, so
	// sessions skip ticks: at least a third of the 60 writes and of each
	// level's 600 reads must happen.
	checkHistory(t, "cassandra", ops, 20)
	for _, o := range ops {
		if o.Kind == "write" && o.Level != "QUORUM" {
			t.Fatalf("a write at %q, want the target's write_consistency QUORUM: %+v", o.Level, o)
		}
	}
	stale, reads := staleReads(ops)
	t.Logf("cassandra: %d ops; reads %v; stale %v", len(ops), reads, stale)
	for _, l := range []string{"ONE", "QUORUM", "ALL"} {
		if reads[l] < 100 {
			t.Errorf("%d reads at %s, want at least 100 (2 readers every 20 ms for 6 s: 600, fewer on a busy machine)", reads[l], l)
		}
	}
	if stale["QUORUM"] != 0 || stale["ALL"] != 0 {
		t.Errorf("stale reads %v: QUORUM and ALL reads after QUORUM writes must never be stale", stale)
	}
	clockOffsets(t, st, runs[0].ID, "node1", "node2", "node3")
}
