package availability

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"math"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// Run is the availability of one completed run with fault events, and
// the write checks recorded after it.
type Run struct {
	Treatment results.Treatment
	Run       results.Run
	// Origin is the start of the measured phase; the report's timeline
	// counts from it.
	Origin time.Time
	Config Config
	Result Result
	Checks []results.WriteCheck
	// Problem is why the run could not be analysed; Result is then empty.
	Problem error
}

// Lost sums the records the run's write checks found lost.
func (x Run) Lost() (lost, checked int64) {
	for _, c := range x.Checks {
		lost += c.Lost
		checked += c.Checked
	}
	return lost, checked
}

// ConfigOf is a treatment's analysis.failures settings as a Config.
func ConfigOf(t results.Treatment) Config {
	f := t.Analysis.Failures
	return Config{Tolerance: f.Tolerance, Stable: f.Stable, DetectFactor: f.DetectFactor, Steady: f.Steady.D()}
}

// FromResults analyses every run (completed or not: a failure may be what
// ended it) that recorded a fault event or a write check, in campaign
// order. The timeline is the measured phase's intervals, every operation
// type together; p99 = F^-1(0.99) of their merged histogram (seed-digest
// §1). The error is a failure to read the results; a run the analysis
// cannot judge carries Problem.
//
// It is computed once per Results (results.Memo): the terminal summary and
// the report's failure section both ask for it. The runs are shared and
// must not be changed.
func FromResults(r *results.Results) ([]Run, error) {
	v, err := r.Memo("availability.FromResults", func() (any, error) { return fromResults(r) })
	if err != nil {
		return nil, err
	}
	return v.([]Run), nil
}

func fromResults(r *results.Results) ([]Run, error) {
	checks, err := r.WriteChecks()
	if err != nil {
		return nil, err
	}
	byRun := map[int64][]results.WriteCheck{}
	for _, c := range checks {
		byRun[c.RunID] = append(byRun[c.RunID], c)
	}
	var out []Run
	for _, run := range r.Runs() {
		if run.Status == results.StatusRunning {
			continue
		}
		fs, err := r.Faults(run.ID)
		if err != nil {
			return nil, err
		}
		if len(fs) == 0 && len(byRun[run.ID]) == 0 {
			continue
		}
		t, _ := r.Treatment(run.Treatment)
		x := Run{Treatment: t, Run: run, Origin: run.Summary.MeasureStart, Config: ConfigOf(t), Checks: byRun[run.ID]}
		var pf pointFolder
		if err := r.EachInterval(run.ID, "measure", func(iv *store.Interval) error {
			pf.add(iv)
			return nil
		}); err != nil {
			return nil, err
		}
		points := pf.done()
		if x.Origin.IsZero() && len(points) > 0 {
			x.Origin = points[0].Start
		}
		var evs []Event
		for _, f := range fs {
			evs = append(evs, Event{At: f.Time, Action: f.Action, Host: f.Host, Detail: f.Detail, Error: f.Error})
		}
		x.Result, x.Problem = Analyze(points, evs, x.Config)
		out = append(out, x)
	}
	return out, nil
}

// Points folds a run's intervals (one row per operation type) into one
// point per interval, in time order.
func Points(ivs []store.Interval) []Point {
	var pf pointFolder
	for i := range ivs {
		pf.add(&ivs[i])
	}
	return pf.done()
}

// pointFolder builds the Points of intervals given one at a time in the
// store's order (all operation types of one interval together), keeping
// nothing of an interval after add returns.
type pointFolder struct {
	out    []Point
	cur    Point
	open   bool
	merged *hdrhistogram.Histogram // reused: the interval's types merged
}

func (f *pointFolder) add(iv *store.Interval) {
	if f.open && !iv.Start.Equal(f.cur.Start) {
		f.close()
	}
	if !f.open {
		if f.merged == nil {
			f.merged = store.NewHistogram()
		}
		f.merged.Reset()
		f.cur, f.open = Point{Start: iv.Start, P99: math.NaN()}, true
	}
	p := &f.cur
	p.Dur = max(p.Dur, iv.Duration)
	p.OK += iv.Count
	p.Failed += iv.Errors
	p.Dropped += iv.Dropped
	p.NotFound += iv.ErrorKinds["not_found"]
	if iv.Hist != nil && iv.Hist.TotalCount() > 0 {
		iv.MergeInto(f.merged)
	}
}

func (f *pointFolder) close() {
	if f.merged.TotalCount() > 0 {
		f.cur.P99 = float64(f.merged.ValueAtQuantile(99))
	}
	f.out = append(f.out, f.cur)
	f.open = false
}

func (f *pointFolder) done() []Point {
	if f.open {
		f.close()
	}
	return f.out
}
