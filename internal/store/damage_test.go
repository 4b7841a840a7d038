package store

import (
	"database/sql"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// editFile runs statements on a store file through a connection of its
// own, as a user with the sqlite3 shell would.
func editFile(t *testing.T, path string, qs ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=rw")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// finishedStore makes a closed store with one completed run of slot 3
// (treatment wal) with two measured intervals, and returns its path.
func finishedStore(t *testing.T) string {
	t.Helper()
	s := newStore(t)
	r := testRun(3)
	id, err := s.StartRun(r)
	if err != nil {
		t.Fatal(err)
	}
	var ivs []Interval
	for i := range 2 {
		ivs = append(ivs, Interval{RunID: id, Phase: "measure", Op: "read", Start: r.Start.Add(time.Duration(i) * time.Second),
			Duration: time.Second, Count: 100, Hist: hist(t, int64(i), 100)})
	}
	if err := s.AddIntervals(ivs); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(id, StatusCompleted, "", r.Start.Add(3*time.Second), RunSummary{Sent: 200, Completed: 200,
		MeasureSecs: 2, Throughput: 100}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return s.Path()
}

// damageOf opens path and returns what Runs says is wrong with it.
func damageOf(t *testing.T, path string, open func(string) (*Store, error)) *Damaged {
	t.Helper()
	s, err := open(path)
	if err != nil {
		t.Fatalf("a damaged store must still open, to be reported as damaged: %v", err)
	}
	defer s.Close()
	_, err = s.Runs()
	var d *Damaged
	if !errors.As(err, &d) {
		t.Fatalf("Runs of a damaged store: %v; want a *Damaged error", err)
	}
	if err := s.Check(); !errors.As(err, &d) {
		t.Fatalf("Check of a damaged store: %v; want a *Damaged error", err)
	}
	return d
}

// A slot completes once: a second completion is refused with one sentence
// by the store, and by the file itself for any other writer.
func TestSecondCompletionOfASlotIsRefused(t *testing.T) {
	s := newStore(t)
	first, _ := s.StartRun(testRun(3))
	if err := s.FinishRun(first, StatusCompleted, "", t0.Add(time.Hour), RunSummary{}); err != nil {
		t.Fatal(err)
	}
	second, _ := s.StartRun(testRun(3))
	err := s.FinishRun(second, StatusCompleted, "", t0.Add(time.Hour), RunSummary{})
	if err == nil || !strings.Contains(err.Error(), `run 2 cannot complete slot 3 of treatment "wal", which run 1 already completed`) {
		t.Fatalf("second completion of slot 3: %v", err)
	}
	t.Log(err)
	// A later attempt may still fail or be interrupted.
	if err := s.FinishRun(second, StatusInterrupted, "stopped", t0.Add(time.Hour), RunSummary{}); err != nil {
		t.Fatal(err)
	}
	// Another writer (the sqlite3 shell, an older build) meets the index.
	db, err := sql.Open("sqlite", "file:"+s.Path()+"?mode=rw")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE run SET status = 'completed' WHERE id = 2`); err == nil || !strings.Contains(err.Error(), "UNIQUE") {
		t.Fatalf("completing slot 3 again behind the store's back: %v; want the unique index to refuse it", err)
	}
}

// A file from before the indexes of the migrations gets them at its first
// write, never when it is only read.
func TestIndexAddedAtFirstWrite(t *testing.T) {
	path := finishedStore(t)
	editFile(t, path, `DROP INDEX run_completed_slot`, `DROP INDEX sample_run_series`)
	indexes := func() int {
		var n int
		s, err := OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name IN ('run_completed_slot', 'sample_run_series')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Runs(); err != nil {
		t.Fatal(err)
	}
	if n := indexes(); n != 0 {
		t.Fatalf("reading the file added %d indexes", n)
	}
	if err := s.AddEvent(Event{Kind: "resume", Detail: "x", Time: t0}); err != nil {
		t.Fatal(err)
	}
	if n := indexes(); n != 2 {
		t.Fatalf("the first write added %d of the 2 indexes", n)
	}
}

// A file from before the index that already holds two completed runs of a
// slot opens, and is reported as damaged: not read into numbers, not
// written.
func TestDuplicatedCompletedRunsAreDamage(t *testing.T) {
	path := finishedStore(t)
	editFile(t, path, `DROP INDEX run_completed_slot`,
		`INSERT INTO run (seq, slot, treatment, model, level_index, level, repetition, start_ns, end_ns, status, message, completed)
			SELECT seq, slot, treatment, model, level_index, level, repetition, start_ns, end_ns, status, message, completed FROM run`)
	for name, open := range map[string]func(string) (*Store, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
		d := damageOf(t, path, open)
		if want := `slot 3 of treatment "wal" has 2 completed runs (runs 1, 2)`; len(d.Problems) != 1 || d.Problems[0] != want {
			t.Errorf("%s: problems %q, want [%q]", name, d.Problems, want)
		}
		t.Log(d)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var d *Damaged
	if err := s.AddEvent(Event{Kind: "resume", Time: t0}); !errors.As(err, &d) {
		t.Fatalf("writing a damaged store: %v; want the *Damaged error", err)
	}
}

// Values no measurement can give, put in by editing the file, make the
// store damaged, with what is wrong.
func TestImpossibleValuesAreDamage(t *testing.T) {
	for _, c := range []struct{ edit, want string }{
		{`UPDATE run SET completed = -5`, "run 1 has completed -5"},
		{`UPDATE run SET throughput = 9e999`, "run 1 has throughput +Inf"},
		{`UPDATE run SET throughput = -9e999`, "run 1 has throughput -Inf"},
		{`UPDATE run SET throughput = 'NaN'`, `run 1 has throughput "NaN"`},
		{`UPDATE run SET measure_secs = -1.5`, "run 1 has measure_secs -1.5"},
		{`UPDATE run SET end_ns = start_ns - 1`, "run 1 ends before it starts"},
		{`UPDATE interval SET count = -3 WHERE start_ns = (SELECT min(start_ns) FROM interval)`, "run 1's measure read interval at 2025-03-14 09:29:53.589 has count -3"},
		{`UPDATE interval SET start_ns = start_ns - 3600000000000 WHERE start_ns = (SELECT min(start_ns) FROM interval)`,
			"run 1's measure read interval at 2025-03-14 08:29:53.589 starts outside the run (2025-03-14 09:29:53.589 to 2025-03-14 09:29:56.589)"},
		{`UPDATE interval SET start_ns = start_ns + 60000000000 WHERE start_ns = (SELECT max(start_ns) FROM interval)`,
			"run 1's measure read interval at 2025-03-14 09:30:54.589 starts outside the run"},
	} {
		path := finishedStore(t)
		editFile(t, path, c.edit)
		d := damageOf(t, path, OpenReadOnly)
		if !strings.HasPrefix(d.Problems[0], c.want) {
			t.Errorf("after %s: problems %q, want the first starting %q", c.edit, d.Problems, c.want)
		}
		if msg := d.Error(); !strings.HasPrefix(msg, "results database "+path+" is damaged") || strings.Count(msg, "\n") != 0 {
			t.Errorf("message %q is not one sentence naming the file", msg)
		}
	}
}

// The store itself refuses values no measurement can give.
func TestWritesRefuseImpossibleValues(t *testing.T) {
	s := newStore(t)
	r := testRun(0)
	if _, err := s.StartRun(Run{Level: math.Inf(1)}); err == nil || !strings.Contains(err.Error(), "finite number >= 0") {
		t.Errorf("starting a run at level +Inf: %v", err)
	}
	id, err := s.StartRun(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		iv   Interval
		want string
	}{
		{Interval{Count: -1}, "count is -1; it cannot be negative"},
		{Interval{Duration: -time.Second}, "duration is -1000000000; it cannot be negative"},
		{Interval{Errors: 1, ErrorKinds: map[string]int64{"timeout": -1}}, "error count of timeout is -1"},
		{Interval{Start: r.Start.Add(-time.Second)}, "starts outside the run"},
	} {
		iv := c.iv
		iv.RunID, iv.Phase, iv.Op = id, "measure", "read"
		if iv.Start.IsZero() {
			iv.Start = r.Start
		}
		if err := s.AddIntervals([]Interval{iv}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("interval %+v: %v, want an error containing %q", c.iv, err, c.want)
		}
	}
	if err := s.AddIntervals([]Interval{{RunID: id, Phase: "measure", Op: "read", Start: r.Start.Add(time.Minute), Duration: time.Second}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sum  RunSummary
		end  time.Time
		want string
	}{
		{RunSummary{Completed: -5}, r.Start.Add(time.Hour), "completed is -5; counts cannot be negative"},
		{RunSummary{Throughput: math.Inf(1)}, r.Start.Add(time.Hour), "throughput is +Inf"},
		{RunSummary{Throughput: math.NaN()}, r.Start.Add(time.Hour), "throughput is NaN"},
		{RunSummary{}, r.Start.Add(-time.Second), "before its start or its last interval's start"},
		{RunSummary{}, r.Start.Add(30 * time.Second), "before its start or its last interval's start"},
	} {
		if err := s.FinishRun(id, StatusCompleted, "", c.end, c.sum); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("finishing with %+v at %s: %v, want an error containing %q", c.sum, c.end, err, c.want)
		}
	}
	if err := s.FinishRun(id, StatusCompleted, "", r.Start.Add(time.Hour), RunSummary{Completed: 5}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddIntervals([]Interval{{RunID: id, Phase: "drain", Op: "read", Start: r.Start.Add(2 * time.Hour), Duration: time.Second}}); err == nil || !strings.Contains(err.Error(), "starts outside the run") {
		t.Errorf("an interval after the run ended: %v", err)
	}
	if err := s.Check(); err != nil {
		t.Errorf("after the refused writes: %v", err)
	}
}

// A database deleted while it is written is noticed at the next write,
// which saves what was measured and says where.
func TestDeletedDatabaseNoticedAtNextWrite(t *testing.T) {
	s := newStore(t)
	id, err := s.StartRun(testRun(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(s.Path()); err != nil {
		t.Fatal(err)
	}
	err = s.AddEvent(Event{RunID: id, Kind: "phase", Detail: "measure"})
	prefix := "results database " + s.Path() + " was deleted or replaced during the run; everything measured up to now was saved to "
	if err == nil || !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("the write after the file was deleted: %v; want %q...", err, prefix)
	}
	t.Log(err)
	rescued := strings.SplitN(strings.TrimPrefix(err.Error(), prefix), ",", 2)[0]
	saved, err := OpenReadOnly(rescued)
	if err != nil {
		t.Fatal(err)
	}
	defer saved.Close()
	if runs, err := saved.Runs(); err != nil || len(runs) != 1 || runs[0].ID != id {
		t.Fatalf("the saved copy holds %d runs (%v); want the run written before the deletion", len(runs), err)
	}
	if err := s.AddEvent(Event{Kind: "again"}); err == nil || !strings.Contains(err.Error(), "was deleted or replaced") {
		t.Errorf("the write after that: %v", err)
	}
}

// A database moved while it is written is noticed at the next write, which
// says where it is now.
func TestMovedDatabaseNoticedAtNextWrite(t *testing.T) {
	s := newStore(t)
	if _, err := s.StartRun(testRun(0)); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(t.TempDir(), "elsewhere.db")
	if err := os.Rename(s.Path(), moved); err != nil {
		t.Fatal(err)
	}
	_, err := s.StartRun(testRun(1))
	want := "results database " + s.Path() + " was moved to " + moved + " during the run; the data measured so far is there"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("the write after the file was moved: %v; want %q...", err, want)
	}
}
