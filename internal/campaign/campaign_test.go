package campaign

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
	_ "github.com/headroom-dev/headroom/internal/target/http"
	_ "github.com/headroom-dev/headroom/internal/target/sqlite"
)

// A server that goes away mid-run: the run fails with the cause after
// dead_after, keeps the intervals measured before, and on_failure: stop
// ends the campaign there, leaving the second planned run unstarted.
func TestDeadTargetFailsRunAndStops(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	dir := t.TempDir()
	s := parse(t, dir, fmt.Sprintf(`
name: dead
target: {type: http, base_url: %q, read: {path: "/r/{key}"}}
workload: {operations: {read: 1}, record_count: 10}
load: {model: closed, clients: [1, 2], dead_after: 1s, timeout: 200ms}
phases: {populate: false, warmup: 0, measure: 6s}
interval: 250ms
on_failure: stop
monitor: {enabled: false}
output: out
`, srv.URL))
	go func() {
		// Kill the server once it has answered for a while.
		for served.Load() < 50 {
			time.Sleep(10 * time.Millisecond)
		}
		srv.CloseClientConnections()
		srv.Close()
	}()
	out, err := Start(context.Background(), s, Options{})
	if err == nil || !strings.Contains(err.Error(), "on_failure is stop") {
		t.Fatalf("want the campaign stopped by on_failure, got %v", err)
	}
	st := openStore(t, out)
	runs, err := st.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("want exactly one run (the second must not start), got %d", len(runs))
	}
	r := runs[0]
	if r.Status != store.StatusFailed || !strings.Contains(r.Message, "stopped answering") {
		t.Errorf("run status %q message %q; want failed with the cause", r.Status, r.Message)
	}
	if r.Summary.Completed < 50 {
		t.Errorf("requests served before the failure must be kept, got %d completed", r.Summary.Completed)
	}
	ivs, err := st.Intervals(r.ID, "measure")
	if err != nil {
		t.Fatal(err)
	}
	var ok, conn int64
	for _, iv := range ivs {
		ok += iv.Count
		conn += iv.ErrorKinds["connection"]
	}
	if ok < 50 || conn == 0 {
		t.Errorf("intervals hold %d successes and %d connection errors; want both", ok, conn)
	}
	// The run ends at the interval that completes dead_after of nothing but
	// connection errors (intervals come in time order): counted in
	// intervals, not in wall time, which a slow machine stretches.
	const interval, deadAfter, measure = 250 * time.Millisecond, time.Second, 6 * time.Second
	failing := 0
	for _, iv := range ivs {
		if iv.Count == 0 && iv.Errors > 0 && iv.ErrorKinds["connection"] == iv.Errors {
			failing++
		} else {
			failing = 0
		}
	}
	if want := int(deadAfter / interval); failing != want || len(ivs) >= int(measure/interval) {
		t.Errorf("%d intervals stored, the last %d failing only; want the run to end after %d failing intervals, before its %d planned", len(ivs), failing, want, int(measure/interval))
	}
	if r.Summary.MeasureSecs >= measure.Seconds() {
		t.Errorf("the run measured %.2fs of its planned %v: the dead target did not cut it short", r.Summary.MeasureSecs, measure)
	}
}

// reset: repopulate empties and reloads the table before every run but the
// first (which follows the population directly), and records each reset.
func TestResetRepopulate(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, `
name: repop
target: {type: sqlite, path: db.sqlite}
workload: {operations: {insert: 1}, record_count: 200}
load: {model: closed, clients: [1, 1, 1]}
phases: {warmup: 0, measure: 500ms}
interval: 250ms
reset: repopulate
monitor: {enabled: false}
output: out
`)
	out, st := start(t, s)
	runs := storedRuns(t, st, 3)
	for i, r := range runs {
		evs, err := st.Events(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []map[string]any
		for _, e := range evs {
			if e.Kind == eventReset {
				var m map[string]any
				if err := json.Unmarshal([]byte(e.Detail), &m); err != nil {
					t.Fatalf("reset detail %q: %v", e.Detail, err)
				}
				got = append(got, m)
			}
		}
		if len(got) != 1 || got[0]["policy"] != "repopulate" {
			t.Fatalf("run %d: want one repopulate reset event, got %v", i+1, got)
		}
		_, skipped := got[0]["note"]
		if skipped != (i == 0) {
			t.Errorf("run %d: reset note %v; only the first run (right after population) skips the reset", i+1, got[0]["note"])
		}
	}
	// After the last run the table holds the population plus only the last
	// run's inserts: the earlier runs' inserts were removed by the resets.
	db, err := sql.Open("sqlite", filepath.Join(out.Dir, "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(`SELECT count(*) FROM usertable`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	last := runs[2].Summary.Completed + runs[2].Summary.Errors
	if want := 200 + last; n < 200+runs[2].Summary.Completed || n > want+int64(10) {
		t.Errorf("table holds %d rows; want 200 + the last run's %d inserts", n, last)
	}
	if runs[0].Summary.Completed+runs[1].Summary.Completed > 0 && n >= 200+runs[0].Summary.Completed+runs[1].Summary.Completed+runs[2].Summary.Completed {
		t.Errorf("earlier runs' inserts survived the resets: %d rows", n)
	}
}

// A reset policy the target cannot do is refused before anything runs.
func TestResetNeedsCapability(t *testing.T) {
	dir := t.TempDir()
	for _, policy := range []string{"restart", "restore"} {
		s := parse(t, dir, `
name: cap
target: {type: sqlite}
workload: {ycsb: c, record_count: 10}
load: {model: closed, clients: [1]}
phases: {warmup: 0, measure: 100ms}
interval: 100ms
reset: `+policy+`
monitor: {enabled: false}
output: out
`)
		_, err := Start(context.Background(), s, Options{})
		if err == nil || !strings.HasPrefix(err.Error(), "reset: "+policy) {
			t.Errorf("reset %s on sqlite: want an error naming reset: %s, got %v", policy, policy, err)
		}
	}
}

// Seed 001's three TPC-W statements on the embedded target: every
// statement is recorded under its name, the insert's sequence continues
// from one run to the next (no duplicate keys without any reset), and the
// rows it adds are exactly the inserts that succeeded.
func TestStatementWorkloadOnSQLite(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, `
name: tpcw
target: {type: sqlite, path: db.sqlite}
workload:
  statements:
    - name: simple_join
      sql: SELECT * FROM customer, address, country WHERE customer.c_addr_id = address.addr_id AND address.addr_co_id = country.co_id AND customer.c_uname = ?
      params: [{uniform: [1, 2880], prefix: UN}]
    - name: complex_join
      sql: SELECT i_id, i_title, a_fname, a_lname FROM item, author WHERE item.i_a_id = author.a_id AND item.i_subject = ? ORDER BY item.i_pub_date DESC, item.i_title LIMIT 50
      params: [{choice: [ARTS, HISTORY, TRAVEL]}]
    - name: insert_order_line
      sql: INSERT INTO order_line (ol_id, ol_o_id, ol_i_id, ol_qty, ol_discount, ol_comments) VALUES (?, ?, ?, ?, ?, ?)
      params: [{uniform: [1, 5]}, {sequence: 10000000}, {uniform: [1, 100]}, {uniform: [1, 10]}, {uniform: [0, 30]}, {string: [20, 40]}]
  dataset: {builtin: tpcw, scale: {ebs: 1, items: 100}}
load: {model: closed, clients: [2, 2]}
phases: {warmup: 0, measure: 600ms}
interval: 200ms
monitor: {enabled: false}
output: out
`)
	out, st := start(t, s)
	runs := storedRuns(t, st, 2)
	var inserted int64
	for _, r := range runs {
		ivs, err := st.Intervals(r.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		ops := map[string]int64{}
		for _, iv := range ivs {
			ops[iv.Op] += iv.Count
			if iv.Errors > 0 {
				t.Errorf("run %d: %s interval has errors %v", r.ID, iv.Op, iv.ErrorKinds)
			}
		}
		for _, name := range []string{"simple_join", "complex_join", "insert_order_line"} {
			if ops[name] == 0 {
				t.Errorf("run %d: no successful %s; got %v", r.ID, name, ops)
			}
		}
		inserted += ops["insert_order_line"]
	}
	db, err := sql.Open("sqlite", filepath.Join(out.Dir, "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(`SELECT count(*) FROM order_line WHERE ol_o_id >= 10000000`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != inserted {
		t.Errorf("order_line gained %d rows; the runs recorded %d successful inserts", n, inserted)
	}
}

// After a reset that reloads the data, YCSB D's "latest" reads start again
// from the loaded records: no run reads the previous runs' inserts, which
// the reset removed (review finding: the insert counter carried over and
// most reads of the second run failed with not_found).
func TestLatestAfterRepopulateReadsExistingRecords(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, `
name: latest-reset
target: {type: sqlite, path: db.sqlite}
workload: {ycsb: d, record_count: 500}
load: {model: closed, clients: [2, 2, 2]}
phases: {warmup: 0, measure: 600ms}
interval: 200ms
reset: repopulate
monitor: {enabled: false}
output: out
`)
	_, st := start(t, s)
	for _, r := range storedRuns(t, st, 3) {
		ivs, err := st.Intervals(r.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		var reads, missing int64
		for _, iv := range ivs {
			if iv.Op == "read" {
				reads += iv.Count
				missing += iv.ErrorKinds["not_found"]
			}
		}
		if reads == 0 || missing > 0 {
			t.Errorf("run %d: %d reads succeeded, %d found no record", r.Seq+1, reads, missing)
		}
	}
}
