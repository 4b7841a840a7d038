package results

import "time"

// ComputeUnit is what a lab's vCPU meant when the lab came up: a host of v
// vCPUs had a quota of v / Score of the machine's cores (capped by Cores)
// in the reference mode, v cores in the machine mode (docs/lab.md, "The
// compute unit"). Labs made before compute units have none.
type ComputeUnit struct {
	Mode string `json:"mode"` // "reference" or "machine"
	// Score is the machine's measured speed per core in compute units.
	Score float64 `json:"score"`
	// Reference names the core whose speed is one unit.
	Reference   string          `json:"reference"`
	Cores       int             `json:"cores"`
	Measurement *CPUMeasurement `json:"measurement,omitempty"`
	// Notes say where a host could not get its share of the machine.
	Notes []string `json:"notes,omitempty"`
}

// CPUMeasurement is the calibration behind a compute unit.
type CPUMeasurement struct {
	PartScores  map[string]float64 `json:"part_scores"`
	Spread      float64            `json:"spread"` // (highest - lowest) / median of the tries
	Tries       int                `json:"tries"`
	OthersCores float64            `json:"others_cores"` // CPU other processes used meanwhile, in cores
	StealPct    float64            `json:"steal_pct"`
	PressurePct float64            `json:"pressure_pct"` // -1 when the kernel does not say
	At          time.Time          `json:"at"`
}

// CoresPerVCPU is how many of the machine's cores one vCPU was given
// (before the cap of Cores).
func (c *ComputeUnit) CoresPerVCPU() float64 {
	if c == nil || c.Mode != "reference" || !(c.Score > 0) {
		return 1
	}
	return 1 / c.Score
}

// attachComputeUnits gives every lab host's limits the compute unit of the
// lab it belonged to at that moment, so that whatever prices or judges a
// host sees what its vCPUs were.
func (r *Results) attachComputeUnits() {
	for name, series := range r.hosts {
		for i := range series {
			h := &series[i]
			if h.Lab == "" {
				continue
			}
			for j := range r.labs {
				l := &r.labs[j]
				if l.Name == h.Lab && !l.Up.After(h.From) && l.ComputeUnit != nil {
					h.Compute = l.ComputeUnit
				}
			}
		}
		r.hosts[name] = series
	}
}
