package campaign

import (
	"fmt"

	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/workload"
)

// workloadConfig turns the spec's workload section into the generator's
// configuration: the YCSB preset first, then every field the user set.
// WorkloadConfig turns a spec's workload section into the generator's
// configuration (the probe uses it too, so both send the same requests).
func WorkloadConfig(w spec.Workload, specDir string) (workload.Config, error) {
	cfg, err := workload.Preset("a")
	if len(w.Statements) > 0 {
		cfg.Statements, cfg.Dataset, err = w.StatementWorkload(specDir)
		if err != nil {
			return cfg, err
		}
		cfg.ZipfianConstant = w.ZipfianConstant
		return cfg, cfg.Validate()
	}
	if w.YCSB != "" {
		cfg, err = workload.Preset(w.YCSB)
	}
	if err != nil {
		return cfg, err
	}
	if len(w.Operations) > 0 {
		cfg.Mix = [workload.NumOpTypes]float64{}
		for name, weight := range w.Operations {
			t, ok := workload.ParseOpType(name)
			if !ok {
				return cfg, fmt.Errorf("workload.operations: unknown operation %q", name)
			}
			cfg.Mix[t] = weight
		}
	}
	cfg.RecordCount = w.RecordCount
	cfg.FieldCount = w.FieldCount
	cfg.FieldLength = w.FieldLength
	if w.RequestDistribution != "" {
		cfg.RequestDistribution = w.RequestDistribution
	}
	cfg.ZipfianConstant = w.ZipfianConstant
	cfg.HotspotDataFraction = w.HotspotDataFraction
	cfg.HotspotOpnFraction = w.HotspotOpnFraction
	cfg.MaxScanLength = w.MaxScanLength
	cfg.ScanLengthDistribution = w.ScanLengthDistribution
	if w.ReadAllFields != nil {
		cfg.ReadAllFields = *w.ReadAllFields
	}
	if w.WriteAllFields != nil {
		cfg.WriteAllFields = *w.WriteAllFields
	}
	cfg.OrderedInserts = w.InsertOrder == "ordered"
	return cfg, cfg.Validate()
}
