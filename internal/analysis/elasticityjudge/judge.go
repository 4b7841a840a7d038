// Package elasticityjudge judges one run of an elastic controller (issue
// 19; seed 003 ch. 8, seed-digest §7): the SLA satisfaction it kept, what
// its configurations cost, the profit under an SLA revenue model, how
// often it acted, and the elasticity metrics of Herbst et al.'s BUNGEE
// benchmark, which compare the resources demanded with those supplied
// second by second. It is pure: the runtime supplies the seconds.
package elasticityjudge

import (
	"fmt"
	"math"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/analysis/profit"
	"github.com/headroom-dev/headroom/internal/controller/sensor"
)

// Second is one second of a controller run.
type Second struct {
	Start  time.Time
	Hist   *hdrhistogram.Histogram // response times in microseconds (nil: none succeeded)
	Errors int64
	// Demand is the resource units the load needed this second (e.g. the
	// nodes the cheapest configuration meeting the SLA has), Supply the
	// units running. Both in the same unit; the runtime decides which.
	Demand, Supply float64
	CostPerHour    float64 // the running configuration's price
}

// Input is one controller run.
type Input struct {
	Controller string // e.g. "empirical", "hpa"
	Repetition int
	Seconds    []Second // in time order, one per second
	Actions    int      // scaling actions the controller took
	Threshold  time.Duration
	// SLA prices each request by its response time; nil = no profit.
	// A failed request earns what the slowest step earns.
	SLA profit.Steps
}

// Bungee holds the elasticity metrics of Herbst et al. (BUNGEE, 2015),
// over T seconds with demand d_t and supply s_t:
//
//	accuracy under θ_U = 100/T · Σ max(d_t − s_t, 0) / d_t   [% of demand]
//	accuracy over  θ_O = 100/T · Σ max(s_t − d_t, 0) / d_t
//	timeshare under τ_U = 100/T · #{t : s_t < d_t}           [% of time]
//	timeshare over  τ_O = 100/T · #{t : s_t > d_t}
//	jitter j = (e_s − e_d) / T_minutes                       [adaptations/min]
//
// where e_s and e_d count the changes of supply and of demand; a second
// with zero demand divides by one unit instead (the benchmark's ε).
// Positive jitter: supply moves more often than demand (oscillation);
// negative: it does not follow demand's changes (inertia).
type Bungee struct {
	AccuracyUnder  float64 `json:"accuracy_under_pct"`
	AccuracyOver   float64 `json:"accuracy_over_pct"`
	TimeshareUnder float64 `json:"timeshare_under_pct"`
	TimeshareOver  float64 `json:"timeshare_over_pct"`
	Jitter         float64 `json:"jitter_per_min"`
}

func (b Bungee) plus(o Bungee) Bungee {
	return Bungee{b.AccuracyUnder + o.AccuracyUnder, b.AccuracyOver + o.AccuracyOver,
		b.TimeshareUnder + o.TimeshareUnder, b.TimeshareOver + o.TimeshareOver, b.Jitter + o.Jitter}
}

func (b Bungee) times(k float64) Bungee {
	return Bungee{b.AccuracyUnder * k, b.AccuracyOver * k, b.TimeshareUnder * k, b.TimeshareOver * k, b.Jitter * k}
}

// Result is one run's verdict.
type Result struct {
	Controller string  `json:"controller"`
	Repetition int     `json:"repetition"`
	Seconds    int     `json:"seconds"`
	Requests   int64   `json:"requests"` // answered and failed
	SLA        float64 `json:"sla"`      // share answered within the threshold
	Cost       float64 `json:"cost"`     // dollars over the run
	Priced     bool    `json:"priced"`   // an SLA model was given
	Revenue    float64 `json:"revenue"`
	Profit     float64 `json:"profit"` // revenue − cost
	Actions    int     `json:"actions"`
	Bungee     Bungee  `json:"bungee"`
}

// Judge computes a run's verdict.
func Judge(in Input) (Result, error) {
	if len(in.Seconds) == 0 {
		return Result{}, fmt.Errorf("controller run %q has no seconds to judge", in.Controller)
	}
	if in.Threshold <= 0 {
		return Result{}, fmt.Errorf("the SLA threshold is %v; give a positive duration such as 1s", in.Threshold)
	}
	if in.SLA != nil {
		if err := in.SLA.Check(); err != nil {
			return Result{}, err
		}
	}
	r := Result{Controller: in.Controller, Repetition: in.Repetition, Seconds: len(in.Seconds), Actions: in.Actions, Priced: in.SLA != nil}
	secs := make([]sensor.Second, len(in.Seconds))
	for i, s := range in.Seconds {
		if s.Demand < 0 || s.Supply < 0 || s.CostPerHour < 0 || math.IsNaN(s.Demand+s.Supply+s.CostPerHour) {
			return Result{}, fmt.Errorf("second %d has demand %v, supply %v, cost %v; none may be negative", i, s.Demand, s.Supply, s.CostPerHour)
		}
		secs[i] = sensor.Second{Start: s.Start, Hist: s.Hist, Errors: s.Errors}
		if s.Hist != nil {
			r.Requests += s.Hist.TotalCount()
		}
		r.Requests += s.Errors
		r.Cost += s.CostPerHour / 3600
		if in.SLA != nil {
			r.Revenue += profit.Revenue(s.Hist, in.SLA, time.Microsecond, false).Dollars
			r.Revenue += float64(s.Errors) * in.SLA[len(in.SLA)-1].Dollars
		}
	}
	r.SLA, _ = sensor.Satisfaction(secs, in.Threshold)
	if r.Priced {
		r.Profit = r.Revenue - r.Cost
	}
	r.Bungee = Elasticity(in.Seconds)
	return r, nil
}

// Elasticity computes the BUNGEE metrics over the seconds.
func Elasticity(secs []Second) Bungee {
	var b Bungee
	T := float64(len(secs))
	if T == 0 {
		return b
	}
	var es, ed int
	for i, s := range secs {
		d := math.Max(s.Demand, 1) // ε: zero demand counts per unit
		if s.Supply < s.Demand {
			b.AccuracyUnder += (s.Demand - s.Supply) / d
			b.TimeshareUnder++
		}
		if s.Supply > s.Demand {
			b.AccuracyOver += (s.Supply - s.Demand) / d
			b.TimeshareOver++
		}
		if i > 0 {
			if s.Supply != secs[i-1].Supply {
				es++
			}
			if s.Demand != secs[i-1].Demand {
				ed++
			}
		}
	}
	b.AccuracyUnder *= 100 / T
	b.AccuracyOver *= 100 / T
	b.TimeshareUnder *= 100 / T
	b.TimeshareOver *= 100 / T
	b.Jitter = float64(es-ed) / (T / 60)
	return b
}

// Stat is a metric's mean and range over repetitions.
type Stat struct {
	Mean, Min, Max float64
}

// Summary is one controller's results over its repetitions, for the
// side-by-side table.
type Summary struct {
	Controller     string
	Runs           int
	SLA, Cost      Stat
	Profit         Stat // zero when not priced
	Actions        Stat
	AccuracyUnder  Stat
	AccuracyOver   Stat
	TimeshareUnder Stat
	TimeshareOver  Stat
	Jitter         Stat
}

// Summarise groups results by controller, in the order each first appears.
func Summarise(rs []Result) []Summary {
	var order []string
	by := map[string][]Result{}
	for _, r := range rs {
		if _, ok := by[r.Controller]; !ok {
			order = append(order, r.Controller)
		}
		by[r.Controller] = append(by[r.Controller], r)
	}
	var out []Summary
	for _, c := range order {
		g := by[c]
		sort.SliceStable(g, func(i, j int) bool { return g[i].Repetition < g[j].Repetition })
		stat := func(f func(Result) float64) Stat {
			s := Stat{Min: math.Inf(1), Max: math.Inf(-1)}
			for _, r := range g {
				v := f(r)
				s.Mean += v
				s.Min, s.Max = math.Min(s.Min, v), math.Max(s.Max, v)
			}
			s.Mean /= float64(len(g))
			return s
		}
		out = append(out, Summary{
			Controller: c, Runs: len(g),
			SLA:            stat(func(r Result) float64 { return r.SLA }),
			Cost:           stat(func(r Result) float64 { return r.Cost }),
			Profit:         stat(func(r Result) float64 { return r.Profit }),
			Actions:        stat(func(r Result) float64 { return float64(r.Actions) }),
			AccuracyUnder:  stat(func(r Result) float64 { return r.Bungee.AccuracyUnder }),
			AccuracyOver:   stat(func(r Result) float64 { return r.Bungee.AccuracyOver }),
			TimeshareUnder: stat(func(r Result) float64 { return r.Bungee.TimeshareUnder }),
			TimeshareOver:  stat(func(r Result) float64 { return r.Bungee.TimeshareOver }),
			Jitter:         stat(func(r Result) float64 { return r.Bungee.Jitter }),
		})
	}
	return out
}
