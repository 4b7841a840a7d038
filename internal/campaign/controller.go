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
// seconds of the run (the engine's per-second histograms and the tiers'
// CPU from the monitor), decides with the empirical model or the HPA
// baseline (internal/controller), and carries the decision out by adding
// or removing one lab host of a scaled tier at a time through the same
// path as the add_node and remove_node events (nodes.go). A controller
// may scale several tiers (an application tier and a database tier): the
// ODS's configurations are then every tier's node count together, the
// horizontal model picks among the tiers by their CPU, and the HPA
// baseline has one autoscaler per tier, as Kubernetes has one per
// deployment. A host takes
// time to come up and serve; that lag is part of what a controller run
// measures. Every decision is recorded with its reasons (runlog); the
// configuration over time is the run's node_change events.

// controllerRun is one run's controller.
type controllerRun struct {
	ex     *executor
	id     int64
	cfg    spec.Controller
	kind   string
	tiers  []spec.ControllerTier // the scaled tiers, with their defaults
	emp    empirical.Config
	auto   []*hpa.Autoscaler // kind hpa: one per tier
	store  *ods.Store        // kind empirical: seeded, then appended live
	ops    []string          // request types, for the throughput vector
	seeded int               // ODS records from the spec's stores
	// lastAction is when the last change of the tier's size took effect
	// (the decision's goroutine only): the empirical controller's
	// cool-down and its sensor's restarted window count from it.
	lastAction time.Time

	mu      sync.Mutex
	config  string               // the ODS configuration now: every tier's hosts (the controller's goroutine refreshes it)
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
// the number of each tier's hosts the run had.
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
	tiers := c.ScaledTiers()
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
			counts := make([]int, len(tiers))
			if t.Lab != nil {
				for _, h := range t.Lab.Hosts {
					for i, tr := range tiers {
						if tierHost(tr.Hosts, h) {
							counts[i]++
						}
					}
				}
			}
			if !slices.Contains(counts, 0) {
				keys[ods.Key(t)] = configKey(tiers, counts)
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
			var named []string
			for _, tr := range tiers {
				named = append(named, tr.Hosts+"...")
			}
			return nil, fmt.Errorf("controller.ods.stores[%d]: %s has no measured second on lab hosts named %s; seed the ODS with campaigns whose lab has every scaled tier's hosts", i, p, strings.Join(named, " and "))
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

// configKey is the ODS configuration of counts[i] hosts in tiers[i]:
// "app=2", or "app=2,db=1" for several tiers.
func configKey(tiers []spec.ControllerTier, counts []int) string {
	parts := make([]string, len(tiers))
	for i, t := range tiers {
		parts[i] = fmt.Sprintf("%s=%d", t.Hosts, counts[i])
	}
	return strings.Join(parts, ",")
}

// configCounts reads each tier's node count back from an ODS
// configuration; ok is false unless it names every tier, in order, with
// a positive count.
func configCounts(tiers []spec.ControllerTier, key string) ([]int, bool) {
	parts := strings.Split(key, ",")
	if len(parts) != len(tiers) {
		return nil, false
	}
	counts := make([]int, len(tiers))
	for i, t := range tiers {
		v, ok := strings.CutPrefix(parts[i], t.Hosts+"=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n <= 0 {
			return nil, false
		}
		counts[i] = n
	}
	return counts, true
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
	cr := &controllerRun{ex: ex, id: id, cfg: *c, kind: c.Kind, tiers: c.ScaledTiers(), tput: map[string][]float64{}, cpu: map[string][]cpuAt{}}
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
		for _, t := range cr.tiers {
			h := hpa.Default()
			h.Min, h.Max, h.Target, h.Tolerance, h.Compression = t.Min, t.Max, c.HPA.Target, *c.HPA.Tolerance, c.HPA.Compression
			h.Up.Stabilization, h.Down.Stabilization = c.HPA.UpStabilization.Duration, c.HPA.DownStabilization.Duration
			h.SyncPeriod = c.HPA.SyncPeriod.Duration
			a, err := hpa.New(h)
			if err != nil {
				return nil, fmt.Errorf("controller.hpa (tier %s): %w", t.Hosts, err)
			}
			cr.auto = append(cr.auto, a)
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
	for i, t := range cr.tiers {
		if len(cr.tierHosts(t.Hosts)) == 0 {
			field := "controller.tier.hosts"
			if len(c.Tiers) > 0 {
				field = fmt.Sprintf("controller.tiers[%d].hosts", i)
			}
			return nil, fmt.Errorf("%s: no lab host is named %s or %s1; add the tier's first host to lab.hosts", field, t.Hosts, t.Hosts)
		}
	}
	cr.refresh()
	cr.seeded = len(seed)
	return cr, nil
}

// refresh caches the configuration and the hosts' price for the
// engine's and the monitor's goroutines, which must not read the host
// list while the controller changes it.
func (cr *controllerRun) refresh() {
	config, cost := cr.currentConfig(), cr.ex.hourlyCost()
	cr.mu.Lock()
	cr.config, cr.cost = config, cost
	cr.mu.Unlock()
}

// counts are each tier's hosts now.
func (cr *controllerRun) counts() []int {
	out := make([]int, len(cr.tiers))
	for i, t := range cr.tiers {
		out[i] = len(cr.tierHosts(t.Hosts))
	}
	return out
}

// currentConfig is the ODS configuration running now.
func (cr *controllerRun) currentConfig() string { return configKey(cr.tiers, cr.counts()) }

// start records the controller's setup and begins deciding, once per
// period from the measured phase's start; stop ends it. Safe on nil.
func (cr *controllerRun) start(ctx context.Context, measureAt, end time.Time) (stop func()) {
	if cr == nil {
		return func() {}
	}
	c := cr.cfg
	first := cr.tiers[0]
	setup := runlog.Setup{Controller: c.Kind, Tier: first.Hosts, Period: cr.period(), Cooldown: cr.emp.Cooldown, Min: first.Min, Max: first.Max,
		Nodes: cr.tierHosts(first.Hosts), Sensitive: c.Sensor.Sensitive.Duration, Normal: c.Sensor.Normal.Duration, NodeCapacity: first.NodeCapacity, ODSRecords: cr.seeded}
	if len(cr.tiers) > 1 {
		for _, t := range cr.tiers {
			setup.Tiers = append(setup.Tiers, runlog.TierSetup{Tier: t.Hosts, Min: t.Min, Max: t.Max, Nodes: cr.tierHosts(t.Hosts), NodeCapacity: t.NodeCapacity})
		}
	}
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
			cr.store.Append(ods.Record{Time: t.At, Config: cr.config, Cost: cr.cost,
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
		if s.Resource == monitor.ResourceCPU && s.Metric == monitor.CPUUtilPct && cr.inSomeTier(s.Host) {
			cr.cpu[s.Host] = append(cr.cpu[s.Host], cpuAt{at: s.Start, util: s.Value / 100})
		}
	}
}

func (cr *controllerRun) inSomeTier(host string) bool {
	for _, t := range cr.tiers {
		if tierHost(t.Hosts, host) {
			return true
		}
	}
	return false
}

// tierHosts are the lab hosts of the tier named prefix now, in name order.
func (cr *controllerRun) tierHosts(prefix string) []string {
	var out []string
	for _, h := range cr.ex.setup.Hosts {
		if tierHost(prefix, h.Name()) && !h.Facts().Removed {
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
	if len(cr.auto) > 0 {
		return cr.auto[0].Interval()
	}
	return cr.cfg.Period.Duration
}

// tierNow is one scaled tier at a decision.
type tierNow struct {
	hosts  []string
	util   float64 // mean CPU over the last period; -1 = not sampled
	target int
}

// decide takes and carries out one decision, and records it.
func (cr *controllerRun) decide(ctx context.Context, now time.Time) {
	c := cr.cfg
	ts := make([]tierNow, len(cr.tiers))
	counts := make([]int, len(cr.tiers))
	for i, t := range cr.tiers {
		ts[i].hosts = cr.tierHosts(t.Hosts)
		counts[i] = len(ts[i].hosts)
		ts[i].target = counts[i]
	}
	cr.mu.Lock()
	secs := slices.Clone(cr.seconds)
	hist := map[string][]float64{}
	for op, xs := range cr.tput {
		hist[op] = slices.Clone(xs)
	}
	for i := range ts {
		ts[i].util = cr.utilisation(ts[i].hosts, now, cr.period())
	}
	cr.mu.Unlock()

	e := runlog.Entry{Controller: cr.kind, At: now}
	r := sensor.Config{Window: c.Sensor.Window.Duration, Sensitive: c.Sensor.Sensitive.Duration, Normal: c.Sensor.Normal.Duration, Goal: c.Sensor.Goal}.Read(secs, now)
	e.Requests, e.Sensitive, e.Normal = r.Requests, r.Sensitive, r.Normal
	e.Throughput = answered(secs, r.From, now, cr.ex.s.Interval.Duration)
	switch cr.kind {
	case "empirical":
		tiers := make([]empirical.Tier, len(cr.tiers))
		for i, t := range cr.tiers {
			tiers[i] = empirical.Tier{Name: t.Hosts, Nodes: counts[i], CPU: max(ts[i].util, 0), Min: t.Min, Max: t.Max}
		}
		d := cr.emp.Decide(cr.store, empirical.Input{
			Now: now, Seconds: secs, History: hist, Current: configKey(cr.tiers, counts), CurrentCost: cr.ex.hourlyCost(),
			Tiers: tiers, LastAction: cr.lastAction,
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
			if ks, ok := configCounts(cr.tiers, d.Config); ok {
				for i := range ts {
					ts[i].target = ks[i]
				}
			}
		case empirical.Fallback:
			for i, t := range cr.tiers {
				if t.Hosts == d.Tier {
					ts[i].target += d.Delta
				}
			}
		}
	case "hpa":
		// One autoscaler per tier, each on its own tier's CPU.
		var reasons []string
		e.Action = "hold"
		for i, t := range cr.tiers {
			why := ""
			if ts[i].util < 0 {
				why = "no CPU sample of the tier's hosts in the last period: the HPA skips this evaluation"
			} else {
				d := cr.auto[i].Decide(now, counts[i], ts[i].util)
				ts[i].target, why = d.Desired, d.Reason
				if d.Desired != counts[i] {
					e.Action = "scale"
				}
			}
			if len(cr.tiers) > 1 {
				why = t.Hosts + ": " + why
			}
			reasons = append(reasons, why)
		}
		e.Reason = strings.Join(reasons, "; ")
	}
	wanted := false
	for i, t := range cr.tiers {
		wanted = wanted || ts[i].target != counts[i]
		if ts[i].target < t.Min || ts[i].target > t.Max {
			bounded := min(max(ts[i].target, t.Min), t.Max)
			e.Reason += fmt.Sprintf("; the %s tier's bounds [%d, %d] keep it at %d", t.Hosts, t.Min, t.Max, bounded)
			ts[i].target = bounded
		}
	}
	changed := false
	for i := range ts {
		changed = changed || ts[i].target != counts[i]
	}
	if wanted && !changed {
		e.Action = "limit"
	}
	cr.record(&e, ts, counts)
	if changed {
		var moves []string
		for i, t := range cr.tiers {
			if ts[i].target != counts[i] {
				moves = append(moves, fmt.Sprintf("%s %d -> %d", t.Hosts, counts[i], ts[i].target))
			}
		}
		cr.ex.prog.Note(fmt.Sprintf("controller (%s): %s: %s", cr.kind, strings.Join(moves, ", "), e.Reason))
		// Tiers that grow first, then those that shrink: the system
		// keeps its capacity while it changes.
		var errs []string
		for _, grow := range []bool{true, false} {
			for i, t := range cr.tiers {
				if (ts[i].target > counts[i]) != grow || ts[i].target == counts[i] {
					continue
				}
				if err := cr.scaleTo(ctx, t, ts[i].target); err != nil {
					errs = append(errs, err.Error())
				}
			}
		}
		e.Error = strings.Join(errs, "; ")
		// The action takes effect once scaleTo has brought the hosts up
		// (or taken them out); a partial change still counts.
		if !slices.Equal(cr.counts(), counts) {
			cr.lastAction = time.Now()
		}
		cr.refresh()
	}
	if err := cr.ex.st.AddEvent(store.Event{RunID: cr.id, Time: now, Kind: runlog.EventKind, Detail: e.Encode()}); err != nil {
		cr.ex.noteEventProblem(fmt.Sprintf("recording a controller decision: %v", err))
	}
}

// record fills the entry's tiers: every tier of a controller of several,
// and in the flat fields the first tier the decision changes (or the
// first tier).
func (cr *controllerRun) record(e *runlog.Entry, ts []tierNow, counts []int) {
	shown := 0
	for i := range ts {
		if ts[i].target != counts[i] {
			shown = i
			break
		}
	}
	e.Tier, e.Nodes, e.Target, e.Utilisation = cr.tiers[shown].Hosts, counts[shown], ts[shown].target, ts[shown].util
	if len(cr.tiers) > 1 {
		for i, t := range cr.tiers {
			e.Tiers = append(e.Tiers, runlog.TierState{Tier: t.Hosts, Nodes: counts[i], Target: ts[i].target, Utilisation: ts[i].util})
		}
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
func (cr *controllerRun) scaleTo(ctx context.Context, tier spec.ControllerTier, want int) error {
	for {
		hosts := cr.tierHosts(tier.Hosts)
		n := len(hosts)
		if n == want || ctx.Err() != nil {
			return ctx.Err()
		}
		var e infra.Event
		if n < want {
			e = infra.Event{Action: actAddNode, Host: cr.freeName(tier.Hosts, hosts), Type: tier.Type}
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
func (cr *controllerRun) freeName(p string, hosts []string) string {
	for i := 2; ; i++ {
		name := p + strconv.Itoa(i)
		if !slices.Contains(hosts, name) && !cr.ex.hostNamed(name) {
			return name
		}
	}
}
