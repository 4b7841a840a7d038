// Package bottleneck finds what limits a system: the multi-bottleneck
// classification of one run (single, concurrent, oscillatory, simultaneous;
// seed-digest §6, 003 ch.6), the intervention analysis of a workload sweep
// that ranks the metrics whose trend breaks where the SLO starts to fail
// (seed-digest §6, 003 ch.5), the utilisation densities and saturation-state
// frequencies behind them, and the maximum-throughput and bottleneck maps
// over a grid of configurations. Every analysis is a pure function;
// FromResults (the driver of them all, per treatment with its stored
// settings) and the helpers beside it only read their inputs from the
// results model (internal/results).
package bottleneck

import (
	"fmt"
	"math"
	"time"
)

// Config holds the parameters of the multi-bottleneck classification
// (seed-digest §6). A zero field takes its default.
type Config struct {
	// Lambda is the length of an observation interval; samples are
	// aggregated to it. Default 1 s.
	Lambda time.Duration
	// Alpha is the critical saturation threshold in percent: a resource is
	// critically saturated in an interval when its utilisation exceeds it.
	// Default 95.
	Alpha float64
	// Full is the saturation frequency from which a resource is fully
	// saturated (f_R >= Full). Default 0.95.
	Full float64
	// Partial is the frequency above which it is partially saturated
	// (Partial < f_R < Full). Default 0.01.
	Partial float64
	// Epsilon is the largest co-saturation probability
	// P(B_j = 1 and B_k = 1) of two dependent bottleneck resources.
	// Default 0.05.
	Epsilon float64
	// PerCore adds every per-core CPU ("cpuN") as a resource of its own, so
	// that one saturated core of a single-threaded server shows. Default off.
	PerCore bool
	// Hosts restricts the analysis to the resources of these hosts (as the
	// samples name them); empty: every host. A lab campaign's samples also
	// describe the machine that runs the lab, which is not part of the
	// system under test.
	Hosts []string
}

// hostIncluded reports whether cfg judges host's resources.
func (c Config) hostIncluded(host string) bool {
	if len(c.Hosts) == 0 {
		return true
	}
	for _, h := range c.Hosts {
		if h == host {
			return true
		}
	}
	return false
}

// Defaults of Config (seed-digest §6; 003 §6.2).
const (
	DefaultLambda  = time.Second
	DefaultAlpha   = 95.0
	DefaultFull    = 0.95
	DefaultPartial = 0.01
	DefaultEpsilon = 0.05
)

// alphaTolerance keeps a utilisation that equals Alpha up to rounding (e.g.
// the mean of 94.7 and 95.3) on the unsaturated side, so that the verdict
// does not depend on floating-point noise.
const alphaTolerance = 1e-9

// withDefaults fills zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	if c.Lambda == 0 {
		c.Lambda = DefaultLambda
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultAlpha
	}
	if c.Full == 0 {
		c.Full = DefaultFull
	}
	if c.Partial == 0 {
		c.Partial = DefaultPartial
	}
	if c.Epsilon == 0 {
		c.Epsilon = DefaultEpsilon
	}
	switch {
	case c.Lambda < 0:
		return c, fmt.Errorf("bottleneck: lambda %v is negative; give an interval length such as 1s", c.Lambda)
	case !(c.Alpha > 0 && c.Alpha <= 100):
		return c, fmt.Errorf("bottleneck: alpha %v is outside (0, 100]; give the saturation threshold in percent, e.g. 95", c.Alpha)
	case !(c.Full > 0 && c.Full <= 1):
		return c, fmt.Errorf("bottleneck: full %v is outside (0, 1]; give a frequency such as 0.95", c.Full)
	case !(c.Partial >= 0 && c.Partial < c.Full):
		return c, fmt.Errorf("bottleneck: partial %v must lie in [0, full=%v); give a frequency such as 0.01", c.Partial, c.Full)
	case !(c.Epsilon > 0 && c.Epsilon < 1) || math.IsNaN(c.Epsilon):
		return c, fmt.Errorf("bottleneck: epsilon %v is outside (0, 1); give a probability such as 0.05", c.Epsilon)
	}
	return c, nil
}
