package profit

import (
	"math"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
	"github.com/headroom-dev/headroom/internal/analysis/wildcard"
)

// Level is the confidence level of every interval (95%).
const Level = 0.95

// Estimate is a mean over repetitions with its 95% t-interval half-width
// (NaN for one repetition); it encodes NaN as JSON null.
type Estimate = wildcard.Value

// OpHist is one operation's response times in a run's measured phase.
type OpHist struct {
	Op   string
	Hist *hdrhistogram.Histogram // values in Unit
}

// RunInput is what one completed run contributes.
type RunInput struct {
	ID         int64
	Config     string // the treatment
	Level      float64
	Repetition int
	Seconds    float64 // length of the measured phase
	Ops        []OpHist
	Unit       time.Duration // histogram value unit (the store: microseconds)
	Failed     int64         // errors + dropped requests in the measured phase
	Stale      int64         // stale reads; -1 = not measured
	Throughput float64       // successful requests/s
}

// Run is one run's money.
type Run struct {
	ID         int64        `json:"id"`
	Config     string       `json:"config"`
	Level      float64      `json:"level"`
	Repetition int          `json:"repetition"`
	Seconds    float64      `json:"seconds"`
	Throughput float64      `json:"throughput"`
	P50MS      wildcard.Num `json:"p50_ms"`
	P99MS      wildcard.Num `json:"p99_ms"`
	Revenue    HistRevenue  `json:"revenue"` // over the measured phase, responses only
	Failed     int64        `json:"failed"`
	Stale      int64        `json:"stale"`
	// Penalties are the availability and staleness terms over the
	// measured phase (0 when not priced or not measured).
	Penalties float64 `json:"penalties"`
	// Per hour of operation at this run's rate:
	RevenuePerHour   wildcard.Num `json:"revenue_per_hour"`
	MainPerHour      wildcard.Num `json:"main_requests_per_hour"` // requests/h the first step paid for
	CostPerHour      wildcard.Num `json:"cost_per_hour"`
	ProfitPerHour    wildcard.Num `json:"profit_per_hour"`
	CostMonthPerReqS wildcard.Num `json:"cost_month_per_req_s"` // $/month per req/s (NaN at zero throughput)
}

// PriceRun computes one run's revenue, cost and profit. Revenue per hour
// is the measured phase's revenue scaled to an hour; cost per hour comes
// from the cost model at the run's throughput.
func PriceRun(in RunInput, sla SLA, cm CostModel, cfg Config) (Run, error) {
	r := Run{ID: in.ID, Config: in.Config, Level: in.Level, Repetition: in.Repetition, Seconds: in.Seconds,
		Throughput: in.Throughput, Failed: in.Failed, Stale: in.Stale}
	unit := in.Unit
	if unit == 0 {
		unit = time.Microsecond
	}
	var all *hdrhistogram.Histogram
	for _, oh := range in.Ops {
		if oh.Hist == nil {
			continue
		}
		steps, own := sla.For(oh.Op)
		r.Revenue.Add(Revenue(oh.Hist, steps, unit, !own))
		if all == nil {
			all = hdrhistogram.New(oh.Hist.LowestTrackableValue(), oh.Hist.HighestTrackableValue(), int(oh.Hist.SignificantFigures()))
		}
		all.Merge(oh.Hist)
	}
	r.P50MS, r.P99MS = wildcard.Num(math.NaN()), wildcard.Num(math.NaN())
	if all != nil && all.TotalCount() > 0 {
		ms := float64(unit) / float64(time.Millisecond)
		r.P50MS = wildcard.Num(float64(all.ValueAtQuantile(50)) * ms)
		r.P99MS = wildcard.Num(float64(all.ValueAtQuantile(99)) * ms)
	}
	if sla.ErrorDollars != nil {
		r.Penalties += float64(in.Failed) * *sla.ErrorDollars
	}
	if sla.StaleDollars != nil && in.Stale > 0 {
		r.Penalties += float64(in.Stale) * *sla.StaleDollars
	}
	cost, err := cm.PerHour(cfg, in.Throughput)
	if err != nil {
		return r, err
	}
	perHour := math.NaN()
	if in.Seconds > 0 {
		perHour = 3600 / in.Seconds
	}
	r.RevenuePerHour = wildcard.Num((r.Revenue.Dollars + r.Penalties) * perHour)
	r.MainPerHour = wildcard.Num(float64(r.Revenue.MainRequests) * perHour)
	r.CostPerHour = wildcard.Num(cost)
	r.ProfitPerHour = r.RevenuePerHour - r.CostPerHour
	r.CostMonthPerReqS = wildcard.Num(math.NaN())
	if in.Throughput > 0 {
		r.CostMonthPerReqS = wildcard.Num(cost * HoursPerMonth / in.Throughput)
	}
	return r, nil
}

// Cell is one configuration at one workload level: its runs (the
// repetitions) and their figures as mean ± 95% interval.
type Cell struct {
	Config     string   `json:"config"`
	Level      float64  `json:"level"`
	Runs       []int64  `json:"runs"`
	Throughput Estimate `json:"throughput"`
	P50MS      Estimate `json:"p50_ms"`
	P99MS      Estimate `json:"p99_ms"`
	Revenue    Estimate `json:"revenue_per_hour"`
	Main       Estimate `json:"main_requests_per_hour"`
	Cost       Estimate `json:"cost_per_hour"`
	Profit     Estimate `json:"profit_per_hour"`
	CostPerReq Estimate `json:"cost_month_per_req_s"`
	// RevenueMin and RevenueMax bound the mean revenue per hour by the
	// histograms' precision (HistRevenue).
	RevenueMin float64 `json:"revenue_min_per_hour"`
	RevenueMax float64 `json:"revenue_max_per_hour"`
	Straddling int64   `json:"straddling"`
}

// Cells groups runs by configuration and level, in the order the runs
// first name them, and summarises each group over its repetitions.
func Cells(runs []Run) []Cell {
	type key struct {
		cfg   string
		level float64
	}
	idx := map[key]int{}
	var groups [][]Run
	for _, r := range runs {
		k := key{r.Config, r.Level}
		i, ok := idx[k]
		if !ok {
			i = len(groups)
			idx[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	out := make([]Cell, 0, len(groups))
	for _, g := range groups {
		c := Cell{Config: g[0].Config, Level: g[0].Level}
		col := func(f func(Run) float64) Estimate {
			var xs []float64
			for _, r := range g {
				if x := f(r); !math.IsNaN(x) {
					xs = append(xs, x)
				}
			}
			m, h := stats.CI(xs, Level)
			return Estimate{Mean: m, Half: h, N: len(xs)}
		}
		var lo, hi float64
		for _, r := range g {
			c.Runs = append(c.Runs, r.ID)
			c.Straddling += r.Revenue.Straddling
			scale := 3600 / r.Seconds
			lo += (r.Revenue.Min + r.Penalties) * scale
			hi += (r.Revenue.Max + r.Penalties) * scale
		}
		c.RevenueMin, c.RevenueMax = lo/float64(len(g)), hi/float64(len(g))
		c.Throughput = col(func(r Run) float64 { return r.Throughput })
		c.P50MS = col(func(r Run) float64 { return float64(r.P50MS) })
		c.P99MS = col(func(r Run) float64 { return float64(r.P99MS) })
		c.Revenue = col(func(r Run) float64 { return float64(r.RevenuePerHour) })
		c.Main = col(func(r Run) float64 { return float64(r.MainPerHour) })
		c.Cost = col(func(r Run) float64 { return float64(r.CostPerHour) })
		c.Profit = col(func(r Run) float64 { return float64(r.ProfitPerHour) })
		c.CostPerReq = col(func(r Run) float64 { return float64(r.CostMonthPerReqS) })
		out = append(out, c)
	}
	return out
}

// Levels lists the distinct levels of the cells in ascending order.
func Levels(cells []Cell) []float64 {
	seen := map[float64]bool{}
	var out []float64
	for _, c := range cells {
		if !seen[c.Level] {
			seen[c.Level] = true
			out = append(out, c.Level)
		}
	}
	sort.Float64s(out)
	return out
}
