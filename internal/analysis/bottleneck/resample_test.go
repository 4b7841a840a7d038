package bottleneck

import (
	"strings"
	"testing"
	"time"
)

func TestResampleErrors(t *testing.T) {
	pts := []Series{{Resource: "x/cpu", Points: []Point{{Start: t0, Period: time.Second, Util: 1}}}}
	for _, c := range []struct {
		s      []Series
		w      Window
		lambda time.Duration
		want   string
	}{
		{pts, Window{To: t0}, time.Second, "the window has only one end"},
		{pts, Window{From: t0, To: t0}, time.Second, "is empty"},
		{pts, Window{From: t0, To: t0.Add(24 * 365 * time.Hour)}, time.Second, "holds more than 10000000 intervals"},
		{pts, Window{}, 0, "lambda 0s is not positive"},
		{[]Series{{Resource: "x/cpu", Points: []Point{{Start: t0, Util: 1}}}}, Window{From: t0, To: t0.Add(time.Second)}, time.Second, "has a point at 2026-03-01T12:00:00Z with period 0s"},
	} {
		if _, err := Resample(c.s, c.w, c.lambda); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("error %v, want %q", err, c.want)
		}
	}
}
