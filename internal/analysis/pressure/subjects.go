package pressure

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/analysis/slp"
	"github.com/headroom-dev/headroom/internal/monitor"
)

// IsVolume says whether a resource is a block volume, judged with the
// ops/s and bandwidth of a volume model.
func IsVolume(resource string) bool {
	return strings.HasPrefix(resource, monitor.ResourceVolumePrefix) || strings.HasPrefix(resource, monitor.ResourceDiskPrefix)
}

// piece is the part of one quality's subject judged by one span's model.
type piece struct {
	series slp.Series
	esl    esl.ESL
	text   string // the ESL as the tables print it
	origin string
}

// subjects turns one resource's samples of one source into SLP subjects:
// a volume's ops/s and bandwidth (slp.VolumePressure with the op-size
// policy), any other resource's metrics named like the model's qualities
// (slp.FromSamples). Each sample is judged by the model in force at its
// start (seed-digest §4: the ESL is what the service should deliver under
// the limits then), so a limit changed mid-run changes the ESL from that
// moment on.
func (a *Assessment) subjects(k Key, samples []monitor.Sample, tl Timeline) ([]Subject, error) {
	src := samples[0].Source
	service := k.Resource
	if src != monitor.SourceSampled {
		service += " @" + src
	}
	base := Subject{Host: k.Host, Service: service, Resource: k.Resource, Source: src}
	bySpan := make([][]monitor.Sample, len(tl))
	for _, s := range samples {
		i := tl.at(s.Start)
		bySpan[i] = append(bySpan[i], s)
	}
	pieces := map[esl.Quality][]piece{}
	var order []esl.Quality
	add := func(q esl.Quality, p piece) {
		if _, ok := pieces[q]; !ok {
			order = append(order, q)
		}
		pieces[q] = append(pieces[q], p)
	}
	observed := map[esl.Quality][2]float64{} // sum of value x seconds, seconds
	units := map[esl.Quality]string{}
	judged := false
	for i, sp := range tl {
		xs := bySpan[i]
		if len(xs) == 0 || sp.Model == nil {
			continue
		}
		judged = true
		hasVolumeQuality := false
		for _, q := range sp.Model.Qualities() {
			hasVolumeQuality = hasVolumeQuality || q == esl.OpsPerS || q == esl.BytesPerS
		}
		if IsVolume(k.Resource) && hasVolumeQuality {
			obs, err := slp.VolumeObservations(xs)
			if err != nil {
				return nil, err
			}
			v, err := slp.VolumePressure(obs, sp.Model, slp.VolumeOptions{Policy: a.Policy, CandidatesKiB: a.OpSizesKiB})
			if err != nil {
				return nil, err
			}
			for _, q := range []struct {
				q      esl.Quality
				series slp.Series
				e      esl.ESL
				unit   string
				value  func(slp.VolumeSecond) float64
			}{{esl.OpsPerS, v.Ops, v.OpsESL, "ops/s", func(o slp.VolumeSecond) float64 { return o.Ops }},
				{esl.BytesPerS, v.Bytes, v.BytesESL, "B/s", func(o slp.VolumeSecond) float64 { return o.Bytes }}} {
				if q.series == nil {
					continue
				}
				acc := observed[q.q]
				for _, o := range obs {
					acc[0] += q.value(o) * o.Period.Seconds()
					acc[1] += o.Period.Seconds()
				}
				observed[q.q], units[q.q] = acc, q.unit
				text := fmt.Sprintf("%s (%s)", FormatLevel(q.e.Mean(), q.unit), q.e.Source)
				if a.Policy == slp.ObservedSize {
					text = "at each interval's mean op size (" + sp.Model.Kind() + " model)"
				}
				add(q.q, piece{series: q.series, esl: q.e, text: text, origin: sp.Origin})
			}
			continue
		}
		byMetric := map[string][]monitor.Sample{}
		for _, x := range xs {
			byMetric[x.Metric] = append(byMetric[x.Metric], x)
		}
		for _, q := range sp.Model.Qualities() {
			ms := byMetric[string(q)]
			if len(ms) == 0 {
				continue
			}
			e, err := sp.Model.ESL(q, 0)
			if err != nil {
				return nil, err
			}
			series, err := slp.FromSamples(ms, e)
			if err != nil {
				return nil, err
			}
			acc := observed[q]
			for _, x := range ms {
				acc[0] += x.Value * x.Period.Seconds()
				acc[1] += x.Period.Seconds()
			}
			observed[q], units[q] = acc, unitOf(q)
			add(q, piece{series: series, esl: e, text: fmt.Sprintf("%s (%s)", FormatLevel(e.Mean(), unitOf(q)), e.Source), origin: sp.Origin})
		}
	}
	if !judged {
		return nil, fmt.Errorf("no model is in force while it was sampled")
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("no samples of the model's qualities (%s); name a quality after a metric of the resource, e.g. util_pct", qualityList(tl))
	}
	var out []Subject
	for _, q := range order {
		ps := pieces[q]
		s := base
		s.Quality, s.Unit = q, units[q]
		s.Observed = observed[q][0] / observed[q][1]
		var texts, origins []string
		s.ESLMean = ps[0].esl.Mean()
		for _, p := range ps {
			s.Series = append(s.Series, p.series...)
			texts, origins = appendNew(texts, p.text), appendNew(origins, p.origin)
			if p.esl.Mean() != s.ESLMean {
				s.ESLMean = math.NaN() // the limits changed the ESL: no one value
			}
		}
		if a.Policy == slp.ObservedSize && IsVolume(k.Resource) && (q == esl.OpsPerS || q == esl.BytesPerS) {
			s.ESLMean = math.NaN()
		}
		s.ESL = strings.Join(texts, ", then ")
		s.Model = strings.Join(origins, "; then ")
		if err := s.Series.Check(); err != nil {
			return nil, err
		}
		sum, err := slp.Summarize(s.Series, a.Thresholds...)
		if err != nil {
			return nil, err
		}
		s.Summary = sum
		out = append(out, s)
	}
	return out, nil
}

func appendNew(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

func qualityList(tl Timeline) string {
	var qs []string
	for _, sp := range tl {
		if sp.Model == nil {
			continue
		}
		for _, q := range sp.Model.Qualities() {
			qs = appendNew(qs, string(q))
		}
	}
	return strings.Join(qs, ", ")
}

// unitOf is the unit of a metric-named quality.
func unitOf(q esl.Quality) string {
	s := string(q)
	switch {
	case strings.HasSuffix(s, "_pct"):
		return "%"
	case strings.HasSuffix(s, "bytes_per_s"):
		return "B/s"
	case strings.HasSuffix(s, "_per_s"):
		return "/s"
	}
	return ""
}

// FormatLevel prints a level in its unit: bytes per second in MiB/s.
func FormatLevel(v float64, unit string) string {
	if math.IsNaN(v) {
		return "-"
	}
	switch unit {
	case "B/s":
		return fmt.Sprintf("%.4g MiB/s", v/(1<<20))
	case "%":
		return fmt.Sprintf("%.3g%%", v)
	}
	return fmt.Sprintf("%.4g %s", v, unit)
}

// sameModel says whether two models are the same document.
func sameModel(a, b esl.Model) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
