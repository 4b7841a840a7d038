package slp

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
)

// Providers and clients may count normalized operations with different
// units: seed 000 §5.3 found the provider counting 16 KiB units where its
// documentation said 256 KiB (seed-digest §4). These functions convert
// between units and find the factor or unit that aligns two series.

// Renormalize converts a rate of normalized ops counted with fromKiB units
// into toKiB units, for operations of opSizeKiB:
//
//	no_to = no_from / ceil(d / from) x ceil(d / to)
//
// e.g. 16 normalized ops/s of 256 KiB at 16 KiB are 1 at 256 KiB. NaN for
// non-positive sizes.
func Renormalize(no, opSizeKiB, fromKiB, toKiB float64) float64 {
	return no / esl.NormalizedOps(opSizeKiB, fromKiB) * esl.NormalizedOps(opSizeKiB, toKiB)
}

// NormalizedSeries is the client-side rate of normalized ops with unitKiB
// units: Ops x ceil(d / unit) for each interval's mean op size d
// (seed-digest §4). An interval without ops has 0.
func NormalizedSeries(obs []VolumeSecond, unitKiB float64) (Series, error) {
	if !(unitKiB > 0) || math.IsInf(unitKiB, 1) {
		return nil, fmt.Errorf("normalized op size %v KiB must be a positive number", unitKiB)
	}
	out := make(Series, len(obs))
	for i, o := range obs {
		v := 0.0
		if o.Ops > 0 {
			v = o.Ops * esl.NormalizedOps(o.OpSizeKiB(), unitKiB)
		}
		out[i] = Point{Start: o.Start, Period: o.Period, Value: v}
	}
	if err := out.Check(); err != nil {
		return nil, err
	}
	return out, nil
}

// RenormalizeSeries converts a provider series of normalized ops counted
// with fromKiB units into toKiB units, taking each point's op size from
// the client observations over the same interval (total bytes over total
// ops). Points the observations cover for less than MinCoverage of their
// period are dropped.
func RenormalizeSeries(provider Series, obs []VolumeSecond, fromKiB, toKiB float64) (Series, error) {
	if !(fromKiB > 0) || !(toKiB > 0) {
		return nil, fmt.Errorf("normalized op sizes %v and %v KiB must be positive numbers", fromKiB, toKiB)
	}
	if err := provider.Check(); err != nil {
		return nil, fmt.Errorf("provider series: %w", err)
	}
	opsAt := opsSeries(obs)
	if err := opsAt.Check(); err != nil {
		return nil, fmt.Errorf("client observations: %w", err)
	}
	bytesAt := make(Series, len(obs))
	for i, o := range obs {
		bytesAt[i] = Point{Start: o.Start, Period: o.Period, Value: o.Bytes}
	}
	var out Series
	for _, p := range provider {
		ops, okO := meanOver(opsAt, p)
		bytes, okB := meanOver(bytesAt, p)
		if !okO || !okB || !(ops > 0) {
			continue
		}
		out = append(out, Point{Start: p.Start, Period: p.Period, Value: Renormalize(p.Value, bytes/ops/1024, fromKiB, toKiB)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the client observations cover no provider interval with operations; give observations over the same time")
	}
	return out, nil
}

// MinCoverage is the share of a coarse interval that finer points must
// cover for their mean to stand for it.
const MinCoverage = 0.9

// meanOver is the time-weighted mean of s over p's interval, and whether s
// covers at least MinCoverage of it.
func meanOver(s Series, p Point) (float64, bool) {
	var sum, covered float64
	// s is sorted and does not overlap, so its ends are sorted too.
	first := sort.Search(len(s), func(i int) bool { return s[i].End().After(p.Start) })
	for _, x := range s[first:] {
		if !x.Start.Before(p.End()) {
			break
		}
		lo := max(x.Start.UnixNano(), p.Start.UnixNano())
		hi := min(x.End().UnixNano(), p.End().UnixNano())
		if hi <= lo {
			continue
		}
		w := time.Duration(hi - lo).Seconds()
		sum += x.Value * w
		covered += w
	}
	if covered < MinCoverage*p.Period.Seconds()*(1-1e-9) { // exactly 90% counts
		return 0, false
	}
	return sum / covered, true
}

// Pair is one provider interval with the client's time-weighted mean over
// it.
type Pair struct {
	Start            time.Time
	Period           time.Duration
	Provider, Client float64
}

// Align pairs each point of the (usually coarser) provider series with the
// time-weighted mean of the client series over its interval; provider
// points the client covers for less than MinCoverage are left out.
func Align(provider, client Series) ([]Pair, error) {
	if err := provider.Check(); err != nil {
		return nil, fmt.Errorf("provider series: %w", err)
	}
	if err := client.Check(); err != nil {
		return nil, fmt.Errorf("client series: %w", err)
	}
	var out []Pair
	for _, p := range provider {
		if c, ok := meanOver(client, p); ok {
			out = append(out, Pair{Start: p.Start, Period: p.Period, Provider: p.Value, Client: c})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the client series covers no provider interval; give series over the same time")
	}
	return out, nil
}

// Fit is the factor k that best aligns a provider series with a client
// series: provider ~ k x client.
type Fit struct {
	Factor float64
	Points int // aligned provider intervals used
	// RelRMS is the root mean square of provider - k x client over the
	// mean provider value: 0 for a perfect fit.
	RelRMS float64
}

// FitFactor fits k by least squares on the aligned intervals (seed-digest
// §4, seed 000 §5.3): k = sum(p c) / sum(c^2).
func FitFactor(provider, client Series) (Fit, error) {
	pairs, err := Align(provider, client)
	if err != nil {
		return Fit{}, err
	}
	var pc, cc, pp float64
	for _, x := range pairs {
		pc += x.Provider * x.Client
		cc += x.Client * x.Client
		pp += x.Provider * x.Provider
	}
	if cc == 0 {
		return Fit{}, fmt.Errorf("the client series is 0 over every aligned interval; no factor can be fitted")
	}
	// An idle provider series would fit k = 0 with an undefined relative
	// RMS (0/0).
	if pp == 0 {
		return Fit{}, fmt.Errorf("the provider series is 0 over every aligned interval; no factor can be fitted")
	}
	k := pc / cc
	return Fit{Factor: k, Points: len(pairs), RelRMS: relRMS(pairs, k)}, nil
}

func relRMS(pairs []Pair, k float64) float64 {
	var ss, sp float64
	for _, x := range pairs {
		r := x.Provider - k*x.Client
		ss += r * r
		sp += x.Provider
	}
	n := float64(len(pairs))
	return math.Sqrt(ss/n) / (sp / n)
}

// DefaultUnitsKiB are the normalized op sizes BestUnit tries by default.
var DefaultUnitsKiB = []float64{4, 8, 16, 32, 64, 128, 256, 512, 1024}

// UnitFit is how well the client's normalized ops at one unit match the
// provider's series.
type UnitFit struct {
	UnitKiB float64
	RelRMS  float64 // of provider - client at factor 1
	Fit     Fit     // the best factor on top of the unit
}

// BestUnit finds the normalized op size with which the client's
// observations reproduce the provider's normalized-ops series: for each
// candidate unit (DefaultUnitsKiB when nil), the client's normalized ops
// are aligned with the provider's, and the unit with the smallest relative
// RMS difference at factor 1 wins (seed 000 §5.3: 16 KiB, not the
// documented 256). All candidates are returned in the order given.
func BestUnit(provider Series, obs []VolumeSecond, unitsKiB []float64) (UnitFit, []UnitFit, error) {
	if len(unitsKiB) == 0 {
		unitsKiB = DefaultUnitsKiB
	}
	var all []UnitFit
	best := -1
	for _, u := range unitsKiB {
		client, err := NormalizedSeries(obs, u)
		if err != nil {
			return UnitFit{}, nil, err
		}
		pairs, err := Align(provider, client)
		if err != nil {
			return UnitFit{}, nil, err
		}
		if !hasPositive(pairs) {
			// Every unit would score an infinite relative RMS and the
			// first would "win".
			return UnitFit{}, nil, fmt.Errorf("the provider series is 0 over every aligned interval; no normalized-op unit can be found")
		}
		uf := UnitFit{UnitKiB: u, RelRMS: relRMS(pairs, 1)}
		if f, err := FitFactor(provider, client); err == nil {
			uf.Fit = f
		}
		all = append(all, uf)
		if best < 0 || uf.RelRMS < all[best].RelRMS {
			best = len(all) - 1
		}
	}
	return all[best], all, nil
}

// hasPositive says whether some aligned provider value is above 0.
func hasPositive(pairs []Pair) bool {
	for _, x := range pairs {
		if x.Provider > 0 {
			return true
		}
	}
	return false
}
