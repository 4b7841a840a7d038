// Package empirical is the decision of seed 003's elastic controller
// (ch. 8, seed-digest §7) without its actuation: every period the sensor
// picks a path, the path forecasts the throughput vector, the operational
// data store is asked which configuration has served such a load within
// the SLA at the lowest cost, and when it has no answer the horizontal
// scaling model adds a node to the busiest tier or removes one from the
// idlest. The Decision says what to do and why.
package empirical

import (
	"fmt"
	"math"
	"time"

	"github.com/headroom-dev/headroom/internal/controller/forecast"
	"github.com/headroom-dev/headroom/internal/controller/ods"
	"github.com/headroom-dev/headroom/internal/controller/sensor"
)

// Config holds the controller's constants; Default gives the seed's.
type Config struct {
	Period   time.Duration // time between decisions (seed: 30 s)
	Sensor   sensor.Config
	Forecast forecast.Config
	// Horizon is how many seconds ahead the forecast provisions for: the
	// peak of the forecast over that horizon is what the ODS is asked
	// about (default: one period, until the next decision).
	Horizon time.Duration
	Query   ods.Query
	// DownBelow keeps the horizontal model from shrinking a tier that
	// would then run hotter than this mean CPU: a tier of n nodes at
	// utilisation u counts as under-utilised only when u·n/(n−1) stays
	// below it. Seed 003 §8.2.2 takes the lowest tier without a bound,
	// which on a fully met SLA removes nodes from a busy tier and
	// oscillates; 0 = no bound (the seed's rule).
	DownBelow float64
	// Cooldown is how long after an action took effect the controller
	// makes no further action; while it is positive, the sensor also
	// judges only seconds measured after the last action. The seed has
	// no cool-down: 0 (the default) keeps its behaviour, where a window
	// still holding the backlog an action is draining can trigger a
	// second action (docs/controller.md, "Measured").
	Cooldown time.Duration
}

// Default is seed 003's controller: every 30 s, sensor at 0.5 s and 1 s
// over 30 s, ODS query alpha 0, 50 req/s, support 30, SLA 90%.
func Default() Config {
	return Config{Period: 30 * time.Second, Sensor: sensor.Default(), Forecast: forecast.Default(),
		Horizon: 30 * time.Second, Query: ods.DefaultQuery(), DownBelow: 0.5}
}

// Check says what is wrong with the configuration, in one sentence.
func (c Config) Check() error {
	if c.Period <= 0 {
		return fmt.Errorf("the controller period is %v; give a positive duration such as 30s", c.Period)
	}
	if c.DownBelow < 0 || c.DownBelow > 1 {
		return fmt.Errorf("the horizontal model's scale-down bound is %v; give a utilisation in [0, 1] (0 = no bound)", c.DownBelow)
	}
	if c.Horizon < 0 {
		return fmt.Errorf("the forecast horizon is %v; give 0 or more", c.Horizon)
	}
	if c.Cooldown < 0 {
		return fmt.Errorf("the cool-down is %v; give 0 (none, the seed's behaviour) or a positive duration such as 30s", c.Cooldown)
	}
	for _, err := range []error{c.Sensor.Check(), c.Forecast.Check(), c.Query.Check()} {
		if err != nil {
			return err
		}
	}
	return nil
}

// Tier is one scalable tier as the horizontal model sees it.
type Tier struct {
	Name     string
	Nodes    int
	CPU      float64 // mean CPU utilisation over the last period, 0..1
	Min, Max int     // node bounds (Max 0 = no bound)
}

// Input is what the controller observes at a decision.
type Input struct {
	Now     time.Time
	Seconds []sensor.Second // recent per-second response histograms
	// History is each request type's throughput per second, oldest first.
	History     map[string][]float64
	Current     string  // the configuration now running (an ods key)
	CurrentCost float64 // its cost per hour
	Tiers       []Tier
	// LastAction is when the controller's last action (nodes added or
	// removed) took effect; zero = none yet. It matters only with a
	// positive Cooldown.
	LastAction time.Time
}

// Action is what a decision does.
type Action string

const (
	Hold      Action = "hold"      // keep the configuration
	Configure Action = "configure" // move to the ODS's configuration
	Fallback  Action = "fallback"  // the horizontal model's one node more or less
)

// Decision is one period's outcome with its reasons.
type Decision struct {
	At       time.Time
	Reading  sensor.Reading
	Path     sensor.Path
	Forecast ods.Vector // peak forecast over the horizon (nil on hold)
	Answer   ods.Answer // the ODS groups considered (empty on hold)
	Action   Action
	Config   string // Configure: the configuration chosen
	Tier     string // Fallback: the tier scaled
	Delta    int    // Fallback: +1 or −1
	Reason   string
}

// Decide takes one decision. On the scale-up path the ODS's answer must
// cost more than the current configuration, on the scale-down path less
// (an answer no dearer, or no cheaper, changes nothing the sensor asked
// for, so it counts as no answer); without one the horizontal model
// decides.
//
// With a positive Cooldown and a last action, the sensor judges only the
// seconds since that action, and until Cooldown has passed since it the
// decision holds whatever the sensor reads, saying until when.
func (c Config) Decide(store *ods.Store, in Input) Decision {
	since := c.restart(in.LastAction)
	r := c.Sensor.ReadSince(in.Seconds, in.Now, since)
	d := Decision{At: in.Now, Reading: r, Path: r.Path, Action: Hold}
	if until, ok := c.CoolingDown(in.Now, in.LastAction); ok {
		d.Reason = fmt.Sprintf("cooling down until %s (cooldown %v after the action that took effect at %s, %v left): no scaling action; the sensor reads %s",
			clock(until), c.Cooldown, clock(in.LastAction), until.Sub(in.Now).Round(time.Millisecond), r.Path)
		if r.Requests > 0 {
			d.Reason += fmt.Sprintf(" (sensitive SLA %.1f%% over %d requests since the action)", 100*r.Sensitive, r.Requests)
		} else {
			d.Reason += " (no requests since the action)"
		}
		return d
	}
	if r.Path == sensor.Hold {
		if r.Requests == 0 && r.From.After(in.Now.Add(-c.Sensor.Window)) {
			d.Reason = "no requests in the sensor window since the last action"
		} else if r.Requests == 0 {
			d.Reason = "no requests in the sensor window"
		} else {
			d.Reason = fmt.Sprintf("sensitive SLA %.1f%%: neither violated (< %.0f%%) nor fully met", 100*r.Sensitive, 100*c.Sensor.Goal)
		}
		return d
	}
	d.Forecast = ods.Vector(c.Forecast.Vector(in.History, int(math.Ceil(c.Horizon.Seconds()))))
	d.Answer = store.Find(c.Query, d.Forecast)
	up := r.Path == sensor.ScaleUp
	for _, g := range d.Answer.Groups {
		if g.Rejected != "" || g.Config == in.Current {
			continue
		}
		if (up && g.Cost > in.CurrentCost) || (!up && g.Cost < in.CurrentCost) {
			d.Action, d.Config = Configure, g.Config
			d.Reason = fmt.Sprintf("%s: ODS chose %s ($%.3f/h, %d records within %.0f req/s of the forecast %.0f req/s, mean SLA %.1f%%)",
				r.Path, g.Config, g.Cost, g.Support, c.Query.Radius, d.Forecast.Total(), 100*g.MeanSLA)
			return d
		}
	}
	return c.fallback(d, in.Tiers, up)
}

// restart is where the sensor's window may start: the last action when
// a cool-down is configured, else no bound (the seed's sliding window).
func (c Config) restart(last time.Time) time.Time {
	if c.Cooldown > 0 {
		return last
	}
	return time.Time{}
}

// CoolingDown says whether at now the controller is still cooling down
// after the action that took effect at last, and until when. Without a
// cool-down, or before any action, it never is.
func (c Config) CoolingDown(now, last time.Time) (until time.Time, ok bool) {
	if c.Cooldown <= 0 || last.IsZero() {
		return time.Time{}, false
	}
	until = last.Add(c.Cooldown)
	return until, now.Before(until)
}

// clock is a time of day with milliseconds, as decisions' reasons give it.
func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") + " UTC" }

// fallback is the horizontal scaling model: on the way up the tier with
// the highest mean CPU gets one node more, on the way down the tier with
// the lowest one node less, within each tier's bounds.
func (c Config) fallback(d Decision, tiers []Tier, up bool) Decision {
	best := -1
	hot := 0
	for i, t := range tiers {
		if up && t.Max > 0 && t.Nodes >= t.Max || !up && t.Nodes <= max(t.Min, 1) {
			continue
		}
		if !up && c.DownBelow > 0 && t.CPU*float64(t.Nodes)/float64(t.Nodes-1) >= c.DownBelow {
			hot++
			continue
		}
		if best < 0 || up && t.CPU > tiers[best].CPU || !up && t.CPU < tiers[best].CPU {
			best = i
		}
	}
	why := "ODS has no configuration that meets the query"
	if d.Answer.Within > 0 {
		why = fmt.Sprintf("ODS had %d records near the forecast but no eligible configuration %s than the current one", d.Answer.Within, map[bool]string{true: "dearer", false: "cheaper"}[up])
	}
	if best < 0 {
		d.Reason = fmt.Sprintf("%s: %s, and no tier can %s", d.Path, why, map[bool]string{true: "grow", false: "shrink"}[up])
		if hot > 0 {
			d.Reason += fmt.Sprintf(" (with one node less, every tier's CPU would reach %.0f%% or more)", 100*c.DownBelow)
		}
		return d
	}
	t := tiers[best]
	d.Action, d.Tier, d.Delta = Fallback, t.Name, map[bool]int{true: 1, false: -1}[up]
	d.Reason = fmt.Sprintf("%s: %s; horizontal model: tier %s (CPU %.0f%%, %d nodes) gets %+d", d.Path, why, t.Name, 100*t.CPU, t.Nodes, d.Delta)
	return d
}
