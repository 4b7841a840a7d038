package campaign

import (
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/controller/sensor"
)

// The recorded throughput is taken over the window the sensor judged,
// which restarts at the last action when a cool-down is configured.
func TestAnsweredOverTheJudgedWindow(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	var secs []sensor.Second
	for i := 0; i < 10; i++ {
		h := hdrhistogram.New(1, 3_600_000_000, 3)
		for j := 0; j <= i; j++ { // second i answers i+1 requests
			_ = h.RecordValue(1000)
		}
		secs = append(secs, sensor.Second{Start: t0.Add(time.Duration(i) * time.Second), Hist: h})
	}
	now := t0.Add(10 * time.Second)
	// Seconds 5..9 answer 6+7+8+9+10 = 40 requests in 5 s.
	if got := answered(secs, now.Add(-5*time.Second), now, time.Second); got != 8 {
		t.Errorf("5 s window: %v req/s, want 8", got)
	}
	// Restarted at 8 s: 9+10 = 19 requests in 2 s.
	if got := answered(secs, t0.Add(8*time.Second), now, time.Second); got != 9.5 {
		t.Errorf("since 8 s: %v req/s, want 9.5", got)
	}
	if got := answered(secs, now, now, time.Second); got != 0 {
		t.Errorf("an empty window: %v req/s, want 0", got)
	}
	// The last two seconds not handed over yet: seconds 5..7 answer
	// 6+7+8 = 21 requests in 3 s, not in 5.
	if got := answered(secs[:8], now.Add(-5*time.Second), now, time.Second); got != 7 {
		t.Errorf("two seconds still to come: %v req/s, want 7", got)
	}
}
