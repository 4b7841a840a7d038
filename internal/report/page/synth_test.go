package page

import (
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// The synthetic campaign: open loop at 100, 200 and 400 req/s, 2
// repetitions of a 10 s measured phase in 1 s intervals, SLO p99 <= 1 ms.
// Every answer below follows from how it is written:
//   - each interval of repetition 1 completes exactly `level` requests (split
//     evenly between read and update), so its per-interval throughput is the
//     level; repetition 2 adds synthWobble[k] to interval k (the wobble sums
//     to 0), so at 100 req/s the 20 pooled intervals have 1st and 99th
//     percentiles 81.9 and 118.1 ok/s (type 7 interpolation, mean 100);
//   - the run summary's throughput is level-1 in repetition 1 and level+1 in
//     repetition 2: mean = level, standard error = sd/sqrt(2) = 1;
//   - latencies are 500 µs, except at 400 req/s in intervals 3, 4 and 5
//     (seconds 3 to 6), where they are 1500 µs: those 3 intervals of each
//     repetition miss the SLO, so 400 req/s fails (70% within 1 ms) and
//     6 of 60 intervals miss it;
//   - host lab1's CPU is level/5 % (20, 40, 80), its disk vda does 10 reads
//     and 30 writes per second;
//   - at 400 req/s each run has 7 late requests and 2 dropped;
//   - repetition 1 at 100 req/s ends with a partial interval (1 request in
//     2 ms), which the time series leave out;
//   - one more run at 200 req/s was interrupted;
//   - events: a campaign-level "populated", a "fault" 5 s into the measured
//     phase of 200 req/s repetition 1, and one whose detail holds HTML.
const synthSpec = `name: synth
seed: 7
target: {type: null}
workload: {ycsb: a, record_count: 100}
load: {model: open, arrival: constant, rates: [100, 200, 400]}
phases: {warmup: 0s, measure: 10s}
repetitions: 2
slo: {percentile: 99, threshold: 1ms}
`

var synthT0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

var synthLevels = []float64{100, 200, 400}

const synthIntervals = 10

var synthWobble = [synthIntervals]int64{-20, 20, -10, 0, 0, 0, 10, 5, -5, 0} // 0 in the slow intervals 3-5

// synthStore writes the synthetic campaign into a new store in a temporary
// directory and returns the store and the directory.
func synthStore(t testing.TB) (*store.Store, string) {
	t.Helper()
	dir := t.TempDir()
	st := resultstest.Create(t, dir, store.Campaign{
		Name: "synth", SpecFile: "synth.yaml", SpecYAML: synthSpec, Seed: 7,
		HostJSON: `{"hostname":"lab1","cpus":2,"kernel":"6.1.0","memory_kib":24000000}`, ToolVersion: "test", CreatedAt: synthT0,
	})
	must := resultstest.Must(t)
	must(st.AddEvent(store.Event{Time: synthT0, Kind: "populated", Detail: "100 records"}))
	start := synthT0.Add(time.Second)
	seq := 0
	for li, level := range synthLevels {
		for rep := 1; rep <= 2; rep++ {
			id, err := st.StartRun(store.Run{Seq: seq, Slot: seq, Model: "open", LevelIndex: li, Level: level, Repetition: rep, Start: start})
			must(err)
			seq++
			var ivs []store.Interval
			var samples []monitor.Sample
			for k := range synthIntervals {
				at := start.Add(time.Duration(k) * time.Second)
				lat := int64(500)
				if level == 400 && k >= 3 && k <= 5 {
					lat = 1500
				}
				n := int64(level / 2)
				for _, op := range []string{"read", "update"} {
					if rep == 2 && op == "read" {
						n += synthWobble[k]
					} else if rep == 2 {
						n = int64(level / 2)
					}
					h := store.NewHistogram()
					must(h.RecordValues(lat, n))
					ivs = append(ivs, store.Interval{RunID: id, Phase: "measure", Op: op, Start: at, Duration: time.Second, Count: n, Hist: h})
				}
				for _, s := range []struct {
					res, metric string
					v           float64
				}{{"cpu", monitor.CPUUtilPct, level / 5}, {"disk:vda", monitor.DiskReadOps, 10}, {"disk:vda", monitor.DiskWriteOps, 30}, {"net:eth0", monitor.NetRxBytes, 1000}} {
					samples = append(samples, monitor.Sample{Host: "lab1", Resource: s.res, Metric: s.metric, Start: at, Period: time.Second, Value: s.v, Source: monitor.SourceSampled})
				}
			}
			if level == 100 && rep == 1 {
				// A partial interval at the end of the measured phase, as the
				// engine writes when the phase ends mid-interval: 1 request in
				// 2 ms. The time series leave it out.
				h := store.NewHistogram()
				must(h.RecordValue(500))
				ivs = append(ivs, store.Interval{RunID: id, Phase: "measure", Op: "read", Start: start.Add(synthIntervals * time.Second), Duration: 2 * time.Millisecond, Count: 1, Hist: h})
			}
			must(st.AddIntervals(ivs))
			must(st.AddSamples(id, samples))
			if level == 200 && rep == 1 {
				must(st.AddEvent(store.Event{RunID: id, Time: start.Add(5 * time.Second), Kind: "fault", Detail: `{"action":"stop","host":"db1"}`}))
			}
			end := start.Add(synthIntervals * time.Second)
			tput := level - 1
			if rep == 2 {
				tput = level + 1
			}
			sum := store.RunSummary{Sent: int64(level * synthIntervals), Completed: int64(level * synthIntervals),
				MeasureStart: start, MeasureEnd: end, MeasureSecs: synthIntervals, Throughput: tput, ClientCPU: 12.5}
			if level == 400 {
				sum.Late, sum.Dropped = 7, 2
			}
			must(st.FinishRun(id, store.StatusCompleted, "", end, sum))
			start = end.Add(time.Second)
		}
	}
	id, err := st.StartRun(store.Run{Seq: seq, Slot: seq, Model: "open", LevelIndex: 1, Level: 200, Repetition: 3, Start: start})
	must(err)
	must(st.AddEvent(store.Event{RunID: id, Time: start, Kind: "interrupt", Detail: `<script>alert("x")</script> & more`}))
	must(st.FinishRun(id, store.StatusInterrupted, "interrupted by the user", start.Add(time.Second), store.RunSummary{}))
	return st, dir
}
