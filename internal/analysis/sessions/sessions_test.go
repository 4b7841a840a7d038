package sessions

import (
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/history/historytest"
)

// The counters match the generator's planted violations exactly, per
// level, on top of a grid of stale but session-consistent reads.
func TestAgainstGeneratedPlan(t *testing.T) {
	cfg := historytest.Config{Seed: 3, Keys: 4, Writes: 30, PeriodNS: 10e6, StepNS: 1e6,
		Levels: []string{"ONE", "QUORUM"}, MaxLag: map[string]int{"ONE": 8, "QUORUM": 0},
		WriteLevel: "QUORUM", Replica: map[string]string{"ONE": "db2", "QUORUM": "db1"},
		Plant: map[string]historytest.Plant{
			"ONE":    {MonotonicRead: 3, ReadYourWrites: 2, MonotonicWrite: 4},
			"QUORUM": {MonotonicRead: 0, ReadYourWrites: 1, MonotonicWrite: 0},
		}}
	plan := historytest.Generate(cfg, nil)
	res := Analyze(plan.Ops)
	if len(res.Levels) != 2 {
		t.Fatalf("levels %+v, want ONE and QUORUM", res.Levels)
	}
	for _, l := range res.Levels {
		want := Counts{Reads: plan.Reads[l.Level], WritePairs: plan.WritePairs[l.Level],
			MonotonicRead: plan.MonotonicRead[l.Level], ReadYourWrites: plan.ReadYourWrites[l.Level],
			MonotonicWrite: plan.MonotonicWrite[l.Level]}
		if l.Counts != want {
			t.Errorf("%s: %+v, want %+v", l.Level, l.Counts, want)
		}
	}
	one := res.Levels[0]
	if got, want := one.PerMillion(one.MonotonicRead), 7e6/float64(plan.Reads["ONE"]); got != want {
		t.Errorf("ONE monotonic-read rate %v per million, want %v", got, want)
	}
	var sum Counts
	for _, s := range res.Sessions {
		sum.add(s.Counts)
	}
	if sum != res.Total {
		t.Errorf("sessions add up to %+v, total is %+v", sum, res.Total)
	}
	if n := len(res.Examples); n != 5+3+4 || !res.Truncated {
		t.Errorf("%d examples (truncated %v), want 12 and truncated: 5 of 7 MR, 3 RYW, 4 MW", n, res.Truncated)
	}
}

func op(p int, kind, key string, v, inv int64, outcome, replica string) history.Op {
	return history.Op{Process: p, Kind: kind, Key: key, Value: v, InvokeNS: inv, CompleteNS: inv + 5, Outcome: outcome, Replica: replica}
}

// The edge cases of the definitions.
func TestEdgeCases(t *testing.T) {
	R, W := history.Read, history.Write
	ok, fail, info := history.OK, history.Fail, history.Info
	for _, c := range []struct {
		name string
		ops  []history.Op
		want Counts
	}{
		{"other sessions' older reads are no monotonic-read violation",
			[]history.Op{op(1, R, "a", 2, 10, ok, ""), op(2, R, "a", 1, 20, ok, "")},
			Counts{Reads: 2}},
		{"an older read of another key is none either",
			[]history.Op{op(1, R, "a", 2, 10, ok, ""), op(1, R, "b", 1, 20, ok, "")},
			Counts{Reads: 2}},
		{"each older read counts, against the newest seen",
			[]history.Op{op(1, R, "a", 3, 10, ok, ""), op(1, R, "a", 2, 20, ok, ""), op(1, R, "a", 1, 30, ok, "")},
			Counts{Reads: 3, MonotonicRead: 2}},
		{"a failed or unknown read neither counts nor raises the bar",
			[]history.Op{op(1, R, "a", 3, 10, fail, ""), op(1, R, "a", 3, 20, info, ""), op(1, R, "a", 1, 30, ok, "")},
			Counts{Reads: 1}},
		{"not found after a found read is a monotonic-read violation",
			[]history.Op{op(1, R, "a", 0, 10, ok, ""), op(1, R, "a", history.NoValue, 20, ok, "")},
			Counts{Reads: 2, MonotonicRead: 1}},
		{"reading older than one's own acknowledged write",
			[]history.Op{op(1, W, "a", 5, 10, ok, ""), op(1, R, "a", 4, 20, ok, ""), op(1, R, "a", 6, 30, ok, "")},
			Counts{Reads: 2, ReadYourWrites: 1}},
		{"a failed or unknown own write sets no expectation",
			[]history.Op{op(1, W, "a", 5, 10, fail, ""), op(1, R, "a", 4, 20, ok, ""), op(1, W, "a", 6, 30, info, ""), op(1, R, "a", 4, 40, ok, "")},
			Counts{Reads: 2}},
		{"the last acknowledged write counts, also when it is older",
			[]history.Op{op(1, W, "a", 5, 10, ok, ""), op(1, W, "a", 3, 20, ok, ""), op(1, R, "a", 4, 30, ok, "")},
			Counts{Reads: 1, WritePairs: 1}},
		{"a write pair seen reversed by one replica",
			[]history.Op{op(1, W, "a", 1, 10, ok, ""), op(1, W, "a", 2, 20, ok, ""),
				op(2, R, "a", 2, 30, ok, "r1"), op(3, R, "a", 1, 40, ok, "r1")},
			Counts{Reads: 2, WritePairs: 1, MonotonicWrite: 1}},
		{"two replicas each in order are no reversal",
			[]history.Op{op(1, W, "a", 1, 10, ok, ""), op(1, W, "a", 2, 20, ok, ""),
				op(2, R, "a", 2, 30, ok, "r1"), op(2, R, "a", 1, 40, ok, "r2")},
			Counts{Reads: 2, WritePairs: 1, MonotonicRead: 1}},
		{"overlapping reads are no reversal",
			[]history.Op{op(1, W, "a", 1, 10, ok, ""), op(1, W, "a", 2, 20, ok, ""),
				op(2, R, "a", 2, 30, ok, "r1"), op(3, R, "a", 1, 32, ok, "r1")},
			Counts{Reads: 2, WritePairs: 1}},
		{"without replica names the reading session is the observer",
			[]history.Op{op(1, W, "a", 1, 10, ok, ""), op(1, W, "a", 2, 20, ok, ""),
				op(2, R, "a", 2, 30, ok, ""), op(2, R, "a", 1, 40, ok, ""), op(3, R, "a", 1, 50, ok, "")},
			Counts{Reads: 3, WritePairs: 1, MonotonicWrite: 1, MonotonicRead: 1}},
		{"a failed write between breaks no pair",
			[]history.Op{op(1, W, "a", 1, 10, ok, ""), op(1, W, "a", 9, 15, fail, ""), op(1, W, "a", 2, 20, ok, ""),
				op(2, R, "a", 2, 30, ok, "r1"), op(2, R, "a", 1, 40, ok, "r1")},
			Counts{Reads: 2, WritePairs: 1, MonotonicWrite: 1, MonotonicRead: 1}},
	} {
		got := Analyze(c.ops).Total
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestExampleText(t *testing.T) {
	res := Analyze([]history.Op{op(1, history.Write, "a", 5, 10, history.OK, ""), op(1, history.Read, "a", history.NoValue, 20, history.OK, "")})
	if len(res.Examples) != 1 || !strings.Contains(res.Examples[0].Detail, "read not found after the same session's acknowledged write of 5") {
		t.Errorf("examples %+v", res.Examples)
	}
}
