// Package hpa is the baseline the elastic controller is judged against: a
// CPU-threshold autoscaler that follows the algorithm Kubernetes documents
// for its HorizontalPodAutoscaler (autoscaling/v2):
//
//   - desired = ceil(current × utilisation / target), unless the ratio
//     utilisation/target is within the tolerance (0.1) of 1;
//   - stabilisation: a scale-down takes the highest recommendation of the
//     last window (300 s by default), a scale-up the lowest (0 s);
//   - rate limits: scaling policies (Pods or Percent per period) bound how
//     far the replica count may move from where it stood a period ago, the
//     select policy picking the one that allows the most (Max) or least
//     (Min) change, or none (Disabled);
//   - min and max replicas.
//
// Durations are divided by a time compression factor so a trace played
// faster than real time keeps the controller's behaviour in proportion.
package hpa

import (
	"fmt"
	"math"
	"time"
)

// Policy is one scaling policy: at most Value pods, or Value percent of
// the replicas at the start of the period, per Period.
type Policy struct {
	Type   string // "Pods" | "Percent"
	Value  int
	Period time.Duration
}

// Rules are one direction's behaviour.
type Rules struct {
	Stabilization time.Duration
	Select        string // "Max" | "Min" | "Disabled"
	Policies      []Policy
}

// Config is the autoscaler's configuration.
type Config struct {
	Min, Max  int
	Target    float64 // target utilisation, e.g. 0.6 for 60% CPU
	Tolerance float64 // Kubernetes: 0.1
	Up, Down  Rules
	// SyncPeriod is how often the autoscaler evaluates the metrics and
	// decides (kube-controller-manager's
	// --horizontal-pod-autoscaler-sync-period, 15 s), over CPU averaged
	// over the same span; compressed like the windows (Interval).
	SyncPeriod time.Duration
	// Compression divides every window and period (1 = real time).
	Compression float64
}

// Interval is the time between two decisions, SyncPeriod compressed.
func (c Config) Interval() time.Duration { return c.scaled(c.SyncPeriod) }

// Default is Kubernetes' default behaviour: a decision every 15 s,
// tolerance 0.1; scale-up
// without stabilisation, at most the larger of +100% and +4 pods per 15 s;
// scale-down stabilised over 300 s, at most −100% per 15 s. Kubernetes
// has no default target; 0.6 is Headroom's, and so are Min 1, Max 10.
func Default() Config {
	return Config{
		Min: 1, Max: 10, Target: 0.6, Tolerance: 0.1, Compression: 1, SyncPeriod: 15 * time.Second,
		Up: Rules{Select: "Max", Policies: []Policy{
			{Type: "Percent", Value: 100, Period: 15 * time.Second},
			{Type: "Pods", Value: 4, Period: 15 * time.Second}}},
		Down: Rules{Stabilization: 300 * time.Second, Select: "Max", Policies: []Policy{
			{Type: "Percent", Value: 100, Period: 15 * time.Second}}},
	}
}

// Check says what is wrong with the configuration, in one sentence.
func (c Config) Check() error {
	switch {
	case c.Min < 1 || c.Max < c.Min:
		return fmt.Errorf("replicas must satisfy 1 ≤ min ≤ max (min %d, max %d)", c.Min, c.Max)
	case !(c.Target > 0):
		return fmt.Errorf("the target utilisation is %v; give a positive fraction such as 0.6", c.Target)
	case c.Tolerance < 0:
		return fmt.Errorf("the tolerance is %v; give 0 or more (Kubernetes: 0.1)", c.Tolerance)
	case !(c.Compression > 0):
		return fmt.Errorf("the time compression is %v; give a positive factor (1 = real time)", c.Compression)
	case c.SyncPeriod <= 0:
		return fmt.Errorf("the sync period is %v; give a positive one (Kubernetes: 15s)", c.SyncPeriod)
	}
	for _, r := range []Rules{c.Up, c.Down} {
		switch r.Select {
		case "Max", "Min", "Disabled":
		default:
			return fmt.Errorf("select policy %q is not Max, Min or Disabled", r.Select)
		}
		for _, p := range r.Policies {
			if (p.Type != "Pods" && p.Type != "Percent") || p.Value <= 0 || p.Period <= 0 {
				return fmt.Errorf("policy %+v needs type Pods or Percent, a positive value and a positive period", p)
			}
		}
	}
	return nil
}

type recommendation struct {
	at       time.Time
	replicas int
}

type scaleEvent struct {
	at     time.Time
	change int // positive up, negative down
}

// Autoscaler holds the history the algorithm needs: past recommendations
// for stabilisation and past scaling for the rate limits.
type Autoscaler struct {
	cfg    Config
	recs   []recommendation
	events []scaleEvent
}

// New returns an autoscaler; the configuration must pass Check.
func New(c Config) (*Autoscaler, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	return &Autoscaler{cfg: c}, nil
}

// Decision is one evaluation.
type Decision struct {
	Current    int
	Ratio      float64 // utilisation / target
	Raw        int     // ceil(current × ratio), or current within the tolerance
	Stabilized int     // after the stabilisation windows
	Desired    int     // after rate limits and min/max: what to scale to
	Reason     string
}

func (c Config) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) / c.Compression)
}

// Interval is the time between two decisions (Config.Interval).
func (a *Autoscaler) Interval() time.Duration { return a.cfg.Interval() }

// Decide evaluates the autoscaler at now with current replicas whose mean
// utilisation is given, records the decision as if it were carried out,
// and returns it.
func (a *Autoscaler) Decide(now time.Time, current int, utilisation float64) Decision {
	c := a.cfg
	d := Decision{Current: current, Ratio: utilisation / c.Target}
	d.Raw = current
	if math.Abs(d.Ratio-1) > c.Tolerance {
		d.Raw = int(math.Ceil(float64(current) * d.Ratio))
	}
	// Stabilisation, as Kubernetes does it: the lowest recommendation in
	// the up window and the highest in the down window, both including
	// this one, bound how far from current the result may move.
	up, down := d.Raw, d.Raw
	upCut, downCut := now.Add(-c.scaled(c.Up.Stabilization)), now.Add(-c.scaled(c.Down.Stabilization))
	for _, r := range a.recs {
		if r.at.After(upCut) {
			up = min(up, r.replicas)
		}
		if r.at.After(downCut) {
			down = max(down, r.replicas)
		}
	}
	a.recs = append(a.recs, recommendation{at: now, replicas: d.Raw})
	a.prune(now)
	d.Stabilized = current
	if d.Stabilized < up {
		d.Stabilized = up
	}
	if d.Stabilized > down {
		d.Stabilized = down
	}
	d.Desired, d.Reason = a.limit(now, current, d.Stabilized)
	if d.Desired != current {
		a.events = append(a.events, scaleEvent{at: now, change: d.Desired - current})
	}
	if d.Reason == "" {
		switch {
		case math.Abs(d.Ratio-1) <= c.Tolerance:
			d.Reason = fmt.Sprintf("ratio %.2f within tolerance %.2f", d.Ratio, c.Tolerance)
		case d.Raw == current:
			// Outside the tolerance, but the ceiling keeps the count
			// (one replica at 37% against a 60% target: ceil(0.62) = 1).
			d.Reason = fmt.Sprintf("ceil(%d × %.2f) = %d: no change", current, d.Ratio, d.Raw)
		case d.Stabilized != d.Raw:
			d.Reason = fmt.Sprintf("stabilised: recommendation %d held at %d", d.Raw, d.Stabilized)
		default:
			d.Reason = fmt.Sprintf("ceil(%d × %.2f) = %d", current, d.Ratio, d.Raw)
		}
	}
	return d
}

// limit applies the rate limits and min/max to a stabilised desire.
func (a *Autoscaler) limit(now time.Time, current, desired int) (int, string) {
	c := a.cfg
	switch {
	case desired > current:
		limit := max(current, a.upLimit(now, current))
		allowed := min(c.Max, limit)
		if desired > allowed {
			if allowed == c.Max && c.Max < limit {
				return allowed, fmt.Sprintf("desired %d capped at max replicas %d", desired, c.Max)
			}
			return allowed, fmt.Sprintf("desired %d limited by the scale-up policies to %d", desired, allowed)
		}
	case desired < current:
		limit := min(current, a.downLimit(now, current))
		allowed := max(c.Min, limit)
		if desired < allowed {
			if allowed == c.Min && c.Min > limit {
				return allowed, fmt.Sprintf("desired %d raised to min replicas %d", desired, c.Min)
			}
			return allowed, fmt.Sprintf("desired %d limited by the scale-down policies to %d", desired, allowed)
		}
	}
	if desired < c.Min {
		return c.Min, fmt.Sprintf("raised to min replicas %d", c.Min)
	}
	if desired > c.Max {
		return c.Max, fmt.Sprintf("capped at max replicas %d", c.Max)
	}
	return desired, ""
}

// changed sums the scaling in one direction within the last period.
func (a *Autoscaler) changed(now time.Time, period time.Duration, up bool) int {
	var n int
	cut := now.Add(-a.cfg.scaled(period))
	for _, e := range a.events {
		if e.at.After(cut) && (e.change > 0) == up {
			n += e.change
		}
	}
	return n
}

func (a *Autoscaler) upLimit(now time.Time, current int) int {
	r := a.cfg.Up
	if r.Select == "Disabled" {
		return current
	}
	res := math.MinInt
	if r.Select == "Min" {
		res = math.MaxInt
	}
	for _, p := range r.Policies {
		start := current - a.changed(now, p.Period, true)
		var lim int
		if p.Type == "Pods" {
			lim = start + p.Value
		} else {
			lim = int(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		if r.Select == "Max" {
			res = max(res, lim)
		} else {
			res = min(res, lim)
		}
	}
	if len(r.Policies) == 0 {
		return math.MaxInt
	}
	return res
}

func (a *Autoscaler) downLimit(now time.Time, current int) int {
	r := a.cfg.Down
	if r.Select == "Disabled" {
		return current
	}
	res := math.MaxInt
	if r.Select == "Min" {
		res = math.MinInt
	}
	for _, p := range r.Policies {
		start := current - a.changed(now, p.Period, false) // changes are negative
		var lim int
		if p.Type == "Pods" {
			lim = start - p.Value
		} else {
			lim = int(float64(start) * (1 - float64(p.Value)/100))
		}
		if r.Select == "Max" { // the most change: the lowest limit
			res = min(res, lim)
		} else {
			res = max(res, lim)
		}
	}
	if len(r.Policies) == 0 {
		return math.MinInt
	}
	return res
}

// prune drops history no window or period can reach any more.
func (a *Autoscaler) prune(now time.Time) {
	keep := max(a.cfg.Up.Stabilization, a.cfg.Down.Stabilization)
	for _, r := range [][]Policy{a.cfg.Up.Policies, a.cfg.Down.Policies} {
		for _, p := range r {
			keep = max(keep, p.Period)
		}
	}
	cut := now.Add(-a.cfg.scaled(keep) - time.Second)
	i := 0
	for i < len(a.recs) && a.recs[i].at.Before(cut) {
		i++
	}
	a.recs = a.recs[i:]
	j := 0
	for j < len(a.events) && a.events[j].at.Before(cut) {
		j++
	}
	a.events = a.events[j:]
}
