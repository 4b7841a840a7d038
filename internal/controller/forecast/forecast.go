// Package forecast predicts the workload's throughput vector for the
// elastic controller (seed 003 ch. 8, seed-digest §7): the history of each
// request type's throughput is decomposed by a fast Fourier transform, the
// dominant seasonal components (frequency, amplitude, phase) are kept, and
// their sum plus the mean is extrapolated past the end of the history.
package forecast

import (
	"fmt"
	"math"
	"math/cmplx"
	"sort"
)

// Config holds the forecast's constants; Default gives the values used
// when the spec says nothing (seed 003 names the method, not the numbers).
type Config struct {
	// Components is how many dominant seasonal components are kept.
	Components int
	// MinShare drops a component whose amplitude is below this share of
	// the largest one (noise, not season).
	MinShare float64
	// MinHistory is the least number of samples a forecast needs; with
	// fewer, the forecast is the last observed value.
	MinHistory int
}

// Default keeps up to 3 components at least 10% of the largest, and needs
// 60 samples (two seed control periods of seconds).
func Default() Config { return Config{Components: 3, MinShare: 0.1, MinHistory: 60} }

// Check says what is wrong with the configuration, in one sentence.
func (c Config) Check() error {
	switch {
	case c.Components < 0:
		return fmt.Errorf("the forecast keeps %d components; give 0 or more", c.Components)
	case c.MinShare < 0 || c.MinShare > 1:
		return fmt.Errorf("the forecast's minimum component share is %v; give a fraction in [0, 1]", c.MinShare)
	case c.MinHistory < 2:
		return fmt.Errorf("the forecast needs a history of at least 2 samples, not %d", c.MinHistory)
	}
	return nil
}

// Component is one seasonal component: A·cos(2π·k·i/n + Phase) at sample i.
type Component struct {
	Bin       int     // k: cycles over the history
	Period    float64 // samples per cycle (n/k)
	Amplitude float64
	Phase     float64 // radians
}

// Model is a fitted series: the mean and the kept components.
type Model struct {
	N          int // history length in samples
	Mean       float64
	Components []Component
	Last       float64 // last observed value, used when the history is short
	Short      bool    // the history was shorter than MinHistory
}

// Fit decomposes the series (equally spaced samples) and keeps the
// dominant components. For a real series the transform's bin k (0 < k <
// n/2) carries amplitude 2|X_k|/n and phase arg X_k; the Nyquist bin (k =
// n/2) carries |X_k|/n.
func (c Config) Fit(series []float64) Model {
	n := len(series)
	m := Model{N: n}
	if n == 0 {
		m.Short = true
		return m
	}
	m.Last = series[n-1]
	if n < c.MinHistory {
		m.Short = true
		return m
	}
	for _, v := range series {
		m.Mean += v
	}
	m.Mean /= float64(n)
	x := make([]complex128, n)
	for i, v := range series {
		x[i] = complex(v-m.Mean, 0)
	}
	X := FFT(x)
	var comps []Component
	for k := 1; k <= n/2; k++ {
		a := 2 * cmplx.Abs(X[k]) / float64(n)
		if 2*k == n {
			a /= 2
		}
		comps = append(comps, Component{Bin: k, Period: float64(n) / float64(k), Amplitude: a, Phase: cmplx.Phase(X[k])})
	}
	sort.SliceStable(comps, func(i, j int) bool { return comps[i].Amplitude > comps[j].Amplitude })
	for i, cp := range comps {
		if i >= c.Components || cp.Amplitude == 0 || cp.Amplitude < c.MinShare*comps[0].Amplitude {
			break
		}
		m.Components = append(m.Components, cp)
	}
	return m
}

// At is the model's value h samples after the last one (h = 1 is the
// next sample), never below zero: a throughput is not negative.
func (m Model) At(h int) float64 {
	if m.Short {
		return math.Max(0, m.Last)
	}
	i := float64(m.N - 1 + h)
	v := m.Mean
	for _, cp := range m.Components {
		v += cp.Amplitude * math.Cos(2*math.Pi*float64(cp.Bin)*i/float64(m.N)+cp.Phase)
	}
	return math.Max(0, v)
}

// Peak is the largest value over the next h samples (1..h): the load the
// controller should provision for until its next decision.
func (m Model) Peak(h int) float64 {
	p := m.At(1)
	for i := 2; i <= h; i++ {
		p = math.Max(p, m.At(i))
	}
	return p
}

// Vector forecasts every request type's throughput: the peak of each
// type's model over the next h samples.
func (c Config) Vector(history map[string][]float64, h int) map[string]float64 {
	out := make(map[string]float64, len(history))
	for op, s := range history {
		out[op] = c.Fit(s).Peak(max(1, h))
	}
	return out
}

// FFT is the discrete Fourier transform X_k = Σ x_j·e^{−2πi·jk/n}, by
// radix-2 decimation in time while the length is even and a direct sum
// for an odd remainder, so any length works and lengths with many factors
// of two are fast.
func FFT(x []complex128) []complex128 {
	n := len(x)
	if n <= 1 {
		return append([]complex128(nil), x...)
	}
	if n%2 == 1 {
		out := make([]complex128, n)
		for k := range out {
			var s complex128
			for j, v := range x {
				s += v * cmplx.Rect(1, -2*math.Pi*float64(j*k%n)/float64(n))
			}
			out[k] = s
		}
		return out
	}
	even := make([]complex128, n/2)
	odd := make([]complex128, n/2)
	for i := 0; i < n/2; i++ {
		even[i], odd[i] = x[2*i], x[2*i+1]
	}
	E, O := FFT(even), FFT(odd)
	out := make([]complex128, n)
	for k := 0; k < n/2; k++ {
		t := cmplx.Rect(1, -2*math.Pi*float64(k)/float64(n)) * O[k]
		out[k], out[k+n/2] = E[k]+t, E[k]-t
	}
	return out
}
