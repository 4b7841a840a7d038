package lab

import (
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/headroom-dev/headroom/internal/cpuref"
)

// The values of lab.compute_unit.
const (
	// ComputeReference makes a vCPU the reference core's work per second
	// (internal/cpuref): the default.
	ComputeReference = "reference"
	// ComputeMachine makes a vCPU one core of whatever machine runs the
	// lab, as before compute units.
	ComputeMachine = "machine"
)

// ComputeUnit is what a catalog vCPU means in a lab, measured when the lab
// came up: the CPU quota of a host of v vCPUs is v / Score of this
// machine's cores, capped by the cores it has (docs/lab.md).
type ComputeUnit struct {
	Mode string `json:"mode"`
	// Score is this machine's speed per core in compute units, as
	// measured; in machine mode it is recorded but not applied.
	Score float64 `json:"score"`
	// Reference names the core whose speed is one unit.
	Reference string `json:"reference"`
	// Cores is how many of this machine's cores a quota may take.
	Cores       int                 `json:"cores"`
	Measurement *cpuref.Measurement `json:"measurement,omitempty"`
	// Notes say, in a sentence each, where a host cannot get its share.
	Notes []string `json:"notes,omitempty"`
}

// CheckComputeUnit checks a lab.compute_unit value.
func CheckComputeUnit(v string) error {
	switch v {
	case "", ComputeReference, ComputeMachine:
		return nil
	}
	return fmt.Errorf("lab.compute_unit: %q is not a compute unit; use reference (a vCPU is a fixed amount of work per second, the default) or machine (a vCPU is one core of this machine)", v)
}

// measure is cpuref.Measure; tests replace it.
var measure = func() (cpuref.Measurement, error) { return cpuref.Measure(cpuref.Options{}) }

// Calibrate measures this machine and says which hosts cannot get their
// share of it; a lab does it when it comes up, validate to show what the
// hosts would get.
func Calibrate(mode string, hosts []HostConfig) (*ComputeUnit, error) {
	if err := CheckComputeUnit(mode); err != nil {
		return nil, err
	}
	if mode == "" {
		mode = ComputeReference
	}
	m, err := measure()
	if err != nil {
		return nil, err
	}
	c := &ComputeUnit{Mode: mode, Score: m.Score, Reference: cpuref.ReferenceCore, Cores: m.Cores, Measurement: &m}
	if !(c.Score > 0) || math.IsInf(c.Score, 0) {
		return nil, fmt.Errorf("the lab's compute unit could not be measured (score %v); set lab.compute_unit: machine to make a vCPU one core of this machine", c.Score)
	}
	c.Notes = c.notes(hosts)
	return c, nil
}

func (c *ComputeUnit) notes(hosts []HostConfig) []string {
	var out []string
	if c.Mode == ComputeReference && c.Measurement != nil && c.Measurement.Spread > 0.25 {
		out = append(out, fmt.Sprintf("this machine's speed moved by %.0f%% while it was measured, so quotas may be off by as much; a quieter machine measures steadier", 100*c.Measurement.Spread))
	}
	total := 0.0
	for _, h := range hosts {
		need := h.VCPUs
		if c.Mode == ComputeReference {
			need = h.VCPUs / c.Score
		}
		total += math.Min(need, float64(c.Cores))
		if c.Mode == ComputeReference && need > float64(c.Cores) {
			out = append(out, fmt.Sprintf("host %s cannot get its share: its %g vCPUs need %.2f cores of this machine (%.2f units per core) and it has %d; it gets all %d, %.2f vCPUs' worth",
				h.Name, h.VCPUs, need, c.Score, c.Cores, c.Cores, float64(c.Cores)*c.Score))
		}
	}
	if m := c.Measurement; m != nil {
		free := float64(c.Cores)*(1-m.StealPct/100) - m.OthersCores
		if total > free+0.05 {
			out = append(out, fmt.Sprintf("the hosts' quotas add up to %.2f cores, and this machine had %.2f free while it was measured (other processes used %.2f, steal %.1f%%): hosts busy at the same time may not get their full share",
				total, math.Max(0, free), m.OthersCores, m.StealPct))
		}
	}
	return out
}

// CoresFor converts vcpus into cores of this machine. A lab without a
// compute unit (made before it existed), or in machine mode, takes a vCPU
// as one core, uncapped, as it always did.
func (c *ComputeUnit) CoresFor(vcpus float64) float64 {
	if !c.converts() {
		return vcpus
	}
	cores := float64(c.Cores)
	if cores <= 0 {
		cores = float64(runtime.NumCPU())
	}
	return math.Min(vcpus/c.Score, cores)
}

// converts reports whether the unit converts vCPUs and work at all: not
// in machine mode, not without a measured score, and not for a lab made
// before compute units (nil).
func (c *ComputeUnit) converts() bool {
	return c != nil && c.Mode != ComputeMachine && c.Score > 0
}

// CPUTimeFor converts work written as a reference core's CPU time (an
// application server's cpu_work) into CPU time on this machine, so that a
// host of v vCPUs serves the same work per second whatever the machine:
// its quota is v / Score cores, and each request's work takes d / Score
// of them. In machine mode (or without a unit) CPU time is CPU time.
func (c *ComputeUnit) CPUTimeFor(d time.Duration) time.Duration {
	if !c.converts() {
		return d
	}
	return time.Duration(float64(d) / c.Score)
}

// Describe says what vcpus are on this machine, e.g. "0.25 vCPU = 0.31 cores".
func (c *ComputeUnit) Describe(vcpus float64) string {
	if c == nil || c.Mode == ComputeMachine {
		return fmt.Sprintf("%g vCPU", vcpus)
	}
	return fmt.Sprintf("%g vCPU = %.3g cores", vcpus, c.CoresFor(vcpus))
}

// String is one line for lab status and the run's progress.
func (c *ComputeUnit) String() string {
	if c == nil {
		return "a vCPU is one core of this machine (the lab came up before compute units)"
	}
	speed := ""
	if c.Measurement != nil {
		speed = "; " + c.Measurement.String()
	}
	if c.Mode == ComputeMachine {
		return fmt.Sprintf("compute unit: machine, a vCPU is one core of this machine, which does %.2f reference units per core%s", c.Score, speed)
	}
	return fmt.Sprintf("compute unit: a vCPU is the work of %s per second; this machine runs %.2f of them per core, so a vCPU gets %.3g cores%s",
		c.Reference, c.Score, c.CoresFor(1), speed)
}

// Short is one line for progress as the lab comes up.
func (c *ComputeUnit) Short() string {
	if c.Mode == ComputeMachine {
		return fmt.Sprintf("a vCPU is one core of this machine (compute_unit: machine; it does %.2f compute units per core)", c.Score)
	}
	return fmt.Sprintf("this machine does %.2f compute units per core, so a vCPU gets %.3g of its cores (docs/lab.md, \"The compute unit\")", c.Score, c.CoresFor(1))
}
