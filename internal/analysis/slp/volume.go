package slp

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/monitor"
)

// VolumeSecond is what a volume did over one sample interval: reads and
// writes together, per second.
type VolumeSecond struct {
	Start  time.Time
	Period time.Duration
	Ops    float64 // read_ops_per_s + write_ops_per_s
	Bytes  float64 // read_bytes_per_s + write_bytes_per_s
}

// OpSizeKiB is the mean operation size, Bytes / Ops in KiB; NaN without
// operations.
func (v VolumeSecond) OpSizeKiB() float64 {
	if !(v.Ops > 0) {
		return math.NaN()
	}
	return v.Bytes / v.Ops / 1024
}

var volumeMetrics = map[string]bool{
	monitor.DiskReadOps: true, monitor.DiskWriteOps: true,
	monitor.DiskReadBytes: true, monitor.DiskWriteBytes: true,
}

// VolumeObservations joins the read/write ops and bytes samples of one
// volume (one host, resource and source, e.g. "volume:vol-1" or
// "disk:vda") by interval start. Other metrics of the resource are
// ignored. Every interval must carry the same set of these metrics, with at
// least one ops and one bytes metric, so that a missing write sample
// cannot pass for zero writes.
func VolumeObservations(samples []monitor.Sample) ([]VolumeSecond, error) {
	type acc struct {
		v       VolumeSecond
		metrics []string
	}
	byStart := map[int64]*acc{}
	var first *monitor.Sample
	for i := range samples {
		s := samples[i]
		if !volumeMetrics[s.Metric] {
			continue
		}
		if first == nil {
			first = &samples[i]
		} else if s.Host != first.Host || s.Resource != first.Resource || s.Source != first.Source {
			return nil, fmt.Errorf("samples mix volumes (%s %s %s and %s %s %s); select one host, resource and source",
				first.Host, first.Resource, first.Source, s.Host, s.Resource, s.Source)
		}
		if !(s.Value >= 0) || math.IsInf(s.Value, 1) {
			return nil, fmt.Errorf("sample %s at %s is %v; volume rates must be non-negative numbers", s.Metric, s.Start.Format(time.RFC3339), s.Value)
		}
		k := s.Start.UnixNano()
		a := byStart[k]
		if a == nil {
			a = &acc{v: VolumeSecond{Start: s.Start, Period: s.Period}}
			byStart[k] = a
		}
		if s.Period != a.v.Period {
			return nil, fmt.Errorf("the samples at %s have periods %v and %v; select one source", s.Start.Format(time.RFC3339), a.v.Period, s.Period)
		}
		for _, m := range a.metrics {
			if m == s.Metric {
				return nil, fmt.Errorf("two %s samples at %s; select one source", s.Metric, s.Start.Format(time.RFC3339))
			}
		}
		a.metrics = append(a.metrics, s.Metric)
		if s.Metric == monitor.DiskReadOps || s.Metric == monitor.DiskWriteOps {
			a.v.Ops += s.Value
		} else {
			a.v.Bytes += s.Value
		}
	}
	if len(byStart) == 0 {
		return nil, fmt.Errorf("no volume samples; the monitor must record read_ops_per_s, write_ops_per_s, read_bytes_per_s and write_bytes_per_s")
	}
	out := make([]*acc, 0, len(byStart))
	for _, a := range byStart {
		sort.Strings(a.metrics)
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].v.Start.Before(out[j].v.Start) })
	want := strings.Join(out[0].metrics, ", ")
	var hasOps, hasBytes bool
	for _, m := range out[0].metrics {
		isOps := m == monitor.DiskReadOps || m == monitor.DiskWriteOps
		hasOps, hasBytes = hasOps || isOps, hasBytes || !isOps
	}
	if !hasOps || !hasBytes {
		return nil, fmt.Errorf("the volume samples have only %s; the op size needs both ops and bytes per second", want)
	}
	res := make([]VolumeSecond, len(out))
	for i, a := range out {
		if got := strings.Join(a.metrics, ", "); got != want {
			return nil, fmt.Errorf("the interval at %s has %s but the first has %s; every interval needs the same metrics", a.v.Start.Format(time.RFC3339), got, want)
		}
		res[i] = a.v
	}
	if err := opsSeries(res).Check(); err != nil {
		return nil, err
	}
	return res, nil
}

func opsSeries(obs []VolumeSecond) Series {
	s := make(Series, len(obs))
	for i, o := range obs {
		s[i] = Point{Start: o.Start, Period: o.Period, Value: o.Ops}
	}
	return s
}

// OpSizePolicy says at which op size a volume's ESL is taken, since the
// ESL of a volume depends on the op size (seed-digest §4).
type OpSizePolicy int

const (
	// BestSize takes, per quality, the ESL at the candidate op size where
	// its mean is highest: ops/s against the most ops the volume is
	// expected to deliver (small ops), bandwidth against the most bandwidth
	// (large ops). P_op and P_bw then tell which limit is near, as in seed
	// 000 §5.2 (high P_op with low P_bw at 300 PIOPS, the reverse at 1800).
	BestSize OpSizePolicy = iota
	// ObservedSize takes the ESL of each interval at its mean op size
	// (bytes/ops): pressure against what the volume should deliver for the
	// ops actually issued. With an analytical model P_op and P_bw are then
	// equal (the bandwidth ESL is the ops ESL x d); the model's limit says
	// which constraint binds.
	ObservedSize
)

// DefaultOpSizesKiB are the candidate op sizes of BestSize for models
// without benchmarked sizes: the benchmark sizes of seed-digest §4.
var DefaultOpSizesKiB = []float64{4, 32, 64, 256, 1024}

// VolumeOptions configure VolumePressure. The zero value is BestSize over
// an empirical model's benchmarked sizes, else DefaultOpSizesKiB.
type VolumeOptions struct {
	Policy        OpSizePolicy
	CandidatesKiB []float64
}

// VolumeSLP is the pressure on a volume's two qualities. A model without
// one of the qualities leaves its series nil.
type VolumeSLP struct {
	Ops, Bytes Series
	// OpsESL and BytesESL are the ESLs used under BestSize (their Source
	// says from which model and op size); empty under ObservedSize.
	OpsESL, BytesESL esl.ESL
}

// VolumePressure is the SLP series of a volume's ops/s and bandwidth
// (seed-digest §4) with the op-size policy of opts. Under ObservedSize an
// interval without operations has SLP 0 and one with bytes but no
// operations is an error.
func VolumePressure(obs []VolumeSecond, m esl.Model, opts VolumeOptions) (VolumeSLP, error) {
	var out VolumeSLP
	if m == nil {
		return out, fmt.Errorf("no ESL model; load one with esl.Load")
	}
	has := map[esl.Quality]bool{}
	for _, q := range m.Qualities() {
		has[q] = true
	}
	if !has[esl.OpsPerS] && !has[esl.BytesPerS] {
		return out, fmt.Errorf("the ESL model describes neither ops_per_s nor bytes_per_s; give a volume model")
	}
	if opts.Policy != BestSize && opts.Policy != ObservedSize {
		return out, fmt.Errorf("op size policy %d is unknown; use BestSize or ObservedSize", opts.Policy)
	}
	if opts.Policy == BestSize {
		for _, q := range []esl.Quality{esl.OpsPerS, esl.BytesPerS} {
			if !has[q] {
				continue
			}
			e, err := bestESL(m, q, opts.CandidatesKiB)
			if err != nil {
				return out, err
			}
			if q == esl.OpsPerS {
				out.OpsESL = e
			} else {
				out.BytesESL = e
			}
		}
	}
	for _, o := range obs {
		if opts.Policy == ObservedSize && o.Ops == 0 && o.Bytes > 0 {
			return VolumeSLP{}, fmt.Errorf("the interval at %s has %g bytes/s but no operations; its op size is undefined, so use the BestSize policy", o.Start.Format(time.RFC3339), o.Bytes)
		}
		for _, q := range []esl.Quality{esl.OpsPerS, esl.BytesPerS} {
			if !has[q] {
				continue
			}
			v, e, series := o.Ops, out.OpsESL, &out.Ops
			if q == esl.BytesPerS {
				v, e, series = o.Bytes, out.BytesESL, &out.Bytes
			}
			p := 0.0 // no operations: no pressure
			switch {
			case opts.Policy == BestSize:
				p = Pressure(v, e)
			case o.Ops > 0:
				e, err := m.ESL(q, o.OpSizeKiB())
				if err != nil {
					return VolumeSLP{}, fmt.Errorf("at %s: %w", o.Start.Format(time.RFC3339), err)
				}
				p = Pressure(v, e)
			}
			*series = append(*series, Point{Start: o.Start, Period: o.Period, Value: p})
		}
	}
	for _, s := range []Series{out.Ops, out.Bytes} {
		if err := s.Check(); err != nil {
			return VolumeSLP{}, err
		}
	}
	return out, nil
}

// bestESL is the ESL of q at the candidate op size with the highest mean;
// ties go to the first candidate.
func bestESL(m esl.Model, q esl.Quality, candidates []float64) (esl.ESL, error) {
	if len(candidates) == 0 {
		candidates = DefaultOpSizesKiB
		if e, ok := m.(*esl.Empirical); ok {
			candidates = e.OpSizes()
		}
	}
	var best esl.ESL
	var lastErr error
	for _, d := range candidates {
		e, err := m.ESL(q, d)
		if err != nil {
			// An empirical model may lack a quality at some sizes.
			lastErr = err
			continue
		}
		if len(best.Levels) == 0 || e.Mean() > best.Mean() {
			best = e
		}
	}
	if len(best.Levels) == 0 {
		return esl.ESL{}, fmt.Errorf("no candidate op size gives an ESL for %s: %w", q, lastErr)
	}
	return best, nil
}

// VolumeSubjects groups samples by host and resource, and for every
// resource that model gives an ESL model for (nil = not assessed) returns
// the ops/s and bandwidth SLP series (VolumePressure with opts) as
// subjects for Recommend, sorted by host and resource. Select one source per volume before calling (e.g.
// only "sampled"): VolumeObservations rejects a mix.
func VolumeSubjects(samples []monitor.Sample, model func(host, resource string) esl.Model, opts VolumeOptions) ([]Subject, error) {
	type key struct{ host, resource string }
	groups := map[key][]monitor.Sample{}
	var keys []key
	for _, s := range samples {
		if !volumeMetrics[s.Metric] {
			continue
		}
		k := key{s.Host, s.Resource}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], s)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].host != keys[j].host {
			return keys[i].host < keys[j].host
		}
		return keys[i].resource < keys[j].resource
	})
	var out []Subject
	for _, k := range keys {
		m := model(k.host, k.resource)
		if m == nil {
			continue
		}
		obs, err := VolumeObservations(groups[k])
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", k.host, k.resource, err)
		}
		v, err := VolumePressure(obs, m, opts)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", k.host, k.resource, err)
		}
		if v.Ops != nil {
			out = append(out, Subject{Host: k.host, Service: k.resource, Quality: esl.OpsPerS, Series: v.Ops})
		}
		if v.Bytes != nil {
			out = append(out, Subject{Host: k.host, Service: k.resource, Quality: esl.BytesPerS, Series: v.Bytes})
		}
	}
	return out, nil
}
