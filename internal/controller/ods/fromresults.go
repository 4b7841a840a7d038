package ods

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/controller/sensor"
	"github.com/headroom-dev/headroom/internal/results"
)

// Options says how seconds of a results store become records.
type Options struct {
	Sensitive time.Duration // sensitive threshold (seed: 0.5 s)
	Normal    time.Duration // normal threshold (seed: 1 s)
	// NodeHour prices a configuration whose hosts have no catalog price,
	// per node and hour (seed 003: $4).
	NodeHour float64
	Phase    string // the phase whose intervals count (default "measure")
}

// DefaultOptions are seed 003's thresholds and node price.
func DefaultOptions() Options {
	return Options{Sensitive: 500 * time.Millisecond, Normal: time.Second, NodeHour: 4, Phase: "measure"}
}

// FromResults turns every second of every completed run of a results
// store into a record: the throughput of each request type is its
// interval's count over the interval's length, the SLA satisfaction is
// read from the interval histograms (errors count as not satisfied), the
// configuration is the treatment's settings and lab hosts (Key), and the
// cost is the lab hosts' catalog prices in force at that second, else
// NodeHour per node.
func FromResults(r *results.Results, o Options) ([]Record, error) {
	if o.Phase == "" {
		o.Phase = "measure"
	}
	src := filepath.Base(r.Path())
	var out []Record
	for _, run := range r.AllCompletedRuns() {
		t, ok := r.Treatment(run.Treatment)
		if !ok {
			return nil, fmt.Errorf("run %d names treatment %q, which the store does not have", run.ID, run.Treatment)
		}
		ivs, err := r.Intervals(run.ID, o.Phase)
		if err != nil {
			return nil, fmt.Errorf("reading run %d's intervals: %w", run.ID, err)
		}
		type second struct {
			tp     Vector
			hist   *hdrhistogram.Histogram
			errors int64
		}
		secs := map[time.Time]*second{}
		var starts []time.Time
		for _, iv := range ivs {
			s := secs[iv.Start]
			if s == nil {
				s = &second{tp: Vector{}}
				secs[iv.Start] = s
				starts = append(starts, iv.Start)
			}
			if iv.Duration > 0 {
				s.tp[iv.Op] += float64(iv.Count) / iv.Duration.Seconds()
			}
			s.errors += iv.Errors
			if iv.Hist != nil {
				if s.hist == nil {
					s.hist = hdrhistogram.New(iv.Hist.LowestTrackableValue(), iv.Hist.HighestTrackableValue(), int(iv.Hist.SignificantFigures()))
				}
				s.hist.Merge(iv.Hist)
			}
		}
		sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
		key := Key(t)
		for _, at := range starts {
			s := secs[at]
			one := []sensor.Second{{Start: at, Hist: s.hist, Errors: s.errors}}
			sens, ok := sensor.Satisfaction(one, o.Sensitive)
			if !ok {
				continue // no request: nothing observed about this configuration
			}
			norm, _ := sensor.Satisfaction(one, o.Normal)
			out = append(out, Record{
				Time: at, Config: key, Cost: CostPerHour(r, t, at, o.NodeHour),
				Sensitive: sens, Normal: norm, Throughput: s.tp,
				Source: fmt.Sprintf("%s run %d", src, run.ID),
			})
		}
	}
	return out, nil
}

// Key names a treatment's configuration: its settings in path order, then
// its lab hosts. Two treatments with the same settings on the same hosts
// are the same configuration.
func Key(t results.Treatment) string {
	var parts []string
	for _, s := range t.Set {
		parts = append(parts, s.Path+"="+s.Value)
	}
	sort.Strings(parts)
	if t.Lab != nil && len(t.Lab.Hosts) > 0 {
		hosts := append([]string(nil), t.Lab.Hosts...)
		sort.Strings(hosts)
		parts = append(parts, "hosts="+strings.Join(hosts, "+"))
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, ", ")
}

// CostPerHour is what a treatment's configuration costs per hour at t:
// the sum of its lab hosts' prices (with volumes) in force then, or, when
// a host has no price, nodeHour for each of its hosts (at least one).
func CostPerHour(r *results.Results, t results.Treatment, at time.Time, nodeHour float64) float64 {
	var hosts []string
	if t.Lab != nil {
		hosts = t.Lab.Hosts
	}
	if len(hosts) == 0 {
		hosts = t.Target.Hosts
	}
	var sum float64
	priced := len(hosts) > 0
	for _, h := range hosts {
		hl, ok := r.HostLimits(h, at)
		if !ok || hl.PricePerHour <= 0 {
			priced = false
			break
		}
		sum += hl.HourlyCost()
	}
	if priced {
		return sum
	}
	return nodeHour * float64(max(1, len(hosts)))
}
