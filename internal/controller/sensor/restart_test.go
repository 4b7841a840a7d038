package sensor

import (
	"testing"
	"time"
)

// A violation entirely before the last action is not seen after it: 10
// seconds of slow responses, the action at 10 s, then 5 fast seconds.
func TestReadSinceSkipsSecondsBeforeTheAction(t *testing.T) {
	c := Default()
	t0 := time.Unix(1_000_000, 0)
	secs := append(seconds(t, t0, 10, 0, 0, 10, 0), seconds(t, t0.Add(10*time.Second), 5, 10, 0, 0, 0)...)
	now := t0.Add(15 * time.Second)
	// The 30 s window sees all 15 seconds: 5 of 15 fast.
	if r := c.Read(secs, now); r.Path != ScaleUp || r.Requests != 150 || !r.From.Equal(now.Add(-c.Window)) {
		t.Fatalf("sliding window: got %+v, want scale-up over 150 requests", r)
	}
	action := t0.Add(10 * time.Second)
	r := c.ReadSince(secs, now, action)
	if r.Path != ScaleDown || r.Requests != 50 || r.Sensitive != 1 || !r.From.Equal(action) {
		t.Fatalf("restarted window: got %+v, want scale-down over the 50 requests since the action", r)
	}
	// A second that started before the action (9.5 s) is not judged.
	r = c.ReadSince(secs, now, t0.Add(9500*time.Millisecond))
	if r.Requests != 50 {
		t.Fatalf("a second straddling the action counted: %d requests, want 50", r.Requests)
	}
	// An action older than the window changes nothing.
	if r := c.ReadSince(secs, now, t0.Add(-time.Minute)); r.Requests != 150 || !r.From.Equal(now.Add(-c.Window)) {
		t.Fatalf("an old action narrowed the window: %+v", r)
	}
}
