package pressure

import (
	"fmt"
	"sort"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/slp"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
)

// Fit is the alignment of a provider-side and a client-side series of one
// volume (seed-digest §4, seed 000 §5.3): the factor k with provider ~ k x
// client for ops/s and for bandwidth, and the normalized-op unit with
// which the client's operations reproduce the provider's op count.
type Fit struct {
	Provider, Client string // HOST/RESOURCE@SOURCE
	Auto             bool   // paired because they were the only two series of their host
	Ops, Bytes       *slp.Fit
	OpsErr, BytesErr string
	Unit             *slp.UnitFit
	Units            []slp.UnitFit
	UnitErr          string
}

type seriesRef struct{ host, resource, source string }

func (r seriesRef) String() string { return r.host + "/" + r.resource + "@" + r.source }

// fitPairs fits the configured pairs, or, without any, pairs each host's
// only provider-side (CloudWatch) volume series with its only client-side
// one (sampled or iostat).
func (a *Assessment) fitPairs(st *store.Store, pairs []spec.ESLPair) ([]Fit, error) {
	series, err := volumeSeries(st)
	if err != nil {
		return nil, err
	}
	type pair struct {
		p, c seriesRef
		auto bool
	}
	var todo []pair
	if len(pairs) > 0 {
		for i, pr := range pairs {
			p, err := resolveRef(pr.Provider, series)
			if err != nil {
				return nil, fmt.Errorf("analysis.esl.pairs[%d].provider: %w", i, err)
			}
			c, err := resolveRef(pr.Client, series)
			if err != nil {
				return nil, fmt.Errorf("analysis.esl.pairs[%d].client: %w", i, err)
			}
			todo = append(todo, pair{p, c, false})
		}
	} else {
		prov, cli := map[string][]seriesRef{}, map[string][]seriesRef{}
		for _, s := range series {
			switch s.source {
			case monitor.SourceCloudWatch:
				prov[s.host] = append(prov[s.host], s)
			case monitor.SourceSampled, monitor.SourceIostat:
				cli[s.host] = append(cli[s.host], s)
			}
		}
		hosts := make([]string, 0, len(prov))
		for h := range prov {
			hosts = append(hosts, h)
		}
		sort.Strings(hosts)
		for _, h := range hosts {
			switch {
			case len(prov[h]) == 1 && len(cli[h]) == 1:
				todo = append(todo, pair{prov[h][0], cli[h][0], true})
			case len(cli[h]) > 1:
				a.note("host %s has provider-side volume data and %d client-side volume series; name the pair in analysis.esl.pairs to fit their normalisation", h, len(cli[h]))
			}
		}
	}
	var out []Fit
	for _, p := range todo {
		f, err := fitPair(st, p.p, p.c)
		if err != nil {
			return nil, err
		}
		f.Auto = p.auto
		out = append(out, f)
	}
	return out, nil
}

// volumeSeries lists every volume or disk series with operation counts.
func volumeSeries(st *store.Store) ([]seriesRef, error) {
	samples, err := st.Samples(store.SampleFilter{RunID: -1, Metric: monitor.DiskReadOps})
	if err != nil {
		return nil, err
	}
	seen := map[seriesRef]bool{}
	var out []seriesRef
	for _, s := range samples {
		r := seriesRef{s.Host, s.Resource, s.Source}
		if isVolume(s.Resource) && !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out, nil
}

// resolveRef finds the series a HOST/RESOURCE[@SOURCE] names; without a
// source, the resource must have only one.
func resolveRef(ref string, series []seriesRef) (seriesRef, error) {
	host, res, src, err := spec.ParseSeries(ref)
	if err != nil {
		return seriesRef{}, err
	}
	var found []seriesRef
	for _, s := range series {
		if s.host == host && s.resource == res && (src == "" || s.source == src) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return seriesRef{}, fmt.Errorf("%s has no volume samples (read_ops_per_s) in the results; check the host, resource and source", ref)
	case 1:
		return found[0], nil
	}
	var srcs []string
	for _, f := range found {
		srcs = append(srcs, f.source)
	}
	return seriesRef{}, fmt.Errorf("%s has samples from %s; add @SOURCE to pick one", ref, strings.Join(srcs, " and "))
}

// fitPair aligns the two series (slp.FitFactor, slp.BestUnit). A fit that
// cannot be made (no overlap in time) is reported, not an error.
func fitPair(st *store.Store, p, c seriesRef) (Fit, error) {
	f := Fit{Provider: p.String(), Client: c.String()}
	load := func(r seriesRef) ([]slp.VolumeSecond, error) {
		xs, err := st.Samples(store.SampleFilter{RunID: -1, Host: r.host, Resource: r.resource, Source: r.source})
		if err != nil {
			return nil, err
		}
		return slp.VolumeObservations(xs)
	}
	po, err := load(p)
	if err != nil {
		f.OpsErr = err.Error()
		return f, nil
	}
	co, err := load(c)
	if err != nil {
		f.OpsErr = err.Error()
		return f, nil
	}
	pOps, pBytes := split(po)
	cOps, cBytes := split(co)
	if k, err := slp.FitFactor(pOps, cOps); err == nil {
		f.Ops = &k
	} else {
		f.OpsErr = err.Error()
	}
	if k, err := slp.FitFactor(pBytes, cBytes); err == nil {
		f.Bytes = &k
	} else {
		f.BytesErr = err.Error()
	}
	if best, all, err := slp.BestUnit(pOps, co, nil); err == nil {
		f.Unit, f.Units = &best, all
	} else {
		f.UnitErr = err.Error()
	}
	return f, nil
}

func split(obs []slp.VolumeSecond) (ops, bytes slp.Series) {
	for _, o := range obs {
		ops = append(ops, slp.Point{Start: o.Start, Period: o.Period, Value: o.Ops})
		bytes = append(bytes, slp.Point{Start: o.Start, Period: o.Period, Value: o.Bytes})
	}
	return ops, bytes
}

// Sentence says what a fit means in one or two sentences.
func (f Fit) Sentence() string {
	if f.Ops == nil {
		return fmt.Sprintf("%s and %s could not be aligned: %s", f.Provider, f.Client, f.OpsErr)
	}
	s := fmt.Sprintf("%s reports %.3g x the operations of %s (least squares over %d aligned intervals, relative RMS %.1f%%)",
		f.Provider, f.Ops.Factor, f.Client, f.Ops.Points, 100*f.Ops.RelRMS)
	if f.Bytes != nil {
		s += fmt.Sprintf(" and %.3g x its bandwidth", f.Bytes.Factor)
	}
	s += "."
	if f.Unit != nil {
		s += fmt.Sprintf(" Counted as normalized operations, the client's series matches the provider's best with a %g KiB unit (relative RMS %.1f%%)", f.Unit.UnitKiB, 100*f.Unit.RelRMS)
		if f.Unit.UnitKiB != 256 {
			s += ", not the documented 256 KiB (seed 000 §5.3 found 16 KiB)"
		}
		s += "."
	}
	return s
}
