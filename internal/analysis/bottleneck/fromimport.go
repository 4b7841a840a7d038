package bottleneck

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
)

// The multi-bottleneck classification of resource data imported from
// other tools (headroom import: sar, iostat, node_exporter, CloudWatch).
// Seed 003's classification (seed-digest §6) needs only the utilisation
// series of the resources, so the monitoring data of a system nobody
// load-tested can be judged the same way as a run: the series are built by
// FromSamplesOver and classified by Classify, over the imported span or
// over windows the user names, one classification per window.

// importedSources are the sample sources written by headroom import
// (every source but the campaign's own sampler).
var importedSources = []string{monitor.SourceSar, monitor.SourceIostat, monitor.SourcePrometheus, monitor.SourceCloudWatch}

// TimeRef is one end of the analysed span: an absolute time, or an offset
// from the start of the imported data.
type TimeRef struct {
	At       time.Time
	Offset   time.Duration
	IsOffset bool
}

// IsZero reports whether the bound is unset (the imported data's own
// start or end).
func (t TimeRef) IsZero() bool { return !t.IsOffset && t.At.IsZero() }

// String prints the bound as ParseTimeRef reads it.
func (t TimeRef) String() string {
	switch {
	case t.IsOffset:
		return "+" + t.Offset.String()
	case t.At.IsZero():
		return ""
	}
	return t.At.UTC().Format(time.RFC3339Nano)
}

// at resolves the bound against the start of the imported data.
func (t TimeRef) at(start time.Time) time.Time {
	if t.IsOffset {
		return start.Add(t.Offset)
	}
	return t.At
}

// ParseTimeRef reads a bound: an RFC 3339 time ("2026-11-23T10:05:00Z"),
// or a duration from the start of the imported data ("90s", "+5m",
// "1h30m"). "" is the unset bound.
func ParseTimeRef(s string) (TimeRef, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return TimeRef{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return TimeRef{At: t}, nil
	}
	d, err := time.ParseDuration(strings.TrimPrefix(s, "+"))
	if err != nil || d < 0 {
		return TimeRef{}, fmt.Errorf("time %q is neither an RFC 3339 time (2026-11-23T10:05:00Z) nor a non-negative duration from the start of the imported data (90s, +5m)", s)
	}
	return TimeRef{Offset: d, IsOffset: true}, nil
}

// ImportedOptions select what FromImported classifies and how.
type ImportedOptions struct {
	// Config is the classification's parameters. A zero Lambda takes the
	// data's own sampling period (the median, in whole seconds, at least
	// 1 s), so that each interval holds one sample of each resource.
	Config Config
	// From and To bound the analysed span; unset: the imported data's
	// first and last sample.
	From, To TimeRef
	// Window cuts the span into consecutive windows of this length, each
	// classified on its own (the last one may be shorter); 0: one window.
	Window time.Duration
}

// maxImportedWindows bounds the classifications of one analysis, so a
// mistaken --window cannot print a million lines.
const maxImportedWindows = 10_000

// Imported is the classification of imported resource data.
type Imported struct {
	Config  Config   // with defaults, and the lambda actually used
	Span    Window   // the analysed span: [From, To) after the bounds
	Data    Window   // the span of the imported utilisation series
	Sources []string // the tools whose data was classified
	Hosts   []string
	Windows []ImportedWindow // in time order
	Notes   []string         // what was left out of every window, and why
}

// ImportedWindow is one window's classification.
type ImportedWindow struct {
	Window Window
	Result Result
	Err    string // why it could not be classified ("" when it was)
}

// FromImported reads the imported samples of the store (those of any run
// and those tied to none) and classifies them (ClassifyImported).
func FromImported(r *results.Results, opt ImportedOptions) (*Imported, error) {
	samples, err := importedSamples(r, monitor.CPUUtilPct, monitor.NetRxBytes)
	if err != nil {
		return nil, err
	}
	return ClassifyImported(samples, opt)
}

// ImportedData summarises the imported utilisation data of a store
// without classifying it: its sources, hosts and number of samples (all
// zero when there is none).
func ImportedData(r *results.Results) (sources, hosts []string, n int, err error) {
	samples, err := importedSamples(r, monitor.CPUUtilPct)
	if err != nil {
		return nil, nil, 0, err
	}
	src, hs := map[string]bool{}, map[string]bool{}
	for _, s := range samples {
		src[s.Source], hs[s.Host] = true, true
	}
	return sortedNames(src), sortedNames(hs), len(samples), nil
}

// importedSamples reads the imported samples of the given metrics.
func importedSamples(r *results.Results, metrics ...string) ([]monitor.Sample, error) {
	var out []monitor.Sample
	for _, src := range importedSources {
		for _, m := range metrics {
			ss, err := r.Samples(results.SampleFilter{RunID: -1, Source: src, Metric: m})
			if err != nil {
				return nil, err
			}
			out = append(out, ss...)
		}
	}
	return out, nil
}

// ClassifyImported is Classify over imported samples: the utilisation
// series of every CPU, disk and volume they describe (FromSamplesOver,
// without capacities: imported data gives none, so network links and
// provisioned volumes cannot be judged), classified over each window of
// opt. A resource described by several tools (sar and node_exporter on the
// same host) is taken from the one with the finest sampling, as two
// series of one resource would blur each other. Samples longer than
// lambda (a missed scrape, a gap in sar's recording) are left out, since
// they cannot show saturation within one interval. Samples of other
// sources (the campaign's own sampler) are ignored.
func ClassifyImported(samples []monitor.Sample, opt ImportedOptions) (*Imported, error) {
	if opt.Window < 0 {
		return nil, fmt.Errorf("bottleneck: window %v is negative; give a length such as 1m, or none for one classification of the whole span", opt.Window)
	}
	imported := map[string]bool{}
	for _, s := range importedSources {
		imported[s] = true
	}
	out := &Imported{}
	var util []monitor.Sample
	links := map[string]bool{}
	for _, s := range samples {
		if !imported[s.Source] || !opt.Config.hostIncluded(s.Host) {
			continue
		}
		switch {
		case strings.HasPrefix(s.Resource, monitor.ResourceNetPrefix):
			links[ResourceID(s.Host, s.Resource)] = true
		case s.Metric == monitor.CPUUtilPct && isUtilResource(s.Resource, opt.Config.PerCore):
			util = append(util, s)
		}
	}
	if len(links) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("network interfaces are left out, as imported data gives no link capacity to judge their utilisation: %s",
			strings.Join(sortedNames(links), ", ")))
	}
	if len(util) == 0 {
		what := "the store holds no imported CPU or disk utilisation (util_pct of cpu, disk: or volume:)"
		if len(opt.Config.Hosts) > 0 {
			what += " of hosts " + strings.Join(opt.Config.Hosts, ", ")
		}
		return nil, fmt.Errorf("bottleneck: %s; import sar -u -d, iostat -x or node_exporter data first", what)
	}
	util, notes := oneSourcePerResource(util)
	out.Notes = append(out.Notes, notes...)

	series, notes, err := FromSamplesOver(util, nil, opt.Config)
	if err != nil {
		return nil, err
	}
	out.Notes = append(out.Notes, notes...)
	cfg := opt.Config
	if cfg.Lambda == 0 {
		cfg.Lambda = samplingPeriod(series)
	}
	if cfg, err = cfg.withDefaults(); err != nil {
		return nil, err
	}
	out.Config = cfg
	series, notes = dropLongPoints(series, cfg.Lambda)
	out.Notes = append(out.Notes, notes...)
	judged := map[string]bool{}
	for _, s := range series {
		judged[s.Resource] = true
	}
	src, hosts := map[string]bool{}, map[string]bool{}
	for _, s := range util {
		if judged[ResourceID(s.Host, s.Resource)] {
			src[s.Source], hosts[s.Host] = true, true
		}
	}
	out.Sources, out.Hosts = sortedNames(src), sortedNames(hosts)
	out.Data = span(series)
	if out.Data.From.IsZero() {
		return nil, fmt.Errorf("bottleneck: no imported sample is short enough for intervals of %v; give a lambda of at least the data's sampling period", cfg.Lambda)
	}

	// The analysed span and its windows.
	w := out.Data
	if !opt.From.IsZero() {
		w.From = opt.From.at(out.Data.From)
	}
	if !opt.To.IsZero() {
		w.To = opt.To.at(out.Data.From)
	}
	out.Span = w
	switch {
	case !w.From.Before(out.Data.To) || !w.To.After(out.Data.From):
		return nil, fmt.Errorf("bottleneck: the span from %s to %s holds no imported data, which runs from %s to %s", stamp(w.From), stamp(w.To), stamp(out.Data.From), stamp(out.Data.To))
	case !w.To.After(w.From):
		return nil, fmt.Errorf("bottleneck: the span from %s to %s is empty; give an end after the start", stamp(w.From), stamp(w.To))
	case w.To.Sub(w.From) < cfg.Lambda:
		return nil, fmt.Errorf("bottleneck: the span from %s to %s is shorter than one interval of %v; give a longer span", stamp(w.From), stamp(w.To), cfg.Lambda)
	case opt.Window > 0 && opt.Window < cfg.Lambda:
		return nil, fmt.Errorf("bottleneck: window %v is shorter than one interval of %v; give a window of at least %v", opt.Window, cfg.Lambda, cfg.Lambda)
	case opt.Window > 0 && w.To.Sub(w.From)/opt.Window >= maxImportedWindows:
		return nil, fmt.Errorf("bottleneck: windows of %v cut the %v span into more than %d classifications; give a longer window", opt.Window, w.To.Sub(w.From), maxImportedWindows)
	}
	var windows []Window
	if opt.Window == 0 {
		windows = []Window{w}
	} else {
		for t := w.From; t.Before(w.To); t = t.Add(opt.Window) {
			end := t.Add(opt.Window)
			if end.After(w.To) {
				end = w.To
			}
			if end.Sub(t) < cfg.Lambda {
				out.Notes = append(out.Notes, fmt.Sprintf("the last %v of the span, shorter than one interval of %v, is not classified", end.Sub(t), cfg.Lambda))
				break
			}
			windows = append(windows, Window{From: t, To: end})
		}
	}
	for _, win := range windows {
		iw := ImportedWindow{Window: win}
		res, err := Classify(within(series, win, cfg.Lambda), win, cfg)
		if err != nil {
			iw.Err = err.Error()
		} else {
			iw.Result = res
		}
		out.Windows = append(out.Windows, iw)
	}
	return out, nil
}

// within cuts each series to the points that may overlap w (a point is at
// most periodSlack x lambda long, as dropLongPoints left them), so that a
// long span cut into many windows is read once per window, not whole each
// time. The points are in time order (FromSamplesOver sorts them).
func within(series []Series, w Window, lambda time.Duration) []Series {
	out := make([]Series, len(series))
	from := w.From.Add(-time.Duration(periodSlack * float64(lambda)))
	for i, s := range series {
		lo := sort.Search(len(s.Points), func(j int) bool { return !s.Points[j].Start.Before(from) })
		hi := sort.Search(len(s.Points), func(j int) bool { return !s.Points[j].Start.Before(w.To) })
		out[i] = Series{Resource: s.Resource, Points: s.Points[lo:hi]}
	}
	return out
}

// oneSourcePerResource keeps, for each host/resource that several tools
// describe, the samples of the tool with the shortest median period (the
// first by name on a tie), and says which it kept.
func oneSourcePerResource(samples []monitor.Sample) ([]monitor.Sample, []string) {
	periods := map[string]map[string][]time.Duration{} // resource -> source -> periods
	for _, s := range samples {
		id := ResourceID(s.Host, s.Resource)
		if periods[id] == nil {
			periods[id] = map[string][]time.Duration{}
		}
		periods[id][s.Source] = append(periods[id][s.Source], s.Period)
	}
	keep := map[string]string{}
	var notes []string
	for _, id := range sortedNames(periods) {
		bySrc := periods[id]
		if len(bySrc) < 2 {
			continue
		}
		srcs := sortedNames(bySrc)
		best, bestP := "", time.Duration(math.MaxInt64)
		for _, src := range srcs {
			if p := medianDuration(bySrc[src]); p < bestP {
				best, bestP = src, p
			}
		}
		keep[id] = best
		notes = append(notes, fmt.Sprintf("%s is described by %s; the %s samples (every %v) are used", id, joinAnd(srcs), best, bestP))
	}
	if len(keep) == 0 {
		return samples, nil
	}
	out := samples[:0:0]
	for _, s := range samples {
		if src, ok := keep[ResourceID(s.Host, s.Resource)]; !ok || src == s.Source {
			out = append(out, s)
		}
	}
	return out, notes
}

// samplingPeriod is the median period of the series' points rounded to
// whole seconds, at least 1 s (DefaultLambda), and long enough for the
// median point (Resample allows points up to periodSlack x lambda).
func samplingPeriod(series []Series) time.Duration {
	var ps []time.Duration
	for _, s := range series {
		for _, p := range s.Points {
			ps = append(ps, p.Period)
		}
	}
	med := medianDuration(ps)
	l := max(DefaultLambda, med.Round(time.Second))
	if float64(med) > periodSlack*float64(l) {
		l += time.Second
	}
	return l
}

// dropLongPoints leaves out the points longer than lambda (with timer
// jitter: periodSlack), which Resample cannot split into intervals, with a
// note per resource.
func dropLongPoints(series []Series, lambda time.Duration) ([]Series, []string) {
	var notes []string
	out := make([]Series, 0, len(series))
	for _, s := range series {
		kept := s.Points[:0:0]
		var longest time.Duration
		for _, p := range s.Points {
			if float64(p.Period) > periodSlack*float64(lambda) {
				longest = max(longest, p.Period)
				continue
			}
			kept = append(kept, p)
		}
		if n := len(s.Points) - len(kept); n > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d of its %d samples cover more than one interval of %v (up to %v) and are left out", s.Resource, n, len(s.Points), lambda, longest))
		}
		if len(kept) > 0 {
			out = append(out, Series{Resource: s.Resource, Points: kept})
		}
	}
	return out, notes
}

func medianDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// stamp prints a time in messages.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
