package sensor

import (
	"math"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func hist(t *testing.T, micros ...int64) *hdrhistogram.Histogram {
	t.Helper()
	h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	for _, v := range micros {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// seconds builds n seconds from t0, each with fast requests at 100 ms,
// mid ones at 700 ms (over sensitive, within normal), slow at 2 s, and
// errs failures.
func seconds(t *testing.T, t0 time.Time, n, fast, mid, slow int, errs int64) []Second {
	var out []Second
	for i := 0; i < n; i++ {
		var vs []int64
		for j := 0; j < fast; j++ {
			vs = append(vs, 100_000)
		}
		for j := 0; j < mid; j++ {
			vs = append(vs, 700_000)
		}
		for j := 0; j < slow; j++ {
			vs = append(vs, 2_000_000)
		}
		out = append(out, Second{Start: t0.Add(time.Duration(i) * time.Second), Hist: hist(t, vs...), Errors: errs})
	}
	return out
}

func TestWithinAtThresholdBoundary(t *testing.T) {
	h := hist(t, 499_000, 500_000, 501_000, 1_000_000)
	if got := Within(h, 500*time.Millisecond); got != 2 {
		t.Fatalf("within 0.5 s: got %d, want 2 (499 ms and 500 ms)", got)
	}
	if got := Within(h, time.Second); got != 4 {
		t.Fatalf("within 1 s: got %d, want 4", got)
	}
	if Within(nil, time.Second) != 0 {
		t.Fatal("a nil histogram has no requests")
	}
}

func TestReadPaths(t *testing.T) {
	c := Default()
	t0 := time.Unix(1_000_000, 0)
	now := t0.Add(30 * time.Second)
	cases := []struct {
		name                string
		fast, mid, slow     int
		errs                int64
		want                Path
		wantSens, wantNorml float64
	}{
		// 8 fast + 2 mid: sensitive 0.8 < 0.9 → scale up; normal 1.0.
		{"sensitive violated", 8, 2, 0, 0, ScaleUp, 0.8, 1},
		// 19 fast + 1 mid: sensitive 0.95, normal 1 → hold.
		{"in between", 19, 1, 0, 0, Hold, 0.95, 1},
		{"fully satisfied", 10, 0, 0, 0, ScaleDown, 1, 1},
		// 9 fast, 1 error: the error counts against both.
		{"errors count", 9, 0, 0, 1, Hold, 0.9, 0.9},
		// 5 fast, 3 mid, 2 slow: sensitive 0.5, normal 0.8.
		{"slow ones", 5, 3, 2, 0, ScaleUp, 0.5, 0.8},
	}
	for _, tc := range cases {
		secs := seconds(t, t0, 30, tc.fast, tc.mid, tc.slow, tc.errs)
		r := c.Read(secs, now)
		if r.Path != tc.want || math.Abs(r.Sensitive-tc.wantSens) > 1e-12 || math.Abs(r.Normal-tc.wantNorml) > 1e-12 {
			t.Errorf("%s: got %s sensitive %v normal %v, want %s %v %v", tc.name, r.Path, r.Sensitive, r.Normal, tc.want, tc.wantSens, tc.wantNorml)
		}
		wantN := int64(30) * (int64(tc.fast+tc.mid+tc.slow) + tc.errs)
		if r.Requests != wantN {
			t.Errorf("%s: %d requests, want %d", tc.name, r.Requests, wantN)
		}
	}
}

func TestReadOnlyTheWindow(t *testing.T) {
	c := Default()
	t0 := time.Unix(1_000_000, 0)
	// 30 bad seconds, then 30 good ones: the window at t0+60 s sees only the good.
	secs := append(seconds(t, t0, 30, 0, 0, 10, 0), seconds(t, t0.Add(30*time.Second), 30, 10, 0, 0, 0)...)
	if r := c.Read(secs, t0.Add(60*time.Second)); r.Path != ScaleDown || r.Requests != 300 {
		t.Fatalf("got %+v, want scale-down over 300 requests", r)
	}
	if r := c.Read(secs, t0.Add(30*time.Second)); r.Path != ScaleUp || r.Sensitive != 0 {
		t.Fatalf("got %+v, want scale-up with nothing within", r)
	}
	if r := c.Read(secs, t0.Add(200*time.Second)); r.Path != Hold || r.Requests != 0 {
		t.Fatalf("an empty window holds; got %+v", r)
	}
}

func TestCheck(t *testing.T) {
	if err := Default().Check(); err != nil {
		t.Fatal(err)
	}
	c := Default()
	c.Sensitive = 2 * time.Second
	if c.Check() == nil {
		t.Fatal("a sensitive threshold looser than the normal one must be refused")
	}
	c = Default()
	c.Goal = 1.5
	if c.Check() == nil {
		t.Fatal("a goal above 1 must be refused")
	}
}
