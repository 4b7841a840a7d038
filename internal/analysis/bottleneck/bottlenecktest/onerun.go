package bottlenecktest

import (
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// OneRun is a campaign of the first schema (its settings come from the
// stored Spec text, there are no fact tables) of one run at 10 req/s
// starting at T0, during whose measured Seconds the host Host ran at 99%
// CPU while the run served Throughput ok/s.
type OneRun struct {
	Name, Spec, Host string
	Seconds          int
	Throughput       float64
}

// Write writes the campaign into the store results.db in dir.
func (c OneRun) Write(t testing.TB, dir string) *results.Results {
	t.Helper()
	st := resultstest.Create(t, dir, store.Campaign{Name: c.Name, SpecYAML: c.Spec, CreatedAt: T0})
	must := resultstest.Must(t)
	id, err := st.StartRun(store.Run{Model: "open", Level: 10, Repetition: 1, Start: T0})
	must(err)
	var ss []monitor.Sample
	for i := range c.Seconds {
		ss = append(ss, monitor.Sample{Host: c.Host, Resource: "cpu", Metric: monitor.CPUUtilPct, Start: T0.Add(time.Duration(i) * time.Second),
			Period: time.Second, Value: 99, Source: monitor.SourceSampled})
	}
	must(st.AddSamples(id, ss))
	end := T0.Add(time.Duration(c.Seconds) * time.Second)
	must(st.FinishRun(id, store.StatusCompleted, "", end, store.RunSummary{MeasureStart: T0, MeasureEnd: end, MeasureSecs: float64(c.Seconds), Throughput: c.Throughput}))
	r, err := results.New(st)
	must(err)
	return r
}

// NoMapNoSLO is a OneRun campaign without treatments, so without maps
// though its spec asks for one, and without an SLO, so without an
// intervention analysis: host h at 99% CPU for 1 s.
func NoMapNoSLO(t testing.TB) *results.Results {
	return OneRun{Name: "x", Host: "h", Seconds: 1,
		Spec: "name: x\ntarget: {type: null}\nworkload: {ycsb: c}\nload: {model: open, rates: [10]}\nanalysis: {bottleneck: {map: {x: {path: seed}, y: {path: repetitions}}}}\n"}.Write(t, "")
}
