package campaign

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/controller/empirical"
	"github.com/headroom-dev/headroom/internal/controller/forecast"
	"github.com/headroom-dev/headroom/internal/controller/hpa"
	"github.com/headroom-dev/headroom/internal/controller/ods"
	"github.com/headroom-dev/headroom/internal/controller/runlog"
	"github.com/headroom-dev/headroom/internal/controller/sensor"
	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
)

// The spec's controller (issue 19; seed 003 ch. 8, seed-digest §7): while
// the measured phase runs, every period the controller reads the last
// seconds of the run (the engine's per-second histograms and the tier's
// CPU from the monitor), decides with the empirical model or the HPA
// baseline (internal/controller), and carries the decision out by adding
// or removing one lab host of the scaled tier at a time through the same
// path as the add_node and remove_node events (nodes.go). A host takes
// time to come up and serve; that lag is part of what a controller run
// measures. Every decision is recorded with its reasons (runlog); the
// configuration over time is the run's node_change events.

// controllerRun is one run's controller.
type controllerRun struct {
	ex     *executor
	id     int64
	cfg    spec.Controller
	kind   string
	emp    empirical.Config
	auto   *hpa.Autoscaler // kind hpa
	store  *ods.Store      // kind empirical: seeded, then appended live
	ops    []string        // request types, for the throughput vector
	seeded int             // ODS records from the spec's stores
	// lastAction is when the last change of the tier's size took effect
	// (the decision's goroutine only): the empirical controller's
	// cool-down and its sensor's restarted window count from it.
	lastAction time.Time

	mu      sync.Mutex
	nodes   int                  // the tier's hosts now (the controller's goroutine refreshes it)
	cost    float64              // every host's price per hour now
	seconds []sensor.Second      // measured seconds, oldest first
	tput    map[string][]float64 // per op, answered req/s per second
	cpu     map[string][]cpuAt   // tier host -> CPU utilisation samples
}

type cpuAt struct {
	at   time.Time
	util float64 // 0..1 of the host's vCPUs
}

// seedODS reads the spec's ODS stores once per treatment: every measured
// second of their completed runs becomes a record whose configuration is
// the number of the tier's hosts the run had.
func (ex *executor) seedODS() ([]ods.Record, error) {
	c := ex.s.Controller
	if c == nil || c.Kind != "empirical" || len(c.ODS.Stores) == 0 {
		return nil, nil
	}
	if ex.odsSeed != nil {
		return ex.odsSeed, nil
	}
	base := ""
	if ex.s.File != "" {
		base = filepath.Dir(ex.s.File)
	}
	o := ods.DefaultOptions()
	o.Sensitive, o.Normal, o.NodeHour = c.Sensor.Sensitive.Duration, c.Sensor.Normal.Duration, c.ODS.NodeHour
	var out []ods.Record
	for i, p := range c.ODS.Stores {
		if !filepath.IsAbs(p) {
			p = filepath.Join(base, p)
		}
		p, err := storePath(p)
		if err != nil {
			return nil, fmt.Errorf("controller.ods.stores[%d]: %w", i, err)
		}
		r, err := results.Open(p)
		if err != nil {
			return nil, fmt.Errorf("controller.ods.stores[%d]: %w", i, err)
		}
		keys := map[string]string{}
		for _, t := range r.Treatments() {
			n := 0
			if t.Lab != nil {
				for _, h := range t.Lab.Hosts {
					if tierHost(c.Tier.Hosts, h) {
						n++
					}
				}
			}
			if n > 0 {
				keys[ods.Key(t)] = tierKey(c.Tier.Hosts, n)
			}
		}
		recs, err := ods.FromResults(r, o)
		_ = r.Close()
		if err != nil {
			return nil, fmt.Errorf("controller.ods.stores[%d]: %w", i, err)
		}
		kept := 0
		for _, rec := range recs {
			if k, ok := keys[rec.Config]; ok {
				rec.Config = k
				out = append(out, rec)
				kept++
			}
		}
		if kept == 0 {
			return nil, fmt.Errorf("controller.ods.stores[%d]: %s has no measured second on lab hosts named %s...; seed the ODS with campaigns whose lab has the tier's hosts", i, p, c.Tier.Hosts)
		}
	}
	ex.odsSeed = out
	return out, nil
}

// storePath resolves an ODS store: a results directory or its store file,
// or a glob of results directories (results/controller-ods-*), of which
// the newest (the last by name: they end in their start time) is taken.
func storePath(p string) (string, error) {
	if strings.ContainsAny(p, "*?[") {
		m, err := filepath.Glob(p)
		if err != nil || len(m) == 0 {
			return "", fmt.Errorf("no results directory matches %s; run the campaign that measures it first", p)
		}
		sort.Strings(m)
		p = m[len(m)-1]
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("no results store at %s; run the campaign that measures it first, or fix the path (relative to the spec file)", p)
	}
	if fi.IsDir() {
		p = filepath.Join(p, StoreFile)
	}
	return p, nil
}

// tierKey is the ODS configuration of n hosts in the tier.
func tierKey(prefix string, n int) string { return fmt.Sprintf("%s=%d", prefix, n) }

// tierNodes reads the node count back from an ODS configuration.
func tierNodes(prefix, key string) (int, bool) {
	v, ok := strings.CutPrefix(key, prefix+"=")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n > 0
}

var trailingDigits = regexp.MustCompile(`[0-9]+$`)

// tierHost says whether host belongs to the tier named prefix: the host
// prefix itself or prefix followed by a number.
func tierHost(prefix, host string) bool {
	rest, ok := strings.CutPrefix(host, prefix)
	return ok && (rest == "" || trailingDigits.MatchString(rest) && strings.TrimLeft(rest, "0123456789") == "")
}

// prepareController readies the run's controller before its load starts
// (nil without a controller): the ODS seeded, the tier found, the
// autoscaler made.
func (ex *executor) prepareController(id int64) (*controllerRun, error) {
	c := ex.s.Controller
	if c == nil {
		return nil, nil
	}
	if ex.setup == nil || ex.setup.Provider == nil {
		return nil, fmt.Errorf("controller: the campaign has no lab to add hosts to")
	}
	if _, ok := ex.setup.Provider.(infra.Scaler); !ok {
		return nil, fmt.Errorf("controller: the %s provider cannot add or remove hosts", ex.setup.Provider.Name())
	}
	c.Defaults()
	cr := &controllerRun{ex: ex, id: id, cfg: *c, kind: c.Kind, tput: map[string][]float64{}, cpu: map[string][]cpuAt{}}
	for _, op := range ex.ops {
		cr.ops = append(cr.ops, ex.wcfg.OpName(op))
	}
	seed, err := ex.seedODS()
	if err != nil {
		return nil, err
	}
	switch c.Kind {
	case "empirical":
		cr.emp = empirical.Config{
			Period:    c.Period.Duration,
			Sensor:    sensor.Config{Window: c.Sensor.Window.Duration, Sensitive: c.Sensor.Sensitive.Duration, Normal: c.Sensor.Normal.Duration, Goal: c.Sensor.Goal},
			Forecast:  forecast.Config{Components: c.Forecast.Components, MinShare: c.Forecast.MinShare, MinHistory: c.Forecast.MinHistory},
			Horizon:   c.ODS.Horizon.Duration,
			Query:     ods.Query{Alpha: c.ODS.Alpha, Radius: c.ODS.Radius, MinSupport: c.ODS.MinSupport, MinSLA: c.ODS.MinSLA},
			DownBelow: c.HSMDownBelow,
			Cooldown:  c.Cooldown.Duration,
		}
		if err := cr.emp.Check(); err != nil {
			return nil, fmt.Errorf("controller: %w", err)
		}
		cr.store = ods.New(seed...)
	case "hpa":
		h := hpa.Default()
		h.Min, h.Max, h.Target, h.Tolerance, h.Compression = c.Tier.Min, c.Tier.Max, c.HPA.Target, *c.HPA.Tolerance, c.HPA.Compression
		h.Up.Stabilization, h.Down.Stabilization = c.HPA.UpStabilization.Duration, c.HPA.DownStabilization.Duration
		h.SyncPeriod = c.HPA.SyncPeriod.Duration
		if cr.auto, err = hpa.New(h); err != nil {
			return nil, fmt.Errorf("controller.hpa: %w", err)
		}
		if c.Cooldown.Duration > 0 {
			// A factor on controller.kind shares the section; say why the
			// HPA's runs do not cool down.
			ex.prog.Note(fmt.Sprintf("controller: cooldown %v applies to the empirical controller only; the HPA keeps Kubernetes' stabilisation windows (hpa.up_stabilization, hpa.down_stabilization)", c.Cooldown.Duration))
		}
	default:
		return nil, fmt.Errorf("controller.kind: %q is not empirical or hpa", c.Kind)
	}
	if m := ex.s.Phases.Measure.Duration; c.Kind == "empirical" && m > 0 && c.Cooldown.Duration >= m {
		ex.prog.Note(fmt.Sprintf("controller: cooldown %v is not shorter than the measured phase (%v): the controller acts at most once per run", c.Cooldown.Duration, m))
	}
	if len(cr.tierHosts()) == 0 {
		return nil, fmt.Errorf("controller.tier.hosts: no lab host is named %s or %s1; add the tier's first host to lab.hosts", c.Tier.Hosts, c.Tier.Hosts)
	}
	cr.refresh()
	cr.seeded = len(seed)
	return cr, nil
}

// refresh caches the tier's size and the hosts' price for the engine's
// and the monitor's goroutines, which must not read the host list while
// the controller changes it.
func (cr *controllerRun) refresh() {
	n, cost := len(cr.tierHosts()), cr.ex.hourlyCost()
	cr.mu.Lock()
	cr.nodes, cr.cost = n, cost
	cr.mu.Unlock()
}

// start records the controller's setup and begins deciding, once per
// period from the measured phase's start; stop ends it. Safe on nil.
func (cr *controllerRun) start(ctx context.Context, measureAt, end time.Time) (stop func()) {
	if cr == nil {
		return func() {}
	}
	c := cr.cfg
	setup := runlog.Setup{Controller: c.Kind, Tier: c.Tier.Hosts, Period: cr.period(), Cooldown: cr.emp.Cooldown, Min: c.Tier.Min, Max: c.Tier.Max,
		Nodes: cr.tierHosts(), Sensitive: c.Sensor.Sensitive.Duration, Normal: c.Sensor.Normal.Duration, NodeCapacity: c.NodeCapacity, ODSRecords: cr.seeded}
	if err := cr.ex.st.AddEvent(store.Event{RunID: cr.id, Time: measureAt, Kind: runlog.SetupKind, Detail: setup.Encode()}); err != nil {
		cr.ex.noteEventProblem(fmt.Sprintf("recording the controller's setup: %v", err))
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		cr.loop(ctx, quit, measureAt, end)
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			wg.Wait()
		})
	}
}

// loop decides once per period from the measured phase's start until its
// end. A decision whose actuation runs past the next period's time is
// followed by the next one at once; periods are not made up.
func (cr *controllerRun) loop(ctx context.Context, quit <-chan struct{}, measureAt, end time.Time) {
	period := cr.period()
	next := measureAt.Add(period)
	for next.Before(end) {
		t := time.NewTimer(time.Until(next))
		select {
		case <-quit:
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		cr.decide(ctx, next)
		for next = next.Add(period); !next.After(time.Now()); next = next.Add(period) {
		}
	}
}

// observe takes one of the engine's measured intervals.
func (cr *controllerRun) observe(t load.Tick) {
	if cr == nil || t.Phase != load.Measure {
		return
	}
	var h *hdrhistogram.Histogram
	var failed int64
	per := map[string]float64{}
	for _, o := range t.Stats {
		failed += o.Errors + o.Dropped
		if o.Hist != nil && o.Hist.TotalCount() > 0 {
			if h == nil {
				h = hdrhistogram.New(o.Hist.LowestTrackableValue(), o.Hist.HighestTrackableValue(), int(o.Hist.SignificantFigures()))
			}
			h.Merge(o.Hist)
		}
		if t.Duration > 0 {
			per[cr.ex.wcfg.OpName(o.Op)] += float64(o.Count) / t.Duration.Seconds()
		}
	}
	cr.mu.Lock()
	defer cr.mu.Unlock()
	cr.seconds = append(cr.seconds, sensor.Second{Start: t.At, Hist: h, Errors: failed})
	for _, op := range cr.ops {
		cr.tput[op] = append(cr.tput[op], per[op])
	}
	if cr.store != nil {
		one := []sensor.Second{cr.seconds[len(cr.seconds)-1]}
		if sens, ok := sensor.Satisfaction(one, cr.cfg.Sensor.Sensitive.Duration); ok {
			norm, _ := sensor.Satisfaction(one, cr.cfg.Sensor.Normal.Duration)
			v := ods.Vector{}
			for op, x := range per {
				v[op] = x
			}
			cr.store.Append(ods.Record{Time: t.At, Config: tierKey(cr.cfg.Tier.Hosts, cr.nodes), Cost: cr.cost,
				Sensitive: sens, Normal: norm, Throughput: v, Source: "live"})
		}
	}
}

// samples takes the monitor's samples: the tier hosts' CPU.
func (cr *controllerRun) samples(ss []monitor.Sample) {
	if cr == nil {
		return
	}
	cr.mu.Lock()
	defer cr.mu.Unlock()
	for _, s := range ss {
		if s.Resource == monitor.ResourceCPU && s.Metric == monitor.CPUUtilPct && tierHost(cr.cfg.Tier.Hosts, s.Host) {
			cr.cpu[s.Host] = append(cr.cpu[s.Host], cpuAt{at: s.Start, util: s.Value / 100})
		}
	}
}

// tierHosts are the tier's lab hosts now, in name order.
func (cr *controllerRun) tierHosts() []string {
	var out []string
	for _, h := range cr.ex.setup.Hosts {
		if tierHost(cr.cfg.Tier.Hosts, h.Name()) && !h.Facts().Removed {
			out = append(out, h.Name())
		}
	}
	sort.Slice(out, func(i, j int) bool { return hostOrder(out[i]) < hostOrder(out[j]) })
	return out
}

// hostOrder sorts app, app1, app2, ..., app10 by their numbers.
func hostOrder(h string) int {
	n, _ := strconv.Atoi(trailingDigits.FindString(h))
	return n
}

// hourlyCost is what every host of the campaign costs per hour now.
func (ex *executor) hourlyCost() float64 {
	var sum float64
	for _, h := range ex.setup.Hosts {
		if !h.Facts().Removed {
			sum += h.PricePerHour()
		}
	}
	return sum
}

// utilisation is the tier's mean CPU over the window ending at now, over
// the hosts in it now; -1 when none was sampled.
func (cr *controllerRun) utilisation(hosts []string, now time.Time, window time.Duration) float64 {
	var sum float64
	var n int
	from := now.Add(-window)
	for _, h := range hosts {
		for _, s := range cr.cpu[h] {
			if !s.at.Before(from) && s.at.Before(now) {
				sum += s.util
				n++
			}
		}
	}
	if n == 0 {
		return -1
	}
	return sum / float64(n)
}

// period is the time between decisions: controller.period for the
// empirical controller, the HPA's compressed sync period for the HPA
// (Kubernetes evaluates every 15 s whatever another controller does).
// The CPU a decision reads is averaged over the same span.
func (cr *controllerRun) period() time.Duration {
	if cr.auto != nil {
		return cr.auto.Interval()
	}
	return cr.cfg.Period.Duration
}

// decide takes and carries out one decision, and records it.
func (cr *controllerRun) decide(ctx context.Context, now time.Time) {
	c := cr.cfg
	hosts := cr.tierHosts()
	n := len(hosts)
	cr.mu.Lock()
	secs := slices.Clone(cr.seconds)
	hist := map[string][]float64{}
	for op, xs := range cr.tput {
		hist[op] = slices.Clone(xs)
	}
	util := cr.utilisation(hosts, now, cr.period())
	cr.mu.Unlock()

	e := runlog.Entry{Controller: cr.kind, At: now, Tier: c.Tier.Hosts, Nodes: n, Target: n, Utilisation: util}
	r := sensor.Config{Window: c.Sensor.Window.Duration, Sensitive: c.Sensor.Sensitive.Duration, Normal: c.Sensor.Normal.Duration, Goal: c.Sensor.Goal}.Read(secs, now)
	e.Requests, e.Sensitive, e.Normal = r.Requests, r.Sensitive, r.Normal
	e.Throughput = answered(secs, r.From, now, cr.ex.s.Interval.Duration)
	switch cr.kind {
	case "empirical":
		d := cr.emp.Decide(cr.store, empirical.Input{
			Now: now, Seconds: secs, History: hist, Current: tierKey(c.Tier.Hosts, n), CurrentCost: cr.ex.hourlyCost(),
			Tiers:      []empirical.Tier{{Name: c.Tier.Hosts, Nodes: n, CPU: max(util, 0), Min: c.Tier.Min, Max: c.Tier.Max}},
			LastAction: cr.lastAction,
		})
		// With a cool-down the sensor's window restarts at the last
		// action; record what the decision judged.
		r = d.Reading
		e.Requests, e.Sensitive, e.Normal = r.Requests, r.Sensitive, r.Normal
		e.Throughput = answered(secs, r.From, now, cr.ex.s.Interval.Duration)
		e.Path, e.Action, e.Reason, e.Forecast, e.Records = string(d.Path), string(d.Action), d.Reason, d.Forecast.Total(), d.Answer.Within
		switch d.Action {
		case empirical.Configure:
			e.Config = d.Config
			e.Support = d.Answer.Choice.Support
			for _, g := range d.Answer.Groups {
				if g.Config == d.Config {
					e.Support = g.Support
				}
			}
			if k, ok := tierNodes(c.Tier.Hosts, d.Config); ok {
				e.Target = k
			}
		case empirical.Fallback:
			e.Target = n + d.Delta
		}
	case "hpa":
		if util < 0 {
			e.Action, e.Reason = "hold", "no CPU sample of the tier's hosts in the last period: the HPA skips this evaluation"
			break
		}
		d := cr.auto.Decide(now, n, util)
		e.Action, e.Target = "scale", d.Desired
		if d.Desired == n {
			e.Action = "hold"
		}
		e.Reason = d.Reason
	}
	if e.Target < c.Tier.Min || e.Target > c.Tier.Max {
		bounded := min(max(e.Target, c.Tier.Min), c.Tier.Max)
		e.Reason += fmt.Sprintf("; the tier's bounds [%d, %d] keep it at %d", c.Tier.Min, c.Tier.Max, bounded)
		e.Target = bounded
		if bounded == n {
			e.Action = "limit"
		}
	}
	if e.Target != n {
		cr.ex.prog.Note(fmt.Sprintf("controller (%s): %s %d -> %d: %s", cr.kind, c.Tier.Hosts, n, e.Target, e.Reason))
		if err := cr.scaleTo(ctx, e.Target); err != nil {
			e.Error = err.Error()
		}
		// The action takes effect once scaleTo has brought the hosts up
		// (or taken them out); a partial change still counts.
		if len(cr.tierHosts()) != n {
			cr.lastAction = time.Now()
		}
		cr.refresh()
	}
	if err := cr.ex.st.AddEvent(store.Event{RunID: cr.id, Time: now, Kind: runlog.EventKind, Detail: e.Encode()}); err != nil {
		cr.ex.noteEventProblem(fmt.Sprintf("recording a controller decision: %v", err))
	}
}

// answered is the answered requests per second over the measured
// intervals (each interval long) that start in [from, now). It divides by
// the intervals present, not by now - from: the engine hands an interval
// over once it has closed, so the last one or two of the window are
// usually still to come when the controller decides, and dividing by the
// whole window understated a steady 900 req/s as 540.
func answered(secs []sensor.Second, from, now time.Time, interval time.Duration) float64 {
	var n, k int64
	for _, s := range secs {
		if !s.Start.Before(from) && s.Start.Before(now) {
			k++
			if s.Hist != nil {
				n += s.Hist.TotalCount()
			}
		}
	}
	if k == 0 || interval <= 0 {
		return 0
	}
	return float64(n) / (float64(k) * interval.Seconds())
}

// scaleTo adds or removes the tier's hosts one at a time until it has
// want: new hosts take the lowest free number, and the highest-numbered
// host leaves first (never the tier's first host).
func (cr *controllerRun) scaleTo(ctx context.Context, want int) error {
	c := cr.cfg
	for {
		hosts := cr.tierHosts()
		n := len(hosts)
		if n == want || ctx.Err() != nil {
			return ctx.Err()
		}
		var e infra.Event
		if n < want {
			e = infra.Event{Action: actAddNode, Host: cr.freeName(hosts), Type: c.Tier.Type}
			if e.Type == "" {
				if h, err := cr.ex.setup.Hosts.Get(hosts[0]); err == nil {
					e.Type = h.Facts().Type
				}
			}
		} else {
			e = infra.Event{Action: actRemoveNode, Host: hosts[n-1]}
		}
		if _, err := cr.ex.applyNodeEvent(ctx, cr.id, e); err != nil {
			return fmt.Errorf("%s %s: %w", e.Action, e.Host, err)
		}
	}
}

// freeName is the next host name of the tier: prefix plus the lowest
// number above 1 that no host has (the tier's first host may be the bare
// prefix or prefix1).
func (cr *controllerRun) freeName(hosts []string) string {
	p := cr.cfg.Tier.Hosts
	for i := 2; ; i++ {
		name := p + strconv.Itoa(i)
		if !slices.Contains(hosts, name) && !cr.ex.hostNamed(name) {
			return name
		}
	}
}
