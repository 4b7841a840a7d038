package store

import (
	"math"
	"path/filepath"
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
