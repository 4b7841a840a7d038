// Package sensor is the elastic controller's sensor (seed 003 ch. 8,
// seed-digest §7): every period it computes SLA satisfaction — the share
// of requests answered within a response-time threshold — over the last
// window at a sensitive and a normal threshold, and picks the path the
// controller takes. The sensitive threshold is stricter than the normal
// one, so a scale-up starts before the normal SLA (the real objective) is
// violated, and a scale-down only when even the sensitive SLA is fully met.
package sensor

import (
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Config holds the sensor's constants; Default gives the seed's values.
type Config struct {
	Window    time.Duration // satisfaction is computed over the last Window (seed: 30 s)
	Sensitive time.Duration // sensitive threshold (seed: 0.5 s)
	Normal    time.Duration // normal threshold, the QoS that counts (seed: 1 s)
	// Goal is the satisfaction below which the sensitive SLA counts as
	// violated (seed: 90%, the level the seed's ODS query and workload loop
	// hold the normal SLA to).
	Goal float64
}

// Default is seed 003's sensor: 30 s window, 0.5 s and 1 s thresholds, 90%.
func Default() Config {
	return Config{Window: 30 * time.Second, Sensitive: 500 * time.Millisecond, Normal: time.Second, Goal: 0.9}
}

// Check says what is wrong with the configuration, in one sentence.
func (c Config) Check() error {
	switch {
	case c.Window <= 0:
		return fmt.Errorf("the sensor window is %v; give a positive duration such as 30s", c.Window)
	case c.Sensitive <= 0 || c.Normal <= 0:
		return fmt.Errorf("the sensor thresholds must be positive (sensitive %v, normal %v)", c.Sensitive, c.Normal)
	case c.Sensitive > c.Normal:
		return fmt.Errorf("the sensitive threshold %v is looser than the normal %v; it must be at most the normal one", c.Sensitive, c.Normal)
	case !(c.Goal > 0 && c.Goal <= 1):
		return fmt.Errorf("the sensor goal is %v; give a fraction in (0, 1], e.g. 0.9", c.Goal)
	}
	return nil
}

// Second is one second of measured responses: the latency histogram
// (microseconds, as the store records it) and the requests that failed.
type Second struct {
	Start  time.Time
	Hist   *hdrhistogram.Histogram // nil = no successful request
	Errors int64
}

// Within counts the requests in h answered within threshold. A histogram
// bucket counts when its lowest equivalent value is at most the threshold,
// so the answer is exact to the histogram's resolution (3 significant
// digits in the store: a value at most 0.1% above the threshold may count).
func Within(h *hdrhistogram.Histogram, threshold time.Duration) int64 {
	if h == nil {
		return 0
	}
	thr := threshold.Microseconds()
	var n int64
	for _, b := range h.Distribution() {
		if b.Count > 0 && b.From <= thr {
			n += b.Count
		}
	}
	return n
}

// Satisfaction is the share of requests in the seconds answered within the
// threshold; failed requests count as not satisfied. ok is false when
// there was no request at all.
func Satisfaction(secs []Second, threshold time.Duration) (s float64, ok bool) {
	var within, total int64
	for _, sec := range secs {
		within += Within(sec.Hist, threshold)
		if sec.Hist != nil {
			total += sec.Hist.TotalCount()
		}
		total += sec.Errors
	}
	if total == 0 {
		return 0, false
	}
	return float64(within) / float64(total), true
}

// Path is what the sensor tells the controller to do.
type Path string

const (
	ScaleUp   Path = "scale-up"   // the sensitive SLA is violated
	ScaleDown Path = "scale-down" // the sensitive SLA is fully satisfied
	Hold      Path = "hold"       // in between, or no requests to judge
)

// Reading is one sensor reading.
type Reading struct {
	At        time.Time // end of the window
	From      time.Time // start of the window: At − Window, or the action it restarted at
	Requests  int64
	Sensitive float64 // satisfaction at the sensitive threshold
	Normal    float64 // satisfaction at the normal threshold
	Path      Path
}

// Read computes the satisfaction over the seconds that start within the
// window ending at now, and the path: the sensitive satisfaction below
// the goal takes the scale-up path, every request within the sensitive
// threshold the scale-down path, anything else holds. A window without
// requests holds: there is nothing to judge.
func (c Config) Read(secs []Second, now time.Time) Reading {
	return c.ReadSince(secs, now, time.Time{})
}

// ReadSince is Read over a window that starts no earlier than since (the
// time the last action took effect; zero = no restart). Seconds that
// started before an action describe a tier that no longer exists, so a
// violation they hold must not trigger a second action.
func (c Config) ReadSince(secs []Second, now, since time.Time) Reading {
	from := now.Add(-c.Window)
	if since.After(from) {
		from = since
	}
	var in []Second
	var n int64
	for _, s := range secs {
		if !s.Start.Before(from) && s.Start.Before(now) {
			in = append(in, s)
			if s.Hist != nil {
				n += s.Hist.TotalCount()
			}
			n += s.Errors
		}
	}
	r := Reading{At: now, From: from, Requests: n, Path: Hold}
	sens, ok := Satisfaction(in, c.Sensitive)
	if !ok {
		return r
	}
	r.Sensitive = sens
	r.Normal, _ = Satisfaction(in, c.Normal)
	switch {
	case sens < c.Goal:
		r.Path = ScaleUp
	case sens == 1:
		r.Path = ScaleDown
	}
	return r
}
