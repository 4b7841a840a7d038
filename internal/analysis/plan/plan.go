// Package plan picks, for each workload level, the configuration with the
// best objective (profit by default) from priced measurements (seed 003
// §7.5, Table 17; seed-digest §7), and says how firm that choice is: the
// break-even workloads between neighbouring plans and the ranges of the
// node-hour price and of the SLA's main step over which the plan stays the
// same. It is pure: its input is a profit.Analysis.
package plan

import (
	"fmt"
	"math"
	"sort"

	"github.com/headroom-dev/headroom/internal/analysis/profit"
	"github.com/headroom-dev/headroom/internal/analysis/wildcard"
)

// TieBreak is how equal objective values are decided.
const TieBreak = "equal objective values: the cheaper configuration (cost per hour) wins, then the one with fewer nodes, then the first name in text order"

// Choice is the plan at one workload level.
type Choice struct {
	Level      float64           `json:"level"`
	Config     string            `json:"config"`
	Params     map[string]string `json:"params,omitempty"`
	Nodes      int               `json:"nodes"`
	Objective  profit.Estimate   `json:"objective"` // the winner's objective metric
	Profit     profit.Estimate   `json:"profit_per_hour"`
	Revenue    profit.Estimate   `json:"revenue_per_hour"`
	Cost       profit.Estimate   `json:"cost_per_hour"`
	Throughput profit.Estimate   `json:"throughput"`
	P99MS      profit.Estimate   `json:"p99_ms"`
	Candidates int               `json:"candidates"`
	// RunnerUp is the second best configuration ("" when alone) and Margin
	// the objective's difference to it (positive = the winner is better).
	RunnerUp string `json:"runner_up,omitempty"`
	Margin   Num    `json:"margin"`
	// Close is set when the runner-up's mean lies inside the winner's 95%
	// interval: the repetitions do not separate the two.
	Close bool `json:"close,omitempty"`
	// Tie says how a tie on the objective was broken ("" = no tie).
	Tie string `json:"tie,omitempty"`
}

// FrontierRow is one configuration at one level along the cost axis, with
// the revenue made monotone (seed 003 §7.5, Figure 44).
type FrontierRow struct {
	Level   float64 `json:"level"`
	Config  string  `json:"config"`
	Cost    Num     `json:"cost_per_hour"`
	Revenue Num     `json:"revenue_per_hour"` // measured (mean)
	// MonotoneRevenue is the largest measured revenue of this
	// configuration and every cheaper one at this level; LiftedFrom names
	// the cheaper one when it is larger than the measured revenue.
	MonotoneRevenue Num    `json:"monotone_revenue_per_hour"`
	LiftedFrom      string `json:"lifted_from,omitempty"`
	Profit          Num    `json:"monotone_profit_per_hour"` // MonotoneRevenue − Cost
}

// BreakEven is where the next plan overtakes the previous one: between two
// measured levels, the workload at which their profits cross, by linear
// interpolation of the profit difference.
type BreakEven struct {
	From     string  `json:"from"`
	To       string  `json:"to"`
	Low      float64 `json:"low_level"`
	High     float64 `json:"high_level"`
	At       Num     `json:"at"`                 // NaN when one of them was not measured at both levels
	Measured bool    `json:"measured,omitempty"` // both measured at both levels
}

// Range is an interval of a model parameter over which every level keeps
// its configuration. Low/High are ±Inf when unbounded (encoded as null);
// LowBy/HighBy name the configuration and level that take over beyond.
type Range struct {
	Parameter string `json:"parameter"`
	Base      Num    `json:"base"`
	Low       Num    `json:"low"`
	High      Num    `json:"high"`
	LowBy     string `json:"low_by,omitempty"`
	HighBy    string `json:"high_by,omitempty"`
}

// Plan is the planner's answer.
type Plan struct {
	Objective  wildcard.Metric `json:"objective"`
	LevelUnit  string          `json:"level_unit"`
	Cost       string          `json:"cost_model"`
	Choices    []Choice        `json:"choices"`
	Frontier   []FrontierRow   `json:"frontier"`
	BreakEvens []BreakEven     `json:"break_evens"`
	// Price is the range of the node-hour price ($) — or, for other cost
	// bases, of a factor on every cost — keeping the plan; MainStep that
	// of the SLA's first step ($ per request). Only for the profit
	// objective.
	Price    *Range `json:"price,omitempty"`
	MainStep *Range `json:"main_step,omitempty"`
	TieBreak string `json:"tie_break"`
	Monotone string `json:"monotone"`
}

// Monotone says what the planner makes monotone and why.
const Monotone = "at each level, revenue is made non-decreasing along cost: a configuration is credited with the largest revenue measured for it or for any strictly cheaper one (seed 003 §7.5: decreasing revenue under constant workload and increasing cost is removed by maximisation, since a planner never pays more to earn less). The profit plan is chosen on that monotone profit; it picks the same configurations as the measured profit, because a lifted configuration earns its cheaper donor's revenue at a higher cost"

type cfgInfo struct {
	params map[string]string
	nodes  int
}

// Make plans a priced analysis.
func Make(a profit.Analysis) (Plan, error) {
	obj := a.Objective
	if obj == "" {
		obj = wildcard.ProfitPerHour
	}
	p := Plan{Objective: obj, LevelUnit: a.LevelUnit, Cost: a.Cost.Describe(), TieBreak: TieBreak, Monotone: Monotone,
		Choices: []Choice{}, Frontier: []FrontierRow{}, BreakEvens: []BreakEven{}}
	info := map[string]cfgInfo{}
	for _, c := range a.Configs {
		info[c.Name] = cfgInfo{params: c.Params, nodes: c.Nodes}
	}
	byLevel := map[float64][]profit.Cell{}
	for _, c := range a.Cells {
		byLevel[c.Level] = append(byLevel[c.Level], c)
	}
	levels := profit.Levels(a.Cells)
	if len(levels) == 0 {
		return p, fmt.Errorf("there are no measured configurations to plan")
	}
	winners := map[float64]profit.Cell{}
	for _, l := range levels {
		cells := byLevel[l]
		front := frontier(l, cells)
		p.Frontier = append(p.Frontier, front...)
		value := func(c profit.Cell) float64 { return metric(c, obj) }
		if obj == wildcard.ProfitPerHour {
			mono := map[string]float64{}
			for _, f := range front {
				mono[f.Config] = float64(f.Profit)
			}
			value = func(c profit.Cell) float64 { return mono[c.Config] }
		}
		ch, win := choose(l, cells, value, obj, info)
		winners[l] = win
		p.Choices = append(p.Choices, ch)
	}
	if obj == wildcard.ProfitPerHour {
		p.BreakEvens = breakEvens(levels, winners, byLevel)
		price := sensitivity(levels, winners, byLevel,
			func(c profit.Cell) (float64, float64) { return c.Revenue.Mean, -c.Cost.Mean }, 1)
		price.Parameter = "cost factor"
		if a.Cost.Basis == profit.NodeHour {
			price = price.scale(a.Cost.NodeHour)
			price.Parameter = "node-hour price ($)"
		}
		p.Price = &price
		v0 := a.SLA.Steps.Main()
		main := sensitivity(levels, winners, byLevel, func(c profit.Cell) (float64, float64) {
			return c.Revenue.Mean - v0*c.Main.Mean - c.Cost.Mean, c.Main.Mean
		}, v0)
		main.Parameter = "SLA main step ($ per request)"
		p.MainStep = &main
	}
	return p, nil
}

// metric is a cell's objective value.
func metric(c profit.Cell, m wildcard.Metric) float64 {
	switch m {
	case wildcard.Throughput:
		return c.Throughput.Mean
	case wildcard.P50:
		return c.P50MS.Mean
	case wildcard.P99:
		return c.P99MS.Mean
	case wildcard.CostPerHour:
		return c.Cost.Mean
	case wildcard.CostPerReqMonth:
		return c.CostPerReq.Mean
	case wildcard.RevenuePerHour:
		return c.Revenue.Mean
	}
	return c.Profit.Mean
}

func estimateOf(c profit.Cell, m wildcard.Metric) profit.Estimate {
	switch m {
	case wildcard.Throughput:
		return c.Throughput
	case wildcard.P50:
		return c.P50MS
	case wildcard.P99:
		return c.P99MS
	case wildcard.CostPerHour:
		return c.Cost
	case wildcard.CostPerReqMonth:
		return c.CostPerReq
	case wildcard.RevenuePerHour:
		return c.Revenue
	}
	return c.Profit
}

// frontier orders a level's configurations by cost and makes revenue
// monotone along it (see Monotone). Configurations of equal cost do not
// lift each other.
func frontier(level float64, cells []profit.Cell) []FrontierRow {
	sorted := append([]profit.Cell(nil), cells...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Cost.Mean != sorted[j].Cost.Mean {
			return sorted[i].Cost.Mean < sorted[j].Cost.Mean
		}
		return sorted[i].Config < sorted[j].Config
	})
	out := make([]FrontierRow, len(sorted))
	best, bestBy := math.Inf(-1), "" // over strictly cheaper configurations
	pendBest, pendBy, pendCost := math.Inf(-1), "", math.NaN()
	for i, c := range sorted {
		if c.Cost.Mean != pendCost {
			// Everything before this cost is strictly cheaper now.
			if pendBest > best {
				best, bestBy = pendBest, pendBy
			}
			pendCost = c.Cost.Mean
		}
		r := FrontierRow{Level: level, Config: c.Config, Cost: Num(c.Cost.Mean), Revenue: Num(c.Revenue.Mean), MonotoneRevenue: Num(c.Revenue.Mean)}
		if Num(best) > r.MonotoneRevenue {
			r.MonotoneRevenue, r.LiftedFrom = Num(best), bestBy
		}
		r.Profit = r.MonotoneRevenue - r.Cost
		out[i] = r
		if c.Revenue.Mean > pendBest {
			pendBest, pendBy = c.Revenue.Mean, c.Config
		}
	}
	return out
}

// choose picks the best cell by value (direction of obj), breaking ties
// by TieBreak.
func choose(level float64, cells []profit.Cell, value func(profit.Cell) float64, obj wildcard.Metric, info map[string]cfgInfo) (Choice, profit.Cell) {
	higher := wildcard.HigherIsBetter(obj)
	better := func(a, b float64) bool {
		if math.IsNaN(b) {
			return !math.IsNaN(a)
		}
		if math.IsNaN(a) {
			return false
		}
		if higher {
			return a > b
		}
		return a < b
	}
	order := append([]profit.Cell(nil), cells...)
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		va, vb := value(a), value(b)
		if better(va, vb) {
			return true
		}
		if better(vb, va) {
			return false
		}
		if a.Cost.Mean != b.Cost.Mean {
			return a.Cost.Mean < b.Cost.Mean
		}
		if na, nb := info[a.Config].nodes, info[b.Config].nodes; na != nb {
			return na < nb
		}
		return a.Config < b.Config
	})
	w := order[0]
	ch := Choice{Level: level, Config: w.Config, Params: info[w.Config].params, Nodes: info[w.Config].nodes,
		Objective: estimateOf(w, obj), Profit: w.Profit, Revenue: w.Revenue, Cost: w.Cost, Throughput: w.Throughput,
		P99MS: w.P99MS, Candidates: len(cells)}
	if len(order) > 1 {
		// The runner-up is the best other configuration by its measured
		// objective (a configuration lifted by the monotone revenue only
		// borrows a cheaper one's revenue), ties broken as above.
		r := order[1]
		for _, c := range order[2:] {
			if better(metric(c, obj), metric(r, obj)) {
				r = c
			}
		}
		ch.RunnerUp = r.Config
		ch.Margin = Num(metric(w, obj) - metric(r, obj))
		if !higher {
			ch.Margin = -ch.Margin
		}
		if value(w) == value(r) {
			switch {
			case w.Cost.Mean != r.Cost.Mean:
				ch.Tie = fmt.Sprintf("tied with %s; cheaper", r.Config)
			case info[w.Config].nodes != info[r.Config].nodes:
				ch.Tie = fmt.Sprintf("tied with %s at equal cost; fewer nodes", r.Config)
			default:
				ch.Tie = fmt.Sprintf("tied with %s at equal cost and nodes; name order", r.Config)
			}
		}
		e := estimateOf(w, obj)
		if rv := metric(r, obj); !math.IsNaN(e.Half) && math.Abs(metric(w, obj)-rv) <= e.Half {
			ch.Close = true
		}
	}
	return ch, w
}

// breakEvens finds, between consecutive levels whose plans differ, the
// workload where the later plan's profit overtakes the earlier one's.
func breakEvens(levels []float64, winners map[float64]profit.Cell, byLevel map[float64][]profit.Cell) []BreakEven {
	out := []BreakEven{}
	find := func(level float64, cfg string) (profit.Cell, bool) {
		for _, c := range byLevel[level] {
			if c.Config == cfg {
				return c, true
			}
		}
		return profit.Cell{}, false
	}
	for i := 1; i < len(levels); i++ {
		lo, hi := levels[i-1], levels[i]
		a, b := winners[lo].Config, winners[hi].Config
		if a == b {
			continue
		}
		be := BreakEven{From: a, To: b, Low: lo, High: hi, At: Num(math.NaN())}
		aLo, ok1 := find(lo, a)
		aHi, ok2 := find(hi, a)
		bLo, ok3 := find(lo, b)
		bHi, ok4 := find(hi, b)
		if ok1 && ok2 && ok3 && ok4 {
			be.Measured = true
			dLo := bLo.Profit.Mean - aLo.Profit.Mean // ≤ 0: a won at lo
			dHi := bHi.Profit.Mean - aHi.Profit.Mean // ≥ 0: b won at hi
			switch {
			case dHi-dLo > 0:
				be.At = Num(lo + (hi-lo)*(-dLo)/(dHi-dLo))
			default:
				be.At = Num((lo + hi) / 2)
			}
		}
		out = append(out, be)
	}
	return out
}

// sensitivity finds the range of a parameter x on which every level's
// winner stays the best, when each configuration's profit is linear in x:
// profit_c(x) = α_c + β_c·x (line returns α, β). The winner w keeps its
// level while (β_w − β_c)·x ≥ α_c − α_w for every other c. x is a price
// or an earning, so it stays non-negative.
func sensitivity(levels []float64, winners map[float64]profit.Cell, byLevel map[float64][]profit.Cell, line func(profit.Cell) (float64, float64), base float64) Range {
	r := Range{Base: Num(base), Low: 0, High: Num(math.Inf(1))}
	for _, l := range levels {
		w := winners[l]
		aw, bw := line(w)
		for _, c := range byLevel[l] {
			if c.Config == w.Config {
				continue
			}
			ac, bc := line(c)
			db, da := bw-bc, ac-aw
			if math.IsNaN(db) || math.IsNaN(da) || db == 0 {
				continue
			}
			x := Num(da / db)
			by := fmt.Sprintf("%s at %g", c.Config, l)
			if db > 0 && x > r.Low {
				r.Low, r.LowBy = x, by
			}
			if db < 0 && x < r.High {
				r.High, r.HighBy = x, by
			}
		}
	}
	return r
}

func (r Range) scale(f float64) Range {
	r.Base *= Num(f)
	r.Low *= Num(f)
	r.High *= Num(f)
	return r
}

// Num is a number that encodes NaN and infinities as JSON null (an
// unbounded range end, a break-even that could not be placed).
type Num = wildcard.Num
