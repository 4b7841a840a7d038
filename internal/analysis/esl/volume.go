package esl

import (
	"fmt"
	"math"
)

// Defaults of the provisioned-IOPS volume model (seed-digest §4, from the
// provider's documentation as quoted in seed 000 §4.1).
const (
	DefaultNormalizedOpKiB   = 256   // nd: one normalized operation covers up to 256 KiB
	DefaultMaxIOPS           = 20000 // pno is at most 20,000
	DefaultMaxIOPSPerGiB     = 30    // pno <= 30 x volume size in GiB
	DefaultVolumeCapMiBPerS  = 320   // guaranteed volume bandwidth
	ModelProvisionedIOPSName = "provisioned_iops_volume"
)

// ConnectionCapsMiBPerS are the instance-to-volume connection bandwidths
// of "optimized" instance types in seed 000 §4.1; which type has which is
// the catalog's business, so the model takes the number.
var ConnectionCapsMiBPerS = []float64{62.5, 93.75, 125, 250, 500}

// ProvisionedIOPSVolume is the analytical ESL model of a provisioned-IOPS
// volume behind an instance (seed-digest §4, seed 000 §4.1). Zero optional
// fields take the defaults above.
type ProvisionedIOPSVolume struct {
	SizeGiB         float64 `yaml:"size_gib" json:"size_gib"`
	ProvisionedIOPS float64 `yaml:"provisioned_iops" json:"provisioned_iops"` // pno, normalized ops per second
	// InstanceCapMiBPerS is the instance's guaranteed connection bandwidth
	// to the volume; 0 = not optimized: nothing guaranteed, so only the
	// volume's own cap applies.
	InstanceCapMiBPerS float64 `yaml:"instance_cap_mib_per_s,omitempty" json:"instance_cap_mib_per_s,omitempty"`
	NormalizedOpKiB    float64 `yaml:"normalized_op_kib,omitempty" json:"normalized_op_kib,omitempty"`
	VolumeCapMiBPerS   float64 `yaml:"volume_cap_mib_per_s,omitempty" json:"volume_cap_mib_per_s,omitempty"`
	MaxIOPS            float64 `yaml:"max_iops,omitempty" json:"max_iops,omitempty"`
	MaxIOPSPerGiB      float64 `yaml:"max_iops_per_gib,omitempty" json:"max_iops_per_gib,omitempty"`
}

// Expectation is what the volume model expects for one operation size.
type Expectation struct {
	OpSizeKiB     float64
	NormalizedOps float64 // normalized operations per operation: ceil(d/nd)
	OpsPerS       float64
	BytesPerS     float64
	// Limit is what bounds OpsPerS: "iops" (provisioned normalized ops),
	// "volume_bandwidth" or "instance_bandwidth".
	Limit string
}

func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

// withDefaults fills the optional fields.
func (v ProvisionedIOPSVolume) withDefaults() ProvisionedIOPSVolume {
	v.NormalizedOpKiB = orDefault(v.NormalizedOpKiB, DefaultNormalizedOpKiB)
	v.VolumeCapMiBPerS = orDefault(v.VolumeCapMiBPerS, DefaultVolumeCapMiBPerS)
	v.MaxIOPS = orDefault(v.MaxIOPS, DefaultMaxIOPS)
	v.MaxIOPSPerGiB = orDefault(v.MaxIOPSPerGiB, DefaultMaxIOPSPerGiB)
	return v
}

// Validate checks the configuration against the documented limits
// (seed-digest §4: pno in 1..20000 and pno <= 30 x GiB).
func (v ProvisionedIOPSVolume) Validate() error {
	d := v.withDefaults()
	pos := func(name string, x float64) error {
		if !(x > 0) || math.IsInf(x, 1) {
			return fmt.Errorf("params.%s is %v; it must be a positive number", name, x)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		x    float64
	}{{"size_gib", d.SizeGiB}, {"provisioned_iops", d.ProvisionedIOPS}, {"normalized_op_kib", d.NormalizedOpKiB},
		{"volume_cap_mib_per_s", d.VolumeCapMiBPerS}, {"max_iops", d.MaxIOPS}, {"max_iops_per_gib", d.MaxIOPSPerGiB}} {
		if err := pos(f.name, f.x); err != nil {
			return err
		}
	}
	if !(d.InstanceCapMiBPerS >= 0) || math.IsInf(d.InstanceCapMiBPerS, 1) {
		return fmt.Errorf("params.instance_cap_mib_per_s is %v; give the instance's connection bandwidth in MiB/s, or 0 when it is not optimized", d.InstanceCapMiBPerS)
	}
	if d.ProvisionedIOPS > d.MaxIOPS {
		return fmt.Errorf("params.provisioned_iops %g exceeds the maximum of %g; provision at most max_iops", d.ProvisionedIOPS, d.MaxIOPS)
	}
	if limit := d.MaxIOPSPerGiB * d.SizeGiB; d.ProvisionedIOPS > limit {
		return fmt.Errorf("params.provisioned_iops %g exceeds %g x size_gib = %g; grow the volume or provision fewer IOPS", d.ProvisionedIOPS, d.MaxIOPSPerGiB, limit)
	}
	return nil
}

// NormalizedOps is the number of normalized operations one operation of
// opSizeKiB counts for a normalized operation size of unitKiB:
// ceil(d / nd) (seed-digest §4; 512 KiB at 256 KiB counts 2). NaN for a
// non-positive size or unit.
func NormalizedOps(opSizeKiB, unitKiB float64) float64 {
	if !(opSizeKiB > 0) || !(unitKiB > 0) {
		return math.NaN()
	}
	return math.Ceil(opSizeKiB / unitKiB)
}

// Evaluate returns the expected ops/s and bandwidth for operations of
// opSizeKiB (seed-digest §4):
//
//	ops/s = min(pno / ceil(d/nd), bw_cap / d),  bw_cap = min(volume cap, instance cap)
//	bytes/s = ops/s x d
func (v ProvisionedIOPSVolume) Evaluate(opSizeKiB float64) (Expectation, error) {
	if err := v.Validate(); err != nil {
		return Expectation{}, err
	}
	if !(opSizeKiB > 0) || math.IsInf(opSizeKiB, 1) {
		return Expectation{}, fmt.Errorf("operation size %v KiB must be a positive number", opSizeKiB)
	}
	d := v.withDefaults()
	no := NormalizedOps(opSizeKiB, d.NormalizedOpKiB)
	e := Expectation{OpSizeKiB: opSizeKiB, NormalizedOps: no, OpsPerS: d.ProvisionedIOPS / no, Limit: "iops"}
	capMiB, capName := d.VolumeCapMiBPerS, "volume_bandwidth"
	if d.InstanceCapMiBPerS > 0 && d.InstanceCapMiBPerS < capMiB {
		capMiB, capName = d.InstanceCapMiBPerS, "instance_bandwidth"
	}
	// MiB/s over KiB per op = 1024 x MiB/s / KiB ops per second.
	if bwOps := capMiB * 1024 / opSizeKiB; bwOps < e.OpsPerS {
		e.OpsPerS, e.Limit = bwOps, capName
	}
	e.BytesPerS = e.OpsPerS * opSizeKiB * 1024
	return e, nil
}
