package spec

import (
	"strings"
	"testing"
	"time"
)

const consistencyBase = "name: t\ntarget: {type: fake}\nload: {model: closed, clients: [1]}\nphases: {warmup: 0s, measure: 10s}\n"

// Left out, every field takes seed 002's setup; only needs no YCSB mix.
func TestConsistencyDefaults(t *testing.T) {
	s, err := Parse("t.yaml", []byte(consistencyBase+"workload:\n  consistency: {with: only}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Workload.ConsistencyOnly() {
		t.Fatal("with: only did not make the workload consistency-only")
	}
	got := s.Workload.Consistency.Filled()
	want := Consistency{Writers: 1, WriteInterval: Duration{10 * time.Second}, Readers: 12, ReadInterval: Duration{time.Millisecond}, Keys: 10, With: ConsistencyOnly}
	if got.Writers != want.Writers || got.WriteInterval != want.WriteInterval || got.Readers != want.Readers ||
		got.ReadInterval != want.ReadInterval || got.Keys != want.Keys || got.With != want.With || got.ReadLevels != nil {
		t.Errorf("defaults = %+v, want %+v", got, want)
	}
	s, err = Parse("t.yaml", []byte(consistencyBase+"workload:\n  ycsb: b\n  consistency: {readers: 3, read_levels: [ONE, QUORUM]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Workload.ConsistencyOnly() || s.Workload.Consistency.Filled().With != ConsistencyBeside {
		t.Error("the default is not beside the YCSB mix")
	}
}

// Each bad value gets one error at its own field.
func TestConsistencyBounds(t *testing.T) {
	for _, c := range []struct{ body, path, says string }{
		{"{writers: 0}", "writers", "1 or more"},
		{"{readers: 1001}", "readers", "1000 allowed"},
		{"{keys: 0}", "keys", "1 or more"},
		{"{writers: 3, keys: 2}", "keys", "at least as many keys as writers"},
		{"{read_interval: 10us}", "read_interval", "100µs"},
		{"{write_interval: 25h}", "write_interval", "24h allowed"},
		{"{readers: 1000, read_interval: 1ms}", "readers", "more than the 200000 allowed"},
		{"{read_levels: [ONE, ONE]}", "read_levels[1]", "already read_levels[0]"},
		{"{with: onyl}", "with", `did you mean "only"`},
	} {
		lines := parseErrors(t, consistencyBase+"workload:\n  ycsb: a\n  consistency: "+c.body+"\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "workload.consistency."+c.path+": ") || !strings.Contains(lines[0], c.says) {
			t.Errorf("%s: %q, want one error at %s saying %q", c.body, lines, c.path, c.says)
		}
	}
	// Beside the YCSB mix, the mix is still required.
	lines := parseErrors(t, consistencyBase+"workload:\n  consistency: {readers: 2}\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "needs a YCSB preset") {
		t.Errorf("beside without a mix: %q", lines)
	}
}
