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
	quality  esl.Quality
	series   slp.Series
	esl      esl.ESL
	text     string // the ESL as the tables print it
	origin   string
	unit     string
	sum, sec float64 // observed level x seconds, and seconds, for the mean
}

// subjects turns one resource's samples of one source into SLP subjects:
// a volume's ops/s and bandwidth (slp.VolumePressure with the op-size
// policy), any other resource's metrics named like the model's qualities
// (slp.FromSamples). Each sample is judged by the model in force at its
// start (seed-digest §4: the ESL is what the service should deliver under
// the limits then), so a limit changed mid-run changes the ESL from that
// moment on; the pieces of each quality are joined into one series.
func (a *Assessment) subjects(k Key, samples []monitor.Sample, tl Timeline) ([]Subject, error) {
	bySpan := make([][]monitor.Sample, len(tl))
	for _, s := range samples {
		i := tl.at(s.Start)
		bySpan[i] = append(bySpan[i], s)
	}
	pieces := map[esl.Quality][]piece{}
	var order []esl.Quality
	judged := false
	for i, sp := range tl {
		xs := bySpan[i]
		if len(xs) == 0 || sp.Model == nil {
			continue
		}
		judged = true
		var ps []piece
		var err error
		if IsVolume(k.Resource) && hasVolumeQuality(sp.Model) {
			ps, err = a.volumePieces(sp, xs)
		} else {
			ps, err = metricPieces(sp, xs)
		}
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if _, ok := pieces[p.quality]; !ok {
				order = append(order, p.quality)
			}
			pieces[p.quality] = append(pieces[p.quality], p)
		}
	}
	if !judged {
		return nil, fmt.Errorf("no model is in force while it was sampled")
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("no samples of the model's qualities (%s); name a quality after a metric of the resource, e.g. util_pct", qualityList(tl))
	}
	src := samples[0].Source
	base := Subject{Host: k.Host, Service: k.Resource, Resource: k.Resource, Source: src}
	if src != monitor.SourceSampled {
		base.Service += " @" + src
	}
	var out []Subject
	for _, q := range order {
		s, err := a.join(base, q, pieces[q], IsVolume(k.Resource))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func hasVolumeQuality(m esl.Model) bool {
	for _, q := range m.Qualities() {
		if q == esl.OpsPerS || q == esl.BytesPerS {
			return true
		}
	}
	return false
}

// volumePieces are a volume's ops/s and bandwidth pressure under one
// model, with the op-size policy.
func (a *Assessment) volumePieces(sp Span, xs []monitor.Sample) ([]piece, error) {
	obs, err := slp.VolumeObservations(xs)
	if err != nil {
		return nil, err
	}
	v, err := slp.VolumePressure(obs, sp.Model, slp.VolumeOptions{Policy: a.Policy, CandidatesKiB: a.OpSizesKiB})
	if err != nil {
		return nil, err
	}
	var out []piece
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
		p := piece{quality: q.q, series: q.series, esl: q.e, unit: q.unit, origin: sp.Origin,
			text: fmt.Sprintf("%s (%s)", FormatLevel(q.e.Mean(), q.unit), q.e.Source)}
		if a.Policy == slp.ObservedSize {
			p.text = "at each interval's mean op size (" + sp.Model.Kind() + " model)"
		}
		for _, o := range obs {
			p.sum += q.value(o) * o.Period.Seconds()
			p.sec += o.Period.Seconds()
		}
		out = append(out, p)
	}
	return out, nil
}

// metricPieces are the pressure of every monitor metric named like one of
// the model's qualities.
func metricPieces(sp Span, xs []monitor.Sample) ([]piece, error) {
	byMetric := map[string][]monitor.Sample{}
	for _, x := range xs {
		byMetric[x.Metric] = append(byMetric[x.Metric], x)
	}
	var out []piece
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
		p := piece{quality: q, series: series, esl: e, unit: unitOf(q), origin: sp.Origin,
			text: fmt.Sprintf("%s (%s)", FormatLevel(e.Mean(), unitOf(q)), e.Source)}
		for _, x := range ms {
			p.sum += x.Value * x.Period.Seconds()
			p.sec += x.Period.Seconds()
		}
		out = append(out, p)
	}
	return out, nil
}

// join makes one subject of a quality's pieces: their series in time
// order, the ESLs and origins in words, and the summary. The ESL mean is
// NaN when it is not one value: the pieces' ESLs differ, or a volume's is
// taken at each interval's op size.
func (a *Assessment) join(base Subject, q esl.Quality, ps []piece, volume bool) (Subject, error) {
	s := base
	s.Quality, s.Unit = q, ps[0].unit
	s.ESLMean = ps[0].esl.Mean()
	var texts, origins []string
	var sum, sec float64
	for _, p := range ps {
		s.Series = append(s.Series, p.series...)
		texts, origins = appendNew(texts, p.text), appendNew(origins, p.origin)
		sum, sec = sum+p.sum, sec+p.sec
		if p.esl.Mean() != s.ESLMean {
			s.ESLMean = math.NaN()
		}
	}
	if a.Policy == slp.ObservedSize && volume && (q == esl.OpsPerS || q == esl.BytesPerS) {
		s.ESLMean = math.NaN()
	}
	s.Observed = sum / sec
	s.ESL = strings.Join(texts, ", then ")
	s.Model = strings.Join(origins, "; then ")
	if err := s.Series.Check(); err != nil {
		return s, err
	}
	summary, err := slp.Summarize(s.Series, a.Thresholds...)
	if err != nil {
		return s, err
	}
	s.Summary = summary
	return s, nil
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
