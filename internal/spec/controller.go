package spec

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// hostPrefix is a lab host name without its number.
var hostPrefix = regexp.MustCompile(`^[a-z][a-z0-9-]{0,15}$`)

// Controller is the controller: section: an elastic controller scales one
// tier of lab hosts, or several, while the load runs (docs/controller.md; seed 003 ch.
// 8, seed-digest §7). Every constant has the seed's value (the empirical
// controller) or Kubernetes' (the HPA baseline) as its default:
//
//	controller:
//	  kind: empirical          # or hpa
//	  period: 30s              # a decision every period
//	  cooldown: 0s             # no action for this long after one (empirical only)
//	  tier: {hosts: app, type: app1x, min: 1, max: 4}
//	  # or several tiers, each with its own bounds and node capacity:
//	  # tiers: [{hosts: app, max: 3, node_capacity: 150}, {hosts: db, max: 3, node_capacity: 400}]
//	  sensor: {window: 30s, sensitive: 500ms, normal: 1s, goal: 0.9}
//	  ods: {stores: [results/plan.db], radius: 50, alpha: 0, min_support: 30, min_sla: 0.9, horizon: 30s}
//	  forecast: {components: 3, min_share: 0.1, min_history: 60}
//	  hpa: {target: 0.6, tolerance: 0.1, up_stabilization: 0s, down_stabilization: 300s, compression: 1, sync_period: 15s}
//	  node_capacity: 120       # req/s one node serves within the SLA: the demand the judge compares with
//
// Cooldown: after the empirical controller adds or removes nodes, it takes
// no further action until cooldown has passed since the action took
// effect, and its sensor judges only seconds measured after the action
// (earlier ones describe a tier that no longer exists). The HPA has its
// own stabilisation windows and ignores it, as Kubernetes' HPA would.
type Controller struct {
	Kind     string         `yaml:"kind"`     // required: empirical | hpa
	Period   Duration       `yaml:"period"`   // default 30s (seed 003)
	Cooldown Duration       `yaml:"cooldown"` // default 0 (the seed has none); empirical only
	Tier     ControllerTier `yaml:"tier"`
	// Tiers are several scaled tiers (seed 003's n-tier systems: an
	// application tier and a database tier); give tier or tiers. The
	// ODS's configurations are then every tier's node count together.
	Tiers    []ControllerTier   `yaml:"tiers"`
	Sensor   ControllerSensor   `yaml:"sensor"`
	ODS      ControllerODS      `yaml:"ods"`
	Forecast ControllerForecast `yaml:"forecast"`
	HPA      ControllerHPA      `yaml:"hpa"`
	// NodeCapacity is the throughput one node of the tier serves within
	// the SLA (measure it with headroom probe); the judge's demand in
	// nodes is the offered rate over it. 0 = no elasticity metrics.
	NodeCapacity float64 `yaml:"node_capacity"`
	// HSMDownBelow bounds the horizontal model's scale-down: a tier
	// shrinks only if its CPU with one node less stays below this
	// (internal/controller/empirical); default 0.5, 0 is not allowed
	// (write 1 for no bound).
	HSMDownBelow float64 `yaml:"hsm_down_below"`
}

// ControllerTier is the scaled tier: lab hosts named Hosts, Hosts1,
// Hosts2, ...; the controller adds hosts of Type (default: the type of
// the tier's first host) and keeps between Min and Max of them.
type ControllerTier struct {
	Hosts string `yaml:"hosts"` // required: the lab host name prefix
	Type  string `yaml:"type"`
	Min   int    `yaml:"min"` // default 1
	Max   int    `yaml:"max"` // default 4
	// NodeCapacity is the req/s one node of this tier serves within the
	// SLA (with tiers:; a single tier: takes controller.node_capacity).
	NodeCapacity float64 `yaml:"node_capacity"`
}

// ScaledTiers are the tiers the controller scales, with their defaults:
// tiers, or the single tier with controller.node_capacity.
func (c *Controller) ScaledTiers() []ControllerTier {
	if len(c.Tiers) > 0 {
		return c.Tiers
	}
	t := c.Tier
	if t.NodeCapacity == 0 {
		t.NodeCapacity = c.NodeCapacity
	}
	return []ControllerTier{t}
}

func (t *ControllerTier) defaults() {
	if t.Min == 0 {
		t.Min = 1
	}
	if t.Max == 0 {
		t.Max = max(4, t.Min)
	}
}

// ControllerSensor is the empirical controller's sensor.
type ControllerSensor struct {
	Window    Duration `yaml:"window"`    // default 30s
	Sensitive Duration `yaml:"sensitive"` // default 500ms
	Normal    Duration `yaml:"normal"`    // default 1s
	Goal      float64  `yaml:"goal"`      // default 0.9
}

// ControllerODS is the operational data store and its query.
type ControllerODS struct {
	// Stores are results stores (paths relative to the spec file, or
	// postgres:// URLs are not accepted here) whose measured seconds seed
	// the store; the running campaign's own seconds are appended live.
	Stores     []string `yaml:"stores"`
	Radius     float64  `yaml:"radius"`      // req/s; default 50
	Alpha      float64  `yaml:"alpha"`       // default 0
	MinSupport int      `yaml:"min_support"` // default 30
	MinSLA     float64  `yaml:"min_sla"`     // default 0.9
	Horizon    Duration `yaml:"horizon"`     // default: the period
	NodeHour   float64  `yaml:"node_hour"`   // $ per node-hour without catalog prices; default 4
}

// ControllerForecast is the FFT forecast's constants.
type ControllerForecast struct {
	Components int     `yaml:"components"`  // default 3
	MinShare   float64 `yaml:"min_share"`   // default 0.1
	MinHistory int     `yaml:"min_history"` // samples; default 60
}

// ControllerHPA is the baseline's configuration (Kubernetes' defaults).
type ControllerHPA struct {
	Target            float64   `yaml:"target"`             // utilisation, default 0.6
	Tolerance         *float64  `yaml:"tolerance"`          // default 0.1
	UpStabilization   Duration  `yaml:"up_stabilization"`   // default 0
	DownStabilization *Duration `yaml:"down_stabilization"` // default 300s
	Compression       float64   `yaml:"compression"`        // default 1 (real time)
	// SyncPeriod is how often the HPA decides, over CPU averaged over the
	// same span (Kubernetes' --horizontal-pod-autoscaler-sync-period),
	// divided by Compression like its windows; default 15s. The HPA does
	// not decide at controller.period, which is the empirical
	// controller's.
	SyncPeriod Duration `yaml:"sync_period"`
}

// Defaults fills the controller section's defaults; it is idempotent.
func (c *Controller) Defaults() {
	if c.Period.Duration == 0 {
		c.Period.Duration = 30 * time.Second
	}
	if c.HSMDownBelow == 0 {
		c.HSMDownBelow = 0.5
	}
	c.Tier.defaults()
	for i := range c.Tiers {
		c.Tiers[i].defaults()
	}
	s := &c.Sensor
	if s.Window.Duration == 0 {
		s.Window.Duration = 30 * time.Second
	}
	if s.Sensitive.Duration == 0 {
		s.Sensitive.Duration = 500 * time.Millisecond
	}
	if s.Normal.Duration == 0 {
		s.Normal.Duration = time.Second
	}
	if s.Goal == 0 {
		s.Goal = 0.9
	}
	o := &c.ODS
	if o.Radius == 0 {
		o.Radius = 50
	}
	if o.MinSupport == 0 {
		o.MinSupport = 30
	}
	if o.MinSLA == 0 {
		o.MinSLA = 0.9
	}
	if o.Horizon.Duration == 0 {
		o.Horizon.Duration = c.Period.Duration
	}
	if o.NodeHour == 0 {
		o.NodeHour = 4
	}
	f := &c.Forecast
	if f.Components == 0 {
		f.Components = 3
	}
	if f.MinShare == 0 {
		f.MinShare = 0.1
	}
	if f.MinHistory == 0 {
		f.MinHistory = 60
	}
	h := &c.HPA
	if h.Target == 0 {
		h.Target = 0.6
	}
	if h.Tolerance == nil {
		v := 0.1
		h.Tolerance = &v
	}
	if h.DownStabilization == nil {
		h.DownStabilization = &Duration{300 * time.Second}
	}
	if h.Compression == 0 {
		h.Compression = 1
	}
	if h.SyncPeriod.Duration == 0 {
		h.SyncPeriod.Duration = 15 * time.Second
	}
}

// controller checks the controller section; it runs after the lab's
// checks, and only when the section is given.
func (c *checker) controller(s *Spec) {
	k := s.Controller
	const p = "controller."
	k.Defaults()
	c.oneOf(p+"kind", k.Kind, "empirical", "hpa")
	if s.Lab == nil {
		c.fail("controller", "the controller adds and removes lab hosts, but the spec has no lab: section; add one with the tier's first host (e.g. app1)")
	}
	if s.Load.Model != "open" {
		c.fail("load.model", "a controller run needs an open loop (its offered load must not depend on the system's speed); use model: open with a schedule")
	}
	for i, e := range s.Events {
		if e.Action == eventAddNode || e.Action == eventRemoveNode {
			c.fail(fmt.Sprintf("events[%d].action", i), "%s changes the cluster the controller scales; remove the event or the controller", e.Action)
		}
	}
	if k.Kind == "hpa" && s.Monitor.Enabled != nil && !*s.Monitor.Enabled {
		c.fail("monitor.enabled", "the HPA scales on the tier's CPU, which needs monitoring; remove enabled: false")
	}
	if k.Period.Duration < time.Second {
		c.fail(p+"period", "%v is too short; decisions need at least a second of measurements, e.g. 30s (the seed's) or 5s time-compressed", k.Period.Duration)
	}
	if k.Period.Duration > s.Phases.Measure.Duration && s.Phases.Measure.Duration > 0 {
		c.fail(p+"period", "%v is longer than the measured phase (%v): the controller would never decide; shorten the period or lengthen phases.measure", k.Period.Duration, s.Phases.Measure.Duration)
	}
	if k.Cooldown.Duration < 0 {
		c.fail(p+"cooldown", "%v is negative; give 0 for no cool-down (the seed's behaviour) or how long to wait after an action, e.g. 30s", k.Cooldown.Duration)
	}
	switch {
	case len(k.Tiers) > 0 && k.Tier.Hosts != "":
		c.fail(p+"tier", "the spec gives both tier and tiers; give one tier: section, or list every tier under tiers:")
	case len(k.Tiers) > 0 && k.NodeCapacity != 0:
		c.fail(p+"node_capacity", "with tiers:, each tier serves its own load per node; give tiers[i].node_capacity instead")
	case len(k.Tiers) == 0:
		c.controllerTier(p+"tier.", k.Tier)
	}
	seen := map[string]int{}
	for i, t := range k.Tiers {
		tp := fmt.Sprintf("%stiers[%d].", p, i)
		c.controllerTier(tp, t)
		if j, ok := seen[t.Hosts]; ok {
			c.fail(tp+"hosts", "%q is also tiers[%d].hosts; give each tier its own host name prefix", t.Hosts, j)
		}
		for o, j := range seen {
			if long, short := max(o, t.Hosts), min(o, t.Hosts); o != t.Hosts && strings.HasPrefix(long, short) && strings.Trim(long[len(short):], "0123456789") == "" {
				c.fail(tp+"hosts", "%q and tiers[%d].hosts %q name overlapping hosts (%s2 would be in both tiers); rename one", t.Hosts, j, o, long)
			}
		}
		seen[t.Hosts] = i
	}
	sn := k.Sensor
	switch {
	case sn.Sensitive.Duration < 0 || sn.Normal.Duration < 0 || sn.Window.Duration < 0:
		c.fail(p+"sensor", "the sensor's durations must be positive")
	case sn.Sensitive.Duration > sn.Normal.Duration:
		c.fail(p+"sensor.sensitive", "%v is looser than the normal threshold %v; it must be at most the normal one", sn.Sensitive.Duration, sn.Normal.Duration)
	case !(sn.Goal > 0 && sn.Goal <= 1):
		c.fail(p+"sensor.goal", "%v is not a fraction in (0, 1]; e.g. 0.9", sn.Goal)
	}
	o := k.ODS
	if o.Radius < 0 || o.Alpha < 0 || o.MinSupport < 0 || o.NodeHour < 0 || o.Horizon.Duration < 0 {
		c.fail(p+"ods", "the ODS's radius, alpha, min_support, node_hour and horizon must not be negative")
	}
	if !(o.MinSLA > 0 && o.MinSLA <= 1) {
		c.fail(p+"ods.min_sla", "%v is not a fraction in (0, 1]; e.g. 0.9", o.MinSLA)
	}
	for i, st := range o.Stores {
		if st == "" || strings.Contains(st, "://") {
			c.fail(fmt.Sprintf("%sods.stores[%d]", p, i), "%q is not a results store on this machine; give the path of a results directory or its results.db (relative to the spec file)", st)
		}
	}
	f := k.Forecast
	if f.Components < 0 || f.MinShare < 0 || f.MinShare > 1 || f.MinHistory < 2 {
		c.fail(p+"forecast", "the forecast needs components ≥ 0, min_share in [0, 1] and min_history ≥ 2")
	}
	h := k.HPA
	if !(h.Target > 0 && h.Target <= 1) {
		c.fail(p+"hpa.target", "%v is not a utilisation in (0, 1]; e.g. 0.6 for 60%% CPU", h.Target)
	}
	if *h.Tolerance < 0 || h.UpStabilization.Duration < 0 || h.DownStabilization.Duration < 0 {
		c.fail(p+"hpa", "the HPA's tolerance and stabilisation windows must not be negative")
	}
	if !(h.Compression > 0) {
		c.fail(p+"hpa.compression", "%v is not a positive factor; 1 = real time, 10 = windows ten times shorter", h.Compression)
	} else if every := time.Duration(float64(h.SyncPeriod.Duration) / h.Compression); every < time.Second {
		c.fail(p+"hpa.sync_period", "%v compressed %g times is %v, shorter than the second over which CPU is sampled; lengthen sync_period or compress less", h.SyncPeriod.Duration, h.Compression, every)
	} else if m := s.Phases.Measure.Duration; k.Kind == "hpa" && m > 0 && every > m {
		c.fail(p+"hpa.sync_period", "%v compressed %g times is %v, longer than the measured phase (%v): the HPA would never decide; shorten it or lengthen phases.measure", h.SyncPeriod.Duration, h.Compression, every, m)
	}
	if !(k.HSMDownBelow > 0 && k.HSMDownBelow <= 1) {
		c.fail(p+"hsm_down_below", "%v is not a utilisation in (0, 1]; e.g. 0.5 (1 = shrink whatever the CPU, the seed's rule)", k.HSMDownBelow)
	}
	if k.NodeCapacity < 0 {
		c.fail(p+"node_capacity", "%v is negative; give the req/s one node of the tier serves within the SLA, or leave it out", k.NodeCapacity)
	}
}

// controllerTier checks one scaled tier; p is its field path with a dot.
func (c *checker) controllerTier(p string, t ControllerTier) {
	if t.Hosts == "" {
		c.fail(p+"hosts", "the scaled tier is missing; name its lab hosts' prefix, e.g. hosts: app for app1, app2, ...")
	} else if !hostPrefix.MatchString(t.Hosts) {
		c.fail(p+"hosts", "%q is not a host name prefix; use letters, digits and -", t.Hosts)
	}
	if t.Min < 1 || t.Max < t.Min {
		c.fail(p+"min", "the tier's bounds must satisfy 1 ≤ min ≤ max (min %d, max %d)", t.Min, t.Max)
	}
	if t.Max > 16 {
		c.fail(p+"max", "%d hosts is more than this tool runs in one lab; give at most 16", t.Max)
	}
	if t.NodeCapacity < 0 {
		c.fail(p+"node_capacity", "%v is negative; give the req/s one node of the tier serves within the SLA, or leave it out", t.NodeCapacity)
	}
}
