package store

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

func TestSamplesRoundTrip(t *testing.T) {
	s, err := Create(filepath.Join(t.TempDir(), "r.db"), Campaign{Name: "x", SpecYAML: "name: x", CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id, err := s.StartRun(Run{Model: "open", Level: 1, Repetition: 1, Start: time.Now(), Status: StatusRunning})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_800_000_000, 0).UTC()
	in := []monitor.Sample{
		{Host: "h", Resource: "cpu", Metric: monitor.CPUUtilPct, Start: t0, Period: time.Second, Value: 42.5, Source: monitor.SourceSampled},
		{Host: "h", Resource: "cpu", Metric: monitor.CPUUtilPct, Start: t0.Add(time.Second), Period: time.Second, Value: 50, Source: monitor.SourceSampled},
		{Host: "h", Resource: "disk:vda", Metric: monitor.DiskWriteOps, Start: t0, Period: time.Second, Value: math.NaN(), Source: monitor.SourceSampled},
	}
	if err := s.AddSamples(id, in); err != nil {
		t.Fatal(err)
	}
	imported := []monitor.Sample{{Host: "i-1", Resource: "volume:vol-1", Metric: monitor.DiskReadOps, Start: t0, Period: time.Minute, Value: 10, Source: monitor.SourceCloudWatch}}
	if err := s.AddSamples(0, imported); err != nil {
		t.Fatal(err)
	}
	got, err := s.Samples(SampleFilter{RunID: id})
	if err != nil || len(got) != 2 {
		t.Fatalf("run samples: %d, %v (the NaN value must be skipped)", len(got), err)
	}
	if got[1] != in[1] {
		t.Fatalf("round trip: %+v != %+v", got[1], in[1])
	}
	got, _ = s.Samples(SampleFilter{RunID: 0})
	if len(got) != 1 || got[0] != imported[0] {
		t.Fatalf("campaign samples: %+v", got)
	}
	got, _ = s.Samples(SampleFilter{RunID: -1, Source: monitor.SourceCloudWatch})
	if len(got) != 1 || got[0].Period != time.Minute {
		t.Fatalf("by source: %+v", got)
	}
	got, _ = s.Samples(SampleFilter{RunID: -1, From: t0.Add(time.Second)})
	if len(got) != 1 || got[0].Value != 50 {
		t.Fatalf("from window: %+v", got)
	}
	if err := s.AddSamples(id, []monitor.Sample{{Host: "h", Value: 1}}); err == nil {
		t.Fatal("a sample without resource, metric and source must be refused")
	}
}

// A run's samples are read in index order: no read of them sorts all the
// run's samples in a temporary B-tree (a report reads each run's samples
// several times, and a day-long run holds hundreds of thousands).
func TestRunSamplesNeedNoSort(t *testing.T) {
	s := newStore(t)
	for _, f := range []SampleFilter{
		{RunID: 1},
		{RunID: 1, From: t0, To: t0.Add(time.Minute)},
		{RunID: 1, Resource: "cpu", Metric: "util_pct"},
		{RunID: 1, Host: "h", Resource: "cpu"},
	} {
		q, args := sampleQuery(f)
		rows, err := s.db.Query("EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notUsed int
			var detail string
			if err := rows.Scan(&id, &parent, &notUsed, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		// "FOR LAST TERM OF ORDER BY" (a filter without the host) sorts
		// only each host's run of rows.
		if p := strings.Join(plan, "; "); strings.Contains(p, "TEMP B-TREE FOR ORDER BY") || !strings.Contains(p, "sample_run_series") {
			t.Errorf("%+v: plan %q; want the sample_run_series index and no sort of the whole run", f, p)
		}
	}
}
