package bottleneck

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/monitor"
)

// Point is one utilisation observation: the percentage of a resource's
// capacity used over [Start, Start+Period).
type Point struct {
	Start  time.Time
	Period time.Duration
	Util   float64
}

// Series is the utilisation of one resource over time. Resource is
// "host/resource", e.g. "db1/cpu", "db1/disk:vda", "app1/net:eth0"; a
// utilisation derived from a capacity carries a suffix (see Capacities).
type Series struct {
	Resource string
	Points   []Point
}

// Capacities turn rates into utilisations for resources whose monitor
// reports no utilisation of its own. Keys are "host/resource" as in the
// samples (e.g. "app1/net:eth0", "db1/cgroup:/lab/db1"); values are limits.
type Capacities struct {
	// Link is a network interface's capacity in bytes per second in each
	// direction. Utilisation = 100 * max(rx, tx) / Link, as a full-duplex
	// link saturates in one direction. Series name: the key.
	Link map[string]float64
	// IOPS is a volume's provisioned operations per second (a disk:, volume:
	// or cgroup: resource). Utilisation = 100 * (read + write ops) / IOPS.
	// Series name: key + "#iops".
	IOPS map[string]float64
	// Bandwidth is a volume's provisioned throughput in bytes per second.
	// Utilisation = 100 * (read + write bytes) / Bandwidth. Series name:
	// key + "#bw".
	Bandwidth map[string]float64
	// NormalizedIOPS is a volume's provisioned normalized operations per
	// second, one budget for reads and writes, an operation of d KiB
	// counting ceil(d / 256) (seed 000 §4.1, seed-digest §4; a lab volume
	// enforces it so). Utilisation = 100 * (read + write ops) *
	// ceil(mean op size / 256 KiB) / limit, the quantity the pressure
	// analysis judges against the same limit. Series name: key + "#iops".
	NormalizedIOPS map[string]float64
	// Cores is the CPU quota of a cgroup: or proc: resource in cores.
	// Utilisation = cpu_pct / Cores (cpu_pct is percent of one core).
	// Series name: key + "#cpu".
	Cores map[string]float64
}

// Suffixes of the series derived from a capacity.
const (
	SuffixIOPS      = "#iops"
	SuffixBandwidth = "#bw"
	SuffixCores     = "#cpu"
)

// ResourceID is the name of a sample's resource in this package:
// "host/resource".
func ResourceID(host, resource string) string { return host + "/" + resource }

// CapacityStep is the capacities in force from From until the next
// step's From.
type CapacityStep struct {
	From time.Time
	Caps Capacities
}

// CapacitySchedule is capacities that change over time (a volume whose
// provisioned IOPS are raised mid-run), steps in time order. Before the
// first step's From no capacity is known. A schedule of one step with a
// zero From holds fixed capacities.
type CapacitySchedule []CapacityStep

// Fixed is the schedule of capacities that never change.
func Fixed(caps Capacities) CapacitySchedule { return CapacitySchedule{{Caps: caps}} }

// IsLink reports whether id names a link with a capacity in some step.
func (s CapacitySchedule) IsLink(id string) bool {
	for _, st := range s {
		if _, ok := st.Caps.Link[id]; ok {
			return true
		}
	}
	return false
}

// capacityKind is one of Capacities' maps: how its limit turns a
// resource's metrics into a utilisation.
type capacityKind struct {
	what, unit, suffix string
	metrics            []string
	useMax             bool    // max over the metrics (per direction) instead of their sum
	perUnit            float64 // limit = capacity x perUnit, in the metrics' own unit
	of                 func(Capacities) map[string]float64
	// normalizeKiB, when set, makes metrics read ops, write ops, read
	// bytes, write bytes, and the value the ops in normalized units of
	// this many KiB (NormalizedIOPS).
	normalizeKiB float64
}

var capacityKinds = []capacityKind{
	{"link", "bytes per second per direction", "", []string{monitor.NetRxBytes, monitor.NetTxBytes}, true, 1,
		func(c Capacities) map[string]float64 { return c.Link }, 0},
	{"IOPS", "operations per second", SuffixIOPS, []string{monitor.DiskReadOps, monitor.DiskWriteOps}, false, 1,
		func(c Capacities) map[string]float64 { return c.IOPS }, 0},
	{"bandwidth", "bytes per second", SuffixBandwidth, []string{monitor.DiskReadBytes, monitor.DiskWriteBytes}, false, 1,
		func(c Capacities) map[string]float64 { return c.Bandwidth }, 0},
	{"normalized IOPS", "normalized operations per second", SuffixIOPS,
		[]string{monitor.DiskReadOps, monitor.DiskWriteOps, monitor.DiskReadBytes, monitor.DiskWriteBytes}, false, 1,
		func(c Capacities) map[string]float64 { return c.NormalizedIOPS }, esl.DefaultNormalizedOpKiB},
	{"cores", "cores", SuffixCores, []string{monitor.ProcCPUPct}, false, 100,
		func(c Capacities) map[string]float64 { return c.Cores }, 0},
}

// derived is one capacity-based series: the sum (or max) of some metrics of
// one sampled resource divided by a limit that may change over time.
type derived struct {
	id, key string
	kind    capacityKind
}

// meanLimit is the time-weighted mean of d's limit over [start,
// start+period): the operations (or bytes) a resource could serve in an
// interval are the integral of its limit, so an interval in which the
// limit doubled halfway has 1.5 times the first limit. ok is false when
// part of the interval had no limit (before the schedule, or unlimited).
func (d derived) meanLimit(sched CapacitySchedule, start time.Time, period time.Duration) (float64, bool) {
	end := start.Add(period)
	i := sort.Search(len(sched), func(i int) bool { return sched[i].From.After(start) }) - 1
	if i < 0 {
		return 0, false
	}
	var area float64 // limit x nanoseconds
	for ; i < len(sched) && sched[i].From.Before(end); i++ {
		from, to := start, end
		if sched[i].From.After(from) {
			from = sched[i].From
		}
		if i+1 < len(sched) && sched[i+1].From.Before(to) {
			to = sched[i+1].From
		}
		v := d.kind.of(sched[i].Caps)[d.key]
		if !(v > 0) {
			return 0, false
		}
		area += v * d.kind.perUnit * float64(to.Sub(from))
	}
	return area / float64(period), true
}

// FromSamples builds the utilisation series of every resource the samples
// describe (seed-digest §6: all CPUs, disks and network links, and any
// provisioned pool): util_pct of "cpu" (and of each "cpuN" when
// cfg.PerCore), of each "disk:" and "volume:", and the capacity-derived
// utilisations of Capacities. It also returns notes on what it left out
// (a link without a capacity, a capacity without samples). Non-finite
// values and hosts outside cfg.Hosts are skipped; a sample with a
// non-positive period is an error.
func FromSamples(samples []monitor.Sample, caps Capacities, cfg Config) ([]Series, []string, error) {
	return FromSamplesOver(samples, Fixed(caps), cfg)
}

// FromSamplesOver is FromSamples with capacities that change over time:
// each sample's utilisation is its rate over the time-weighted mean of the
// limits in force during its interval (meanLimit). A sample taken where
// its resource had no capacity (unlimited at that time) is left out, with
// a note.
func FromSamplesOver(samples []monitor.Sample, sched CapacitySchedule, cfg Config) ([]Series, []string, error) {
	type key struct{ host, resource, metric string }
	type obs = observation
	byKey := map[key]map[int64]obs{}
	starts := map[int64]time.Time{}
	seenRes := map[string]bool{}
	var nets []string
	for _, s := range samples {
		if s.Period <= 0 {
			return nil, nil, fmt.Errorf("bottleneck: sample %s %s at %s has period %v; every sample needs the positive length of the interval it covers",
				ResourceID(s.Host, s.Resource), s.Metric, s.Start.Format(time.RFC3339Nano), s.Period)
		}
		if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) || !cfg.hostIncluded(s.Host) {
			continue
		}
		k := key{s.Host, s.Resource, s.Metric}
		m := byKey[k]
		if m == nil {
			m = map[int64]obs{}
			byKey[k] = m
		}
		ns := s.Start.UnixNano()
		m[ns] = obs{s.Period, s.Value}
		starts[ns] = s.Start
		id := ResourceID(s.Host, s.Resource)
		if !seenRes[id] && strings.HasPrefix(s.Resource, monitor.ResourceNetPrefix) {
			nets = append(nets, id)
		}
		seenRes[id] = true
	}

	var ders []derived
	for _, kind := range capacityKinds {
		keys := map[string]bool{}
		for _, st := range sched {
			for k, v := range kind.of(st.Caps) {
				if !strings.Contains(k, "/") {
					return nil, nil, fmt.Errorf("bottleneck: %s capacity key %q is not host/resource; write it like db1/%s", kind.what, k, exampleResource(kind.what))
				}
				if !(v > 0) || math.IsInf(v, 1) {
					return nil, nil, fmt.Errorf("bottleneck: %s capacity of %s is %v; give a positive number of %s", kind.what, k, v, kind.unit)
				}
				keys[k] = true
			}
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			ders = append(ders, derived{id: k + kind.suffix, key: k, kind: kind})
		}
	}

	var out []Series
	var notes []string
	// Direct utilisations.
	for k, m := range byKey {
		if k.metric != monitor.CPUUtilPct || !isUtilResource(k.resource, cfg.PerCore) {
			continue
		}
		s := Series{Resource: ResourceID(k.host, k.resource)}
		for ns, o := range m {
			s.Points = append(s.Points, Point{Start: starts[ns], Period: o.period, Util: o.value})
		}
		out = append(out, s)
	}
	// Capacity-derived utilisations: at each start where any of the metrics
	// was sampled, the sum (or max) of those present.
	for _, d := range ders {
		host, res, _ := strings.Cut(d.key, "/")
		var acc map[int64]obs
		if d.kind.normalizeKiB > 0 {
			acc = normalizedOps(byKey[key{host, res, d.kind.metrics[0]}], byKey[key{host, res, d.kind.metrics[1]}],
				byKey[key{host, res, d.kind.metrics[2]}], byKey[key{host, res, d.kind.metrics[3]}], d.kind.normalizeKiB)
		}
		for _, metric := range d.kind.metrics {
			if d.kind.normalizeKiB > 0 {
				break
			}
			if acc == nil {
				acc = map[int64]obs{}
			}
			for ns, o := range byKey[key{host, res, metric}] {
				a, ok := acc[ns]
				switch {
				case !ok:
					a = o
				case d.kind.useMax:
					a.value = math.Max(a.value, o.value)
					a.period = max(a.period, o.period)
				default:
					a.value += o.value
					a.period = max(a.period, o.period)
				}
				acc[ns] = a
			}
		}
		if len(acc) == 0 {
			if !cfg.hostIncluded(host) {
				continue
			}
			notes = append(notes, fmt.Sprintf("%s: a capacity is given but no %s samples were found, so it is left out", d.id, strings.Join(d.kind.metrics, " or ")))
			continue
		}
		s := Series{Resource: d.id}
		unlimited := 0
		for ns, o := range acc {
			limit, ok := d.meanLimit(sched, starts[ns], o.period)
			if !ok {
				unlimited++
				continue
			}
			s.Points = append(s.Points, Point{Start: starts[ns], Period: o.period, Util: 100 * o.value / limit})
		}
		if unlimited > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d of its %d samples fell where it had no capacity (unlimited), so they are left out", d.id, unlimited, len(acc)))
		}
		if len(s.Points) > 0 {
			out = append(out, s)
		}
	}
	for _, id := range nets {
		if !sched.IsLink(id) {
			notes = append(notes, fmt.Sprintf("%s: no link capacity is given, so its utilisation is unknown and it is left out; add its bytes per second to the link capacities", id))
		}
	}
	for i := range out {
		sort.Slice(out[i].Points, func(a, b int) bool { return out[i].Points[a].Start.Before(out[i].Points[b].Start) })
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	for i := 1; i < len(out); i++ {
		if out[i].Resource == out[i-1].Resource {
			return nil, nil, fmt.Errorf("bottleneck: two utilisations are both named %s; give a capacity only for a resource that reports no util_pct of its own", out[i].Resource)
		}
	}
	sort.Strings(notes)
	return out, notes, nil
}

// isUtilResource reports whether a resource's util_pct is a utilisation the
// classification uses: the host CPU, per-core CPUs when asked, disks and
// volumes.
func isUtilResource(resource string, perCore bool) bool {
	switch {
	case resource == monitor.ResourceCPU:
		return true
	case strings.HasPrefix(resource, monitor.ResourceCPU):
		return perCore && isDigits(strings.TrimPrefix(resource, monitor.ResourceCPU))
	case strings.HasPrefix(resource, monitor.ResourceDiskPrefix), strings.HasPrefix(resource, monitor.ResourceVolumePrefix):
		return true
	}
	return false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func exampleResource(what string) string {
	switch what {
	case "link":
		return "net:eth0"
	case "cores":
		return "cgroup:/lab/db1"
	}
	return "disk:vda"
}

// observation is one sample's value and the length of its interval.
type observation struct {
	period time.Duration
	value  float64
}

// normalizedOps is, at each sample start, the reads plus writes per second
// in normalized operations of unitKiB: ops x ceil(mean op size / unit),
// the mean size being bytes over ops of the same interval (seed-digest §4,
// as the pressure analysis counts them). A start without ops counts 0; one
// without byte counts counts each operation as one (sizes unknown).
func normalizedOps(rd, wr, rb, wb map[int64]observation, unitKiB float64) map[int64]observation {
	out := map[int64]observation{}
	for _, ops := range []map[int64]observation{rd, wr} {
		for ns, o := range ops {
			a := out[ns]
			a.value += o.value
			a.period = max(a.period, o.period)
			out[ns] = a
		}
	}
	for ns, a := range out {
		b1, ok1 := rb[ns]
		b2, ok2 := wb[ns]
		if a.value > 0 && (ok1 || ok2) {
			sizeKiB := (b1.value + b2.value) / a.value / 1024
			a.value *= esl.NormalizedOps(max(sizeKiB, 1e-9), unitKiB)
		}
		out[ns] = a
	}
	return out
}
