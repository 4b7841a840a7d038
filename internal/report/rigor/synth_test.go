package rigor

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

var synthT0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// synthRun is one run of a synthetic campaign with its known answers.
type synthRun struct {
	treatment string
	slotBase  int
	li, rep   int
	level     float64
	tauMS     float64 // every request's latency, so the run's tau
	tput      float64 // the run summary's throughput
	host      string  // lab host whose CPU is sampled for theta
	cpu       float64 // its CPU utilisation inside the trim; 99 in the first and last 2 s
}

// synth writes a store with spec src and the given lab events and runs,
// in order: a lab event is recorded whenever the treatment changes.
type synth struct {
	t    *testing.T
	st   *store.Store
	dir  string
	now  time.Time
	labs map[string][]labHost // lab hosts per treatment
	last string
}

func newSynth(t *testing.T, name, src string) *synth {
	t.Helper()
	dir := t.TempDir()
	st := resultstest.Create(t, dir, store.Campaign{Name: name, SpecFile: name + ".yaml", SpecYAML: src, Seed: 1, ToolVersion: "test", CreatedAt: synthT0})
	return &synth{t: t, st: st, dir: dir, now: synthT0, labs: map[string][]labHost{}, last: "\x00"}
}

func (s *synth) must(err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
}

// labEvent records the lab of a treatment as internal/campaign does.
func (s *synth) labEvent(treatment string) {
	detail, _ := json.Marshal(map[string]any{"name": "synth", "subnet": "10.201.9.0/24", "cgroups": "v2", "hosts": s.labs[treatment]})
	s.must(s.st.AddEvent(store.Event{Time: s.now, Kind: "lab", Detail: string(detail)}))
	s.now = s.now.Add(time.Second)
}

// labHost is a host of a lab event's detail as internal/lab writes it
// (the fields the results model reads).
type labHost struct {
	Name         string  `json:"name"`
	Type         string  `json:"type"`
	VCPUs        float64 `json:"vcpus"`
	PricePerHour float64 `json:"price_per_hour"`
	Addr         string  `json:"addr"`
}

func host(name, typ string, vcpus, price float64) labHost {
	return labHost{Name: name, Type: typ, VCPUs: vcpus, PricePerHour: price, Addr: "10.201.9.10"}
}

// run writes one completed 10 s run: one interval of tput x 10 requests
// of latency tauMS, per-second CPU samples of its host (99% in the first
// and last 2 s, which the 2 s trim removes) and of the measuring machine.
func (s *synth) run(r synthRun) {
	if r.treatment != s.last {
		s.labEvent(r.treatment)
		s.last = r.treatment
	}
	slot := r.slotBase + r.li*10 + r.rep
	id, err := s.st.StartRun(store.Run{Seq: slot, Slot: slot, Treatment: r.treatment, Model: "open", LevelIndex: r.li, Level: r.level, Repetition: r.rep, Start: s.now})
	s.must(err)
	start := s.now
	end := start.Add(10 * time.Second)
	n := int64(r.tput * 10)
	h := store.NewHistogram()
	s.must(h.RecordValues(int64(r.tauMS*1000), n))
	s.must(s.st.AddIntervals([]store.Interval{{RunID: id, Phase: "measure", Op: "read", Start: start, Duration: 10 * time.Second, Count: n, Hist: h}}))
	var samples []monitor.Sample
	for k := 0; k < 10; k++ {
		v := r.cpu
		if k < 2 || k >= 8 {
			v = 99
		}
		at := start.Add(time.Duration(k) * time.Second)
		samples = append(samples,
			monitor.Sample{Host: r.host, Resource: monitor.ResourceCPU, Metric: monitor.CPUUtilPct, Start: at, Period: time.Second, Value: v, Source: monitor.SourceSampled},
			monitor.Sample{Host: "machine", Resource: monitor.ResourceCPU, Metric: monitor.CPUUtilPct, Start: at, Period: time.Second, Value: 50, Source: monitor.SourceSampled})
	}
	s.must(s.st.AddSamples(id, samples))
	s.must(s.st.FinishRun(id, store.StatusCompleted, "", end, store.RunSummary{Sent: int64(r.level * 10), Completed: n,
		MeasureStart: start, MeasureEnd: end, MeasureSecs: 10, Throughput: r.tput, ClientCPU: 10}))
	s.now = end.Add(time.Second)
}

// The variation campaign: two equal lab instances (db1, db2: small hosts)
// as treatments inst-a and inst-b, open loop at 100, 200 and 300 req/s,
// three repetitions, SLO p99 <= 50 ms, judged by seed 001's absolute
// thresholds (thresholds: absolute). The known answers:
//   - tau (ms) of inst-a: 10/11/12, 20/22/24, 40/60/80 (tau_se 0.58, 1.15,
//     11.5: (a) pass, pass, fail); inst-b: 11/12/13, 60/62/64, 70/80/90
//     ((a) pass, pass, fail);
//   - (b): |Δtau| = 1 ms at 100, 40 ms at 200 (fail), 20 ms at 300;
//   - (c): valid up to 100 req/s, ending at 200 on (b), with theta there
//     (20 + 30)/2 = 25% (inst-a's db1 at 20%, inst-b's db2 at 30%, the
//     99% edges trimmed away);
//   - throughput: inst-a keeps up to 200 and serves 240 at 300 (20%
//     short: knee 200, capacity 240); inst-b keeps up everywhere (no
//     knee, capacity 300);
//   - SLO: inst-a first fails at 300, inst-b at 200.
const variationSpec = `name: synthvar
lab:
  hosts:
    - {name: db, count: 2, type: small}
target: {type: postgres, managed: {host: db1}}
workload: {ycsb: c, record_count: 100}
load: {model: open, arrival: constant, rates: [100, 200, 300]}
phases: {warmup: 0s, measure: 10s}
repetitions: 3
slo: {percentile: 99, threshold: 50ms}
analysis:
  variability: {trim: 2s, thresholds: absolute, equal: [[inst-a, inst-b]]}
treatments:
  - name: inst-a
  - name: inst-b
    set: {target.managed.host: db2}
`

var variationTaus = map[string][3][3]float64{
	"inst-a": {{10, 11, 12}, {20, 22, 24}, {40, 60, 80}},
	"inst-b": {{11, 12, 13}, {60, 62, 64}, {70, 80, 90}},
}

func variationStore(t *testing.T) (*store.Store, string) { return variationStoreWith(t, variationSpec) }

func variationStoreWith(t *testing.T, src string) (*store.Store, string) {
	s := newSynth(t, "synthvar", src)
	small := []labHost{host("db1", "small", 0.5, 0.09), host("db2", "small", 0.5, 0.09)}
	s.labs["inst-a"], s.labs["inst-b"] = small, small
	levels := []float64{100, 200, 300}
	for ti, tr := range []string{"inst-a", "inst-b"} {
		for li, lv := range levels {
			for rep := 1; rep <= 3; rep++ {
				tput := lv
				if tr == "inst-a" && lv == 300 {
					tput = 240
				}
				hostName, cpu := "db1", lv/5
				if tr == "inst-b" {
					hostName, cpu = "db2", lv*3/10
				}
				s.run(synthRun{treatment: tr, slotBase: ti * 100000, li: li, rep: rep, level: lv, tauMS: variationTaus[tr][li][rep-1], tput: tput, host: hostName, cpu: cpu})
			}
		}
	}
	return s.st, s.dir
}

// The scaling campaign: one lab host, small (0.5 vCPU, $0.09/h) or medium
// (1 vCPU, $0.18/h), at 100, 200 and 400 req/s, two repetitions. small
// serves 100, 200, 250 (knee 200, capacity 250), medium keeps up (capacity
// 400); at the common load 200 small answers in 8 ms, medium in 4 ms. So
// α = 2, scale-up 400/250 = 1.6, efficiency 0.8, speed-up 2, and cost per
// req/s 0.09 x 730 / 250 = 0.2628 and 0.18 x 730 / 400 = 0.3285. Then one
// probe per treatment: small estimates 300 req/s, medium 600 (cost per
// req/s 0.219 for both), with windows whose percentiles are known.
const scalingSpec = `name: synthscale
lab:
  hosts:
    - {name: db1, type: small}
target: {type: postgres, managed: {host: db1}}
workload: {ycsb: c, record_count: 100}
load: {model: open, arrival: constant, rates: [100, 200, 400]}
phases: {warmup: 0s, measure: 10s}
repetitions: 2
treatments:
  - name: small
  - name: medium
    set:
      lab.hosts[0].type: medium
`

func scalingStore(t *testing.T) (*store.Store, string) {
	s := newSynth(t, "synthscale", scalingSpec)
	s.labs["small"] = []labHost{host("db1", "small", 0.5, 0.09)}
	s.labs["medium"] = []labHost{host("db1", "medium", 1, 0.18)}
	levels := []float64{100, 200, 400}
	for ti, tr := range []string{"small", "medium"} {
		for li, lv := range levels {
			for rep := 1; rep <= 2; rep++ {
				tput, tau := lv, 2.0
				if tr == "small" && lv == 400 {
					tput = 250
				}
				if lv == 200 {
					tau = map[string]float64{"small": 8, "medium": 4}[tr]
				}
				s.run(synthRun{treatment: tr, slotBase: ti * 100000, li: li, rep: rep, level: lv, tauMS: tau, tput: tput, host: "db1", cpu: lv / 10})
			}
		}
	}
	for _, p := range []struct {
		treatment string
		estimate  float64
		rates     []float64
	}{{"small", 300, []float64{100, 200, 400, 200, 240, 280, 320, 360}}, {"medium", 600, []float64{200, 400, 800, 400, 480, 560, 640}}} {
		s.labEvent(p.treatment)
		s.probe(p.treatment, p.estimate, p.rates)
	}
	return s.st, s.dir
}

// probe writes a completed probe of 2 s windows at the given rates. A
// window's percentile p latency is p/10 ms below the estimate and 10x that
// above it; the last window missed the SLA. The rate 200 (small) is held
// twice, with percentiles 1x and 3x: the surface shows their mean, 2x.
func (s *synth) probe(treatment string, estimate float64, rates []float64) {
	cfg := fmt.Sprintf(`{"treatment":%q,"window":"2s","margin":"10ms"}`, treatment)
	id, err := s.st.StartProbe(store.Probe{Start: s.now, Target: "postgres", RTTAddr: "10.201.9.10:5432", ConfigJSON: cfg, SLAPercentile: 90, SLAThreshold: 150 * time.Millisecond})
	s.must(err)
	held := map[float64]int{}
	for i, r := range rates {
		held[r]++
		w := store.ProbeWindow{ProbeID: id, Seq: i, Phase: "ramp-up", Rate: r, Offered: r, Achieved: r, Start: s.now, Duration: 2 * time.Second,
			RTTBeforeUs: 100, RTTAfterUs: 120, PassedSeconds: 2, Accepted: true, MetSLA: true, Verdict: "accepted", Sent: int64(2 * r), Completed: int64(2 * r)}
		factor := 1.0
		if held[r] == 2 {
			factor = 3
		}
		if r > estimate {
			factor, w.PassedSeconds, w.Accepted, w.MetSLA, w.Verdict = 10, 0, false, false, "missed SLA"
		}
		for _, p := range store.ProbePercentiles {
			w.Percentiles = append(w.Percentiles, factor*p*100)
		}
		w.SLAUs = w.Percentiles[5]
		w.Hist = store.NewHistogram()
		s.must(w.Hist.RecordValues(int64(w.Percentiles[3]), w.Completed))
		for k := 0; k < 2; k++ {
			pass := w.PassedSeconds > k
			w.Seconds = append(w.Seconds, store.ProbeSecond{Index: k, Sent: int64(r), Completed: int64(r), P50Us: w.Percentiles[3], P90Us: w.Percentiles[5], RTTUs: 110, Pass: pass})
		}
		s.must(s.st.AddProbeWindow(w))
		s.now = s.now.Add(3 * time.Second)
	}
	s.must(s.st.FinishProbe(id, store.Probe{Status: store.StatusCompleted, Stop: "sla", Estimate: estimate, LowerBound: estimate, BaselineRTTUs: 100}))
}
