package spec

import (
	"math"
	"slices"

	"github.com/headroom-dev/headroom/internal/workload"
)

// workload checks the workload section.
func (c *checker) workload(w *Workload) {
	c.statements(w)
	c.consistency(w)
	if len(w.Statements) > 0 {
		return
	}
	if w.YCSB == "" && len(w.Operations) == 0 && !w.ConsistencyOnly() {
		c.fail("workload", "needs a YCSB preset, an operation mix or SQL statements; add ycsb: a (a to f), operations: {read: 0.95, update: 0.05} or statements: [...]")
	}
	if w.YCSB != "" && !slices.Contains(workload.PresetNames(), w.YCSB) {
		c.fail("workload.ycsb", "unknown YCSB workload %q; use %s", truncate(w.YCSB, 40), orList(workload.PresetNames()))
	}
	c.operations(w.Operations)
	c.atLeast("workload.record_count", w.RecordCount, 1)
	c.atLeast("workload.field_count", int64(w.FieldCount), 1)
	c.atLeast("workload.field_length", int64(w.FieldLength), 1)
	if w.RequestDistribution != "" {
		c.oneOf("workload.request_distribution", w.RequestDistribution, workload.RequestDistributions()...)
	}
	// Gray et al.'s zipfian generator (the one YCSB uses) needs 0 < theta < 1.
	if !(w.ZipfianConstant > 0 && w.ZipfianConstant < 1) {
		c.fail("workload.zipfian_constant", "must be between 0 and 1 (exclusive), got %g; YCSB's default is 0.99", w.ZipfianConstant)
	}
	for path, f := range map[string]float64{
		"workload.hotspot_data_fraction": w.HotspotDataFraction,
		"workload.hotspot_opn_fraction":  w.HotspotOpnFraction,
	} {
		if f < 0 || f > 1 {
			c.fail(path, "must be between 0 and 1, got %g", f)
		}
	}
	c.atLeast("workload.max_scan_length", int64(w.MaxScanLength), 1)
	c.oneOf("workload.scan_length_distribution", w.ScanLengthDistribution, "uniform", "zipfian")
	c.oneOf("workload.insert_order", w.InsertOrder, "hashed", "ordered")
}

func (c *checker) operations(ops map[string]float64) {
	if len(ops) == 0 {
		return
	}
	keys := make([]string, 0, len(ops))
	for k := range ops {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	ok, sum := true, 0.0
	for _, k := range keys {
		p := joinPath("workload.operations", k)
		if !c.opName(p, k) {
			ok = false
		}
		if ops[k] < 0 {
			c.fail(p, "weight must be 0 or more, got %g", ops[k])
			ok = false
		}
		sum += ops[k]
	}
	switch {
	case !ok:
	case math.IsInf(sum, 0):
		c.fail("workload.operations", "the weights are too large to add up; scale them down, e.g. to fractions of 1")
	case sum <= 0:
		c.fail("workload.operations", "the weights add up to 0; give at least one operation a positive weight")
	}
}
