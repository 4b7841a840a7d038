package cost

import (
	"math"

	"github.com/headroom-dev/headroom/internal/analysis/capacity"
	"github.com/headroom-dev/headroom/internal/results"
)

// Capacity is the throughput a cost per req/s divides by: the treatment's
// one capacity figure (capacity.Curve.MaxThroughput, the highest mean
// throughput that meets the SLO without client limits), so that every
// $/req/s of a report rests on the figure its capacity finding states.
type Capacity struct {
	Throughput float64 // req/s; NaN when there is none
	Level      float64 // the level it was measured at; NaN when none
	Why        string  // why there is none; "" when there is one
}

// Capacities is the capacity figure of every treatment with completed
// runs, by name. A campaign the capacity analysis cannot read gives every
// treatment the analysis's complaint as Why.
func Capacities(r *results.Results) (map[string]Capacity, error) {
	cc, err := capacity.FromResults(r, capacity.Config{})
	if err != nil {
		return nil, err
	}
	out := map[string]Capacity{}
	if cc.Problem != nil {
		for _, t := range r.Treatments() {
			out[t.Name] = Capacity{Throughput: math.NaN(), Level: math.NaN(), Why: cc.Problem.Error()}
		}
		return out, nil
	}
	for _, tc := range cc.Curves {
		c := tc.Curve
		figure := Capacity{Throughput: c.MaxThroughput, Level: math.NaN(), Why: c.NoCapacity}
		if c.MaxIndex >= 0 {
			figure.Level = c.Points[c.MaxIndex].Level.Level
		}
		out[tc.Treatment.Name] = figure
	}
	return out, nil
}
