package store

import (
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

var t0 = time.Date(2025, 3, 14, 9, 26, 53, 589793238, time.UTC)

func testCampaign() Campaign {
	return Campaign{
		Name:        "quickstart",
		SpecFile:    "specs/quick.yaml",
		SpecYAML:    "name: quickstart\nload:\n  levels: [100, 200]\n# a > b & c\n",
		Seed:        -42,
		HostJSON:    `{"hostname":"lab1","cpus":8}`,
		ToolVersion: "headroom v0.1.0",
		CreatedAt:   t0,
	}
}

func newStore(t testing.TB) *Store {
	t.Helper()
	s, err := Create(filepath.Join(t.TempDir(), "results.db"), testCampaign())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// hist records n latencies drawn from a seeded long-tailed distribution.
func hist(t testing.TB, seed int64, n int) *hdrhistogram.Histogram {
	t.Helper()
	h := NewHistogram()
	r := rand.New(rand.NewSource(seed))
	for range n {
		if err := h.RecordValue(int64(100 + r.ExpFloat64()*500)); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func testRun(slot int) Run {
	return Run{Seq: slot, Slot: slot, Treatment: "wal", Model: "open", LevelIndex: slot % 3,
		Level: 1000.5 * float64(slot+1), Repetition: 1 + slot/3, Start: t0.Add(time.Duration(slot) * time.Minute)}
}

func TestRoundTrip(t *testing.T) {
	s := newStore(t)
	got, err := s.Campaign()
	if err != nil {
		t.Fatal(err)
	}
	if want := testCampaign(); got != want {
		t.Errorf("campaign:\n got %+v\nwant %+v", got, want)
	}

	id, err := s.StartRun(testRun(4))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != StatusRunning || !runs[0].End.IsZero() || runs[0].Summary != (RunSummary{}) {
		t.Fatalf("running run = %+v", runs)
	}

	var ivs []Interval
	for i := range 3 {
		start := t0.Add(4*time.Minute + time.Duration(i)*time.Second)
		phase := "warmup"
		if i > 0 {
			phase = "measure"
		}
		for j, op := range []string{"update", "read"} {
			h := hist(t, int64(10*i+j), 1000+i)
			iv := Interval{RunID: id, Phase: phase, Op: op, Start: start, Duration: time.Second,
				Count: h.TotalCount(), Errors: int64(i), Late: 7, Dropped: 1, Hist: h}
			if i > 0 {
				iv.ErrorKinds = map[string]int64{"timeout": int64(i - 1), "refused": 1}
				iv.Errors = int64(i)
			}
			ivs = append(ivs, iv)
		}
	}
	// An interval with no successful request: percentiles must be NULL.
	ivs = append(ivs, Interval{RunID: id, Phase: "drain", Op: "read", Start: t0.Add(5 * time.Minute),
		Duration: 500 * time.Millisecond, Errors: 2, ErrorKinds: map[string]int64{"timeout": 2}})
	if err := s.AddIntervals(ivs[:4]); err != nil {
		t.Fatal(err)
	}
	if err := s.AddIntervals(ivs[4:]); err != nil {
		t.Fatal(err)
	}

	end := t0.Add(6 * time.Minute)
	sum := RunSummary{Sent: 5000, Completed: 4990, Errors: 3, Late: 21, Dropped: 3, Unfinished: 2,
		MeasureSecs: 2.0, Throughput: 2495, ClientCPU: 37.5, ClientLimited: true, ClientNote: "CPU bound"}
	if err := s.FinishRun(id, StatusCompleted, "", end, sum); err != nil {
		t.Fatal(err)
	}
	runs, err = s.Runs()
	if err != nil {
		t.Fatal(err)
	}
	want := testRun(4)
	want.ID, want.Status, want.End, want.Summary = id, StatusCompleted, end, sum
	if len(runs) != 1 || runs[0] != want {
		t.Fatalf("runs:\n got %+v\nwant %+v", runs, want)
	}

	all, err := s.Intervals(id, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(ivs) {
		t.Fatalf("got %d intervals, want %d", len(all), len(ivs))
	}
	// Ordered by start, then op: read before update within a second.
	for i, g := range all {
		w := ivs[len(ivs)-1] // the drain interval, alone at its start
		if i < len(ivs)-1 {
			w = ivs[i^1] // ivs holds update, read per start
		}
		if g.Phase != w.Phase || g.Op != w.Op || !g.Start.Equal(w.Start) || g.Start.Location() != time.UTC ||
			g.Duration != w.Duration || g.Count != w.Count || g.Errors != w.Errors || g.Late != w.Late || g.Dropped != w.Dropped {
			t.Errorf("interval %d: got %+v, want %+v", i, g, w)
		}
		if fmt.Sprint(g.ErrorKinds) != fmt.Sprint(w.ErrorKinds) {
			t.Errorf("interval %d error kinds: got %v, want %v", i, g.ErrorKinds, w.ErrorKinds)
		}
		wh := w.Hist
		if wh == nil {
			wh = NewHistogram()
		}
		if !g.Hist.Equals(wh) {
			t.Errorf("interval %d: decoded histogram differs", i)
		}
		for _, q := range []float64{50, 99, 99.9, 100} {
			if a, b := g.Hist.ValueAtQuantile(q), wh.ValueAtQuantile(q); a != b {
				t.Errorf("interval %d p%v: got %d, want %d", i, q, a, b)
			}
		}
		if g.Hist.LowestTrackableValue() != HistLowestMicros || g.Hist.HighestTrackableValue() != HistHighestMicros ||
			g.Hist.SignificantFigures() != HistSigFigs {
			t.Errorf("interval %d: decoded histogram has other bounds", i)
		}
	}
	// EachInterval walks the same intervals in the same order, one
	// decoded at a time into one histogram.
	i := 0
	err = s.EachInterval(id, "", func(g *Interval) error {
		w := all[i]
		if g.Phase != w.Phase || g.Op != w.Op || !g.Start.Equal(w.Start) || g.Duration != w.Duration || g.Count != w.Count ||
			g.Errors != w.Errors || g.Late != w.Late || g.Dropped != w.Dropped || fmt.Sprint(g.ErrorKinds) != fmt.Sprint(w.ErrorKinds) ||
			!g.Hist.Equals(w.Hist) {
			t.Errorf("EachInterval %d: got %+v, want %+v", i, *g, w)
		}
		i++
		return nil
	})
	if err != nil || i != len(all) {
		t.Fatalf("EachInterval walked %d of %d intervals: %v", i, len(all), err)
	}
	stop := errors.New("stop")
	if err := s.EachInterval(id, "measure", func(*Interval) error { return stop }); err != stop {
		t.Errorf("an error from fn: EachInterval returned %v", err)
	}
	measure, err := s.Intervals(id, "measure")
	if err != nil {
		t.Fatal(err)
	}
	if len(measure) != 4 {
		t.Errorf("measure phase: got %d intervals, want 4", len(measure))
	}

	// The SQL summary columns match the histogram.
	var p50, p99, p999, max sql.NullInt64
	var mean sql.NullFloat64
	q := `SELECT mean_us, p50_us, p99_us, p999_us, max_us FROM interval WHERE run_id = ? AND phase = ? AND op = ? AND start_ns = ?`
	if err := s.db.QueryRow(q, id, "measure", "read", ivs[3].Start.UnixNano()).Scan(&mean, &p50, &p99, &p999, &max); err != nil {
		t.Fatal(err)
	}
	h := ivs[3].Hist
	if mean.Float64 != h.Mean() || p50.Int64 != h.ValueAtQuantile(50) || p99.Int64 != h.ValueAtQuantile(99) ||
		p999.Int64 != h.ValueAtQuantile(99.9) || max.Int64 != h.Max() {
		t.Errorf("summary columns %v %v %v %v %v do not match the histogram", mean, p50, p99, p999, max)
	}
	if err := s.db.QueryRow(q, id, "drain", "read", ivs[6].Start.UnixNano()).Scan(&mean, &p50, &p99, &p999, &max); err != nil {
		t.Fatal(err)
	}
	if mean.Valid || p50.Valid || p99.Valid || p999.Valid || max.Valid {
		t.Errorf("empty interval: summary columns should be NULL, got %v %v %v %v %v", mean, p50, p99, p999, max)
	}

	evs := []Event{
		{RunID: 0, Time: t0, Kind: "populate", Detail: `{"records":1000}`},
		{RunID: id, Time: t0.Add(4 * time.Minute), Kind: "phase", Detail: "warmup"},
		{RunID: id, Time: t0.Add(4*time.Minute + time.Second), Kind: "phase", Detail: "measure"},
	}
	for _, e := range []Event{evs[2], evs[0], evs[1]} { // stored out of order, read in time order
		if err := s.AddEvent(e); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		run  int64
		want []Event
	}{{-1, evs}, {0, evs[:1]}, {id, evs[1:]}, {id + 1, nil}} {
		got, err := s.Events(c.run)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("Events(%d):\n got %v\nwant %v", c.run, got, c.want)
		}
	}
}

func TestCreateSettings(t *testing.T) {
	s := newStore(t)
	var mode string
	if err := s.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	var sync, fk int
	if err := s.db.QueryRow(`PRAGMA synchronous`).Scan(&sync); err != nil || sync != 1 {
		t.Errorf("synchronous = %d, %v; want 1 (NORMAL)", sync, err)
	}
	if err := s.db.QueryRow(`PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys = %d, %v; want 1", fk, err)
	}
	_, err := Create(s.Path(), testCampaign())
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("Create over an existing file: %v", err)
	}
	// A zero CreatedAt means now.
	c := testCampaign()
	c.CreatedAt = time.Time{}
	s2, err := Create(filepath.Join(t.TempDir(), "now.db"), c)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.Campaign()
	if err != nil || time.Since(got.CreatedAt) > time.Minute || got.CreatedAt.Location() != time.UTC {
		t.Errorf("created at %v, %v; want now in UTC", got.CreatedAt, err)
	}
}

func TestCreateInMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing-dir", "results.db")
	if _, err := Create(path, testCampaign()); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Create in a missing directory: %v", err)
	}
}

func TestPathWithURICharacters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a?b#c%d.db")
	s, err := Create(path, testCampaign())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("file not at the given path: %v", err)
	}
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

func TestWriteValidation(t *testing.T) {
	s := newStore(t)
	id, err := s.StartRun(testRun(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(id, StatusRunning, "", t0, RunSummary{}); err == nil {
		t.Error("FinishRun accepted status running")
	}
	if err := s.FinishRun(id+100, StatusCompleted, "", t0, RunSummary{}); err == nil || !strings.Contains(err.Error(), "no such run") {
		t.Errorf("FinishRun of a missing run: %v", err)
	}
	iv := Interval{RunID: id + 100, Phase: "measure", Op: "read", Start: t0, Duration: time.Second}
	if err := s.AddIntervals([]Interval{iv}); err == nil {
		t.Error("AddIntervals accepted an interval of a missing run")
	}
	iv.RunID = id
	ok := iv
	ok.Start = t0.Add(time.Second)
	// A failing batch writes nothing: the duplicate makes the whole batch fail.
	if err := s.AddIntervals([]Interval{ok, iv, iv}); err == nil {
		t.Error("AddIntervals accepted a duplicate interval")
	}
	if got, err := s.Intervals(id, ""); err != nil || len(got) != 0 {
		t.Errorf("after a failed batch: %d intervals, %v; want 0", len(got), err)
	}
	iv.Op = ""
	if err := s.AddIntervals([]Interval{iv}); err == nil {
		t.Error("AddIntervals accepted an interval without op")
	}
}

func TestCompletedSlots(t *testing.T) {
	s := newStore(t)
	finish := func(slot int, status string) {
		t.Helper()
		id, err := s.StartRun(testRun(slot))
		if err != nil {
			t.Fatal(err)
		}
		if status != StatusRunning {
			if err := s.FinishRun(id, status, "because", t0.Add(time.Hour), RunSummary{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	finish(0, StatusCompleted)
	finish(1, StatusInterrupted)
	finish(1, StatusCompleted) // resumed
	finish(2, StatusFailed)
	finish(3, StatusRunning)
	finish(4, StatusInterrupted)
	finish(5, StatusCompleted)
	finish(5, StatusFailed) // a later failed attempt does not undo a completed one
	got, err := s.CompletedSlots()
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int]bool{0: true, 1: true, 5: true}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("CompletedSlots = %v, want %v", got, want)
	}
	runs, err := s.Runs()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range runs {
		if r.ID != int64(i+1) {
			t.Errorf("runs not in ID order: %d at %d", r.ID, i)
		}
	}
}

func TestMarkRunningInterrupted(t *testing.T) {
	s := newStore(t)
	done, _ := s.StartRun(testRun(0))
	if err := s.FinishRun(done, StatusCompleted, "", t0.Add(time.Minute), RunSummary{Sent: 9}); err != nil {
		t.Fatal(err)
	}
	withIntervals, _ := s.StartRun(testRun(1))
	bare, _ := s.StartRun(testRun(2))
	start := testRun(1).Start
	if err := s.AddIntervals([]Interval{
		{RunID: withIntervals, Phase: "measure", Op: "read", Start: start, Duration: time.Second, Hist: hist(t, 1, 10)},
		{RunID: withIntervals, Phase: "measure", Op: "read", Start: start.Add(time.Second), Duration: 2 * time.Second, Hist: hist(t, 2, 10)},
	}); err != nil {
		t.Fatal(err)
	}
	n, err := s.MarkRunningInterrupted("process died")
	if err != nil || n != 2 {
		t.Fatalf("MarkRunningInterrupted = %d, %v; want 2", n, err)
	}
	runs, _ := s.Runs()
	if r := runs[0]; r.Status != StatusCompleted || r.Summary.Sent != 9 {
		t.Errorf("completed run changed: %+v", r)
	}
	if r := runs[1]; r.Status != StatusInterrupted || r.Message != "process died" || !r.End.Equal(start.Add(3*time.Second)) {
		t.Errorf("run with intervals: %+v; want interrupted ending at its last interval's end", r)
	}
	if r := runs[2]; r.Status != StatusInterrupted || !r.End.Equal(r.Start) || r.ID != bare {
		t.Errorf("run without intervals: %+v; want interrupted ending at its start", r)
	}
	if n, err := s.MarkRunningInterrupted("again"); err != nil || n != 0 {
		t.Errorf("second MarkRunningInterrupted = %d, %v; want 0", n, err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte(strings.Repeat("not a database\n", 100)), 0o644)
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o644)
	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE meta (key TEXT, value TEXT); INSERT INTO meta VALUES ('format', 'something-else')`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	newer := newStore(t)
	if _, err := newer.db.Exec(`UPDATE meta SET value = '2' WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	newer.Close()

	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.db"), "missing.db does not exist"},
		{dir, "is a directory, not a Headroom results database"},
		{text, "notes.txt is not a Headroom results database (not an SQLite file)"},
		{empty, "empty.db is not a Headroom results database"},
		{other, "other.db is not a Headroom results database"},
		{newer.Path(), "written by a newer Headroom (results schema version 2; this build reads up to version 1)"},
	} {
		s, err := Open(c.path)
		if err == nil {
			s.Close()
			t.Errorf("Open(%s) succeeded", c.path)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("Open(%s) = %q; want one line containing %q", c.path, err, c.want)
		}
		t.Log(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
		t.Error("Open created the missing file")
	}
	if b, _ := os.ReadFile(text); !strings.HasPrefix(string(b), "not a database") {
		t.Error("Open changed a non-database file")
	}
}

// TestConcurrentReader checks that a second Open reads while the first
// writes intervals (WAL): no SQLITE_BUSY, and every read sees whole batches.
func TestConcurrentReader(t *testing.T) {
	w := newStore(t)
	id, err := w.StartRun(testRun(0))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ops := []string{"read", "update", "insert", "scan", "rmw"}
	const batches = 60
	h := hist(t, 1, 500)
	errc := make(chan error, 1)
	go func() {
		for i := range batches {
			var ivs []Interval
			for _, op := range ops {
				ivs = append(ivs, Interval{RunID: id, Phase: "measure", Op: op, Start: t0.Add(time.Duration(i) * time.Second),
					Duration: time.Second, Count: h.TotalCount(), Hist: h})
			}
			if err := w.AddIntervals(ivs); err != nil {
				errc <- err
				return
			}
			time.Sleep(time.Millisecond)
		}
		errc <- nil
	}()
	reads, last := 0, 0
	for done := false; !done; {
		select {
		case err := <-errc:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		default:
		}
		got, err := r.Intervals(id, "measure")
		if err != nil {
			t.Fatalf("concurrent read: %v", err)
		}
		if len(got)%len(ops) != 0 || len(got) < last {
			t.Fatalf("reader saw %d intervals after %d; want whole batches, never fewer", len(got), last)
		}
		last = len(got)
		reads++
	}
	if last != batches*len(ops) {
		t.Errorf("reader saw %d intervals at the end, want %d", last, batches*len(ops))
	}
	t.Logf("%d concurrent reads", reads)
}

// TestDiskFull fills the database (max_page_count makes SQLite report
// SQLITE_FULL exactly as a full disk does) and checks for a clear error, no
// panic, and intact earlier data.
func TestDiskFull(t *testing.T) {
	s := newStore(t)
	id, _ := s.StartRun(testRun(0))
	var pages int
	if err := s.db.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(fmt.Sprintf(`PRAGMA max_page_count = %d`, pages+2)); err != nil {
		t.Fatal(err)
	}
	var err error
	written := 0
	for i := 0; i < 1000 && err == nil; i++ {
		iv := Interval{RunID: id, Phase: "measure", Op: "read", Start: t0.Add(time.Duration(i) * time.Second),
			Duration: time.Second, Hist: hist(t, int64(i), 2000)}
		if err = s.AddIntervals([]Interval{iv}); err == nil {
			written++
		}
	}
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), s.Path()) {
		t.Fatalf("filling the database: %v; want a disk full error naming the file", err)
	}
	t.Log(err)
	got, err := s.Intervals(id, "")
	if err != nil || len(got) != written {
		t.Errorf("after disk full: %d intervals, %v; want the %d written before", len(got), err, written)
	}
}

func TestNewHistogram(t *testing.T) {
	h := NewHistogram()
	if h.LowestTrackableValue() != 1 || h.HighestTrackableValue() != 60_000_000 || h.SignificantFigures() != 3 {
		t.Errorf("bounds %d..%d, %d digits", h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures())
	}
	if err := h.RecordValue(60_000_000); err != nil {
		t.Errorf("60 s not recordable: %v", err)
	}
}

func BenchmarkAddIntervals(b *testing.B) {
	s := newStore(b)
	id, err := s.StartRun(testRun(0))
	if err != nil {
		b.Fatal(err)
	}
	ops := []string{"read", "update", "insert", "scan", "rmw"}
	hs := make([]*hdrhistogram.Histogram, len(ops))
	for i := range hs {
		hs[i] = hist(b, int64(i), 10_000)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		ivs := make([]Interval, len(ops))
		for j, op := range ops {
			ivs[j] = Interval{RunID: id, Phase: "measure", Op: op, Start: t0.Add(time.Duration(i) * time.Second),
				Duration: time.Second, Count: 10_000, Errors: 1, ErrorKinds: map[string]int64{"timeout": 1}, Hist: hs[j]}
		}
		if err := s.AddIntervals(ivs); err != nil {
			b.Fatal(err)
		}
	}
}
