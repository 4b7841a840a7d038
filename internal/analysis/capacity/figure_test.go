package capacity

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
)

// The capacity figure is the highest throughput among the levels that meet
// the SLO and that the client did not limit. Latencies are exponential
// with a mean of 1 ms at 100-300 req/s (P(R > 10 ms) = e^-10, every level
// passes p99 <= 10 ms) and 50 ms at 400 req/s (P(R > 10 ms) = e^-0.2 =
// 82%: fails). The 300 req/s level was client-limited in one of its runs.
// So: the 400 req/s level fails the SLO and the 300 req/s level is the
// client's; the capacity is the 200 req/s level's 200 ok/s.
func TestCapacityMeetsSLOAndIsFreeOfClientLimits(t *testing.T) {
	c := newCampaign(t, 3)
	for i, x := range []float64{100, 200, 300, 400} {
		for rep := 1; rep <= 2; rep++ {
			mean := 0.001
			if x == 400 {
				mean = 0.05
			}
			c.add(run{model: "open", levelIndex: i, level: x, rep: rep, throughput: x, meanLatency: mean, cpu: x / 5,
				clientLimited: x == 300 && rep == 2})
		}
	}
	slo := &levels.SLO{Percentile: 99, Threshold: 10 * time.Millisecond}
	cv := c.analyze(Config{}, slo)[0]
	if cv.FirstFail != 3 || cv.LastPass != 2 {
		t.Fatalf("first fail %d, last pass %d; want 3 and 2", cv.FirstFail, cv.LastPass)
	}
	if cv.MaxIndex != 1 || math.Abs(cv.MaxThroughput-200) > 1 || cv.NoCapacity != "" {
		t.Fatalf("capacity %v at level %d (%q); want 200 ok/s at the 200 req/s level (1)", cv.MaxThroughput, cv.MaxIndex, cv.NoCapacity)
	}
	for _, i := range cv.ClientLimited {
		if i == cv.MaxIndex {
			t.Fatalf("level %d is both client-limited and the capacity", i)
		}
	}

	// Without an SLO the 400 req/s level counts: capacity 400.
	cv = c.analyze(Config{}, nil)[0]
	if cv.MaxIndex != 3 || math.Abs(cv.MaxThroughput-400) > 1 {
		t.Fatalf("without an SLO: capacity %v at level %d, want 400 at level 3", cv.MaxThroughput, cv.MaxIndex)
	}

	// An SLO no level meets: no capacity, and the reason says so.
	cv = c.analyze(Config{}, &levels.SLO{Percentile: 99, Threshold: 10 * time.Microsecond})[0]
	if cv.MaxIndex != -1 || !math.IsNaN(cv.MaxThroughput) || !strings.Contains(cv.NoCapacity, "no level meets the SLO") {
		t.Fatalf("impossible SLO: capacity %v at %d (%q)", cv.MaxThroughput, cv.MaxIndex, cv.NoCapacity)
	}
}
