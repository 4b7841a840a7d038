package slp

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
)

// campaign lays runs' measured windows one after another, 1 s intervals,
// with a 10 s gap (cool-down, reset, warm-up) between runs, as a
// campaign's SLP series is built from its runs. Each run is n seconds at
// 50% with the given spikes (start, length, value).
func campaign(runs ...[]float64) Series {
	var out Series
	at := t0
	for _, vals := range runs {
		for _, v := range vals {
			out = append(out, Point{Start: at, Period: time.Second, Value: v})
			at = at.Add(time.Second)
		}
		at = at.Add(10 * time.Second)
	}
	return out
}

func run(n int, spikes ...[3]int) []float64 {
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = 50
	}
	for _, s := range spikes {
		for i := s[0]; i < s[0]+s[1]; i++ {
			vals[i] = float64(s[2])
		}
	}
	return vals
}

// Three 60 s runs (the default measured window). The default MCPT, 60 s,
// is as long as a run, so it is shortened to half the longest span, 30 s.
// The expected answers follow from the layout alone.
func TestTransientRuleOnCampaignWindows(t *testing.T) {
	for _, c := range []struct {
		name    string
		s       Series
		longest time.Duration
		fires   bool
	}{
		// A 35 s event in the middle of run 2: it came and went.
		{"event mid-run", campaign(run(60), run(60, [3]int{20, 35, 99}), run(60)), 35 * time.Second, true},
		// 25 s is under the 30 s the rule asks for.
		{"short event", campaign(run(60), run(60, [3]int{20, 25, 99}), run(60)), 25 * time.Second, false},
		// An event that starts in run 2 and lasts to its end still began
		// inside the window.
		{"event to the end", campaign(run(60), run(60, [3]int{30, 30, 99})), 30 * time.Second, true},
		// A run saturated from its first interval to its last is the
		// load level, not an event (the old rule fired on exactly this).
		{"whole run saturated", campaign(run(60), run(60, [3]int{0, 60, 99}), run(60)), 0, false},
		// 20 s at the end of run 1 and 20 s at the start of run 2 are two
		// periods: continuity stops at the gap between runs.
		{"across runs", campaign(run(60, [3]int{40, 20, 99}), run(60, [3]int{0, 20, 99})), 20 * time.Second, false},
	} {
		tr, err := TransientEvent(c.s, Rules{})
		if err != nil {
			t.Fatal(err)
		}
		if !tr.Judgeable || !tr.Shortened || tr.Need != 30*time.Second || tr.Span != time.Minute || tr.Longest != c.longest || tr.Fires != c.fires || tr.Note != "" {
			t.Errorf("%s: %+v, want longest %v fires %v", c.name, tr, c.longest, c.fires)
		}
	}

	// Through Recommend: the mid-run event is a transient finding (TCPT
	// 35/180 = 19.4% < 50%), the saturated run none.
	got, err := Recommend([]Subject{
		{"db1", "volume:v1", esl.OpsPerS, campaign(run(60), run(60, [3]int{20, 35, 99}), run(60))},
		{"db2", "volume:v2", esl.OpsPerS, campaign(run(60), run(60, [3]int{0, 60, 99}), run(60))},
	}, Rules{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Host != "db1" || got[0].Class != TransientSaturation ||
		!strings.Contains(got[0].Message, "SLP stayed above 95% for 35 s in a row (MCPT, 19.4% of 180 s)") {
		for _, f := range got {
			t.Log(f.Host, f.Class, f.Message)
		}
		t.Fatalf("%d findings, want db1's transient one only", len(got))
	}
}

// Adjacent intervals join when their timestamps jitter by a few
// milliseconds (under 1% of the period), and monitoring intervals of 2 s
// count with their own length.
func TestTransientContinuityAcrossIntervals(t *testing.T) {
	var s Series
	at := t0
	for i := 0; i < 30; i++ {
		v := 50.0
		if i >= 10 && i < 20 {
			v = 99 // 10 intervals of 2 s: a 20 s event
		}
		s = append(s, Point{Start: at.Add(time.Duration(i%3) * 5 * time.Millisecond), Period: 2 * time.Second, Value: v})
		at = at.Add(2 * time.Second)
	}
	tr, err := TransientEvent(s, Rules{TransientMCPT: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Judgeable || tr.Shortened || tr.Longest != 20*time.Second || tr.Need != 20*time.Second || !tr.Fires || tr.Note != "" {
		t.Errorf("jittered 2 s intervals: %+v", tr)
	}
}

// When the spans cannot hold an event, the rule says so instead of
// staying silent.
func TestTransientTooShortToJudge(t *testing.T) {
	tr, err := TransientEvent(campaign(run(3, [3]int{1, 1, 99}), run(3)), Rules{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Judgeable || tr.Fires || !strings.Contains(tr.Note, "too short to judge a transient event: the longest continuous span holds 3 interval(s) (3 s); the rule needs at least 4") {
		t.Errorf("3 s runs: %+v", tr)
	}
	// An MCPT set explicitly is kept: 60 s cannot fit in 60 s windows
	// with a begin or an end.
	tr, err = TransientEvent(campaign(run(60, [3]int{0, 60, 99}), run(60)), Rules{TransientMCPT: time.Minute, TransientFixed: true})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Judgeable || tr.Need != time.Minute || !strings.Contains(tr.Note, "the longest continuous span is 60 s, not longer than the 60 s above 95% the rule asks for") {
		t.Errorf("fixed 60 s: %+v", tr)
	}
}

func TestTransientText(t *testing.T) {
	if got, want := (Rules{}).TransientText(), "SLP > 95% for 60 s in a row (or for half a run's measured window when the runs are shorter than twice that), beginning or ending inside a run"; got != want {
		t.Errorf("default rule %q, want %q", got, want)
	}
	if got, want := (Rules{TransientMCPT: 2 * time.Minute, TransientFixed: true}).TransientText(), "SLP > 95% for 120 s in a row, beginning or ending inside a run"; got != want {
		t.Errorf("fixed rule %q, want %q", got, want)
	}
}
