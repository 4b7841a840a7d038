package page

import (
	"math"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/store"
)

// Beyond maxRepsDrawn repetitions a level's charts draw the first and the
// last, the lowest, highest and median mean throughput and the highest
// interval p99, each named with why it was drawn.
func TestDrawnRepsKeepTheExtremes(t *testing.T) {
	var rss []runSeries
	for rep := 1; rep <= 20; rep++ {
		// Throughput 100 + rep, except rep 7 (lowest, 50) and rep 13
		// (highest, 500); rep 4 has one interval at 90 ms.
		tput := 100 + float64(rep)
		switch rep {
		case 7:
			tput = 50
		case 13:
			tput = 500
		}
		p99 := []float64{1000, 1000, 1000}
		if rep == 4 {
			p99[1] = 90_000
		}
		rss = append(rss, runSeries{run: store.Run{Repetition: rep}, tput: []float64{tput, tput, math.NaN()}, maxP99: p99})
	}
	drawn, note := drawnReps(rss)
	var got []int
	for _, rs := range drawn {
		got = append(got, rs.run.Repetition)
	}
	// Sorted by mean: rep 7 (50), reps 1-6 (101-106), reps 8-12
	// (108-112), ...; the median of 20 is the 11th: rep 11.
	want := []int{1, 4, 7, 11, 13, 20}
	if len(got) != len(want) {
		t.Fatalf("drawn %v, want %v (%s)", got, want, note)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("drawn %v, want %v (%s)", got, want, note)
		}
	}
	for _, s := range []string{"6 of the level's 20 repetitions", "rep 1 (the first)", "rep 4 (the highest interval p99)", "rep 7 (the lowest mean throughput)",
		"rep 11 (the median throughput)", "rep 13 (the highest mean throughput)", "rep 20 (the last)"} {
		if !strings.Contains(note, s) {
			t.Errorf("note %q lacks %q", note, s)
		}
	}
	if d, n := drawnReps(rss[:maxRepsDrawn]); len(d) != maxRepsDrawn || n != "" {
		t.Errorf("%d repetitions: drawn %d, note %q; want all, no note", maxRepsDrawn, len(d), n)
	}
}
