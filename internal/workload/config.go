package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Request distribution names (Config.RequestDistribution), YCSB's
// requestdistribution values (seed-digest §1).
const (
	DistUniform    = "uniform"    // uniform over the loaded keys
	DistZipfian    = "zipfian"    // scrambled zipfian over the loaded keys
	DistLatest     = "latest"     // zipfian by recency over all inserted keys
	DistHotspot    = "hotspot"    // a hot fraction of keys takes a fraction of operations
	DistSequential = "sequential" // 0, 1, 2, ... wrapping at RecordCount
)

// RequestDistributions lists the accepted Config.RequestDistribution values.
func RequestDistributions() []string {
	return []string{DistUniform, DistZipfian, DistLatest, DistHotspot, DistSequential}
}

// maxRecordBytes bounds FieldCount*FieldLength, to catch unit mistakes before
// they allocate gigabytes per client.
const maxRecordBytes = 64 << 20

// Config describes a workload: the YCSB core workload properties (seed-digest
// §1). Preset returns the six core workloads; a spec may override any field.
// Error messages name fields by their spec (YCSB snake_case) names.
//
// Keys: records 0..RecordCount-1 exist after the load phase; inserts during
// a run take RecordCount, RecordCount+1, ... Only "latest" chooses among keys
// inserted during the run; the other distributions choose among the loaded
// keys [0, RecordCount). This simplifies YCSB, whose choosers also cover the
// expected run-phase inserts and retry draws that land above the keys inserted
// so far.
type Config struct {
	RecordCount int64 // records loaded before the run (record_count)
	FieldCount  int   // fields per record (field_count)
	FieldLength int   // bytes per field value (field_length)

	// Mix holds the relative weight of each operation type (operations);
	// weights are >= 0 and need not sum to 1.
	Mix [NumOpTypes]float64

	RequestDistribution string  // one of RequestDistributions (request_distribution)
	ZipfianConstant     float64 // theta of zipfian, latest and zipfian scan lengths, in (0, 1); YCSB: 0.99

	HotspotDataFraction float64 // hotspot: fraction of keys that are hot; YCSB: 0.2
	HotspotOpnFraction  float64 // hotspot: fraction of operations on hot keys; YCSB: 0.8

	MaxScanLength          int    // scans return 1..MaxScanLength records; YCSB: 100
	ScanLengthDistribution string // "uniform" (also "") or "zipfian" (rank 0 = length 1)

	ReadAllFields  bool // reads and scans fetch all fields, else one uniform field; YCSB: true
	WriteAllFields bool // updates write all fields, else one uniform field; YCSB: false

	// OrderedInserts names record i "user<i>"; false (YCSB's default,
	// insertorder=hashed) names it "user<ycsbHash(i)>". See KeyName.
	OrderedInserts bool

	// Statements, when set, make this a statement workload: each request
	// is one of these SQL statements, chosen by weight, and Mix and the key
	// fields are not used. Dataset says how the tables are created and
	// filled.
	Statements []Statement
	Dataset    Dataset
}

func (c Config) usesZipfian() bool {
	return c.RequestDistribution == DistZipfian || c.RequestDistribution == DistLatest ||
		(c.Mix[Scan] > 0 && c.ScanLengthDistribution == DistZipfian)
}

// Validate reports the first invalid field of c as one sentence naming it.
// Fields that the workload does not use (hotspot fractions without hotspot,
// scan settings without scans, the zipfian constant without a zipfian) are not
// checked.
func (c Config) Validate() error {
	if c.IsStatements() {
		return c.validateStatements()
	}
	if c.RecordCount < 1 {
		return fmt.Errorf("workload: record_count must be at least 1, got %d", c.RecordCount)
	}
	if c.FieldCount < 1 {
		return fmt.Errorf("workload: field_count must be at least 1, got %d", c.FieldCount)
	}
	if c.FieldLength < 1 {
		return fmt.Errorf("workload: field_length must be at least 1 byte, got %d", c.FieldLength)
	}
	if int64(c.FieldCount)*int64(c.FieldLength) > maxRecordBytes {
		return fmt.Errorf("workload: field_count x field_length must be at most %d bytes, got %d x %d", maxRecordBytes, c.FieldCount, c.FieldLength)
	}
	total := 0.0
	for t, w := range c.Mix {
		if !(w >= 0) || math.IsInf(w, 1) {
			return fmt.Errorf("workload: operations weight of %s must be a finite number >= 0, got %g", OpType(t), w)
		}
		total += w
	}
	if !(total > 0) || math.IsInf(total, 1) {
		return fmt.Errorf("workload: operations must give at least one operation type a positive weight (weights must sum to a finite number)")
	}
	switch c.RequestDistribution {
	case DistUniform, DistZipfian, DistLatest, DistHotspot, DistSequential:
	default:
		return fmt.Errorf("workload: request_distribution must be one of %s, got %q", strings.Join(RequestDistributions(), ", "), c.RequestDistribution)
	}
	if c.Mix[Scan] > 0 {
		if c.MaxScanLength < 1 {
			return fmt.Errorf("workload: max_scan_length must be at least 1 when scans are in the mix, got %d", c.MaxScanLength)
		}
		if s := c.ScanLengthDistribution; s != "" && s != DistUniform && s != DistZipfian {
			return fmt.Errorf("workload: scan_length_distribution must be uniform or zipfian, got %q", s)
		}
	}
	if c.usesZipfian() && !(c.ZipfianConstant > 0 && c.ZipfianConstant < 1) {
		return fmt.Errorf("workload: zipfian_constant must be between 0 and 1 (exclusive), got %g", c.ZipfianConstant)
	}
	if c.RequestDistribution == DistHotspot {
		if !(c.HotspotDataFraction >= 0 && c.HotspotDataFraction <= 1) {
			return fmt.Errorf("workload: hotspot_data_fraction must be between 0 and 1, got %g", c.HotspotDataFraction)
		}
		if !(c.HotspotOpnFraction >= 0 && c.HotspotOpnFraction <= 1) {
			return fmt.Errorf("workload: hotspot_opn_fraction must be between 0 and 1, got %g", c.HotspotOpnFraction)
		}
	}
	return nil
}

// String describes c in one line, e.g.
// "read 50% update 50%, zipfian(0.99, scrambled), 1000 records x 10 x 100 B".
func (c Config) String() string {
	var b strings.Builder
	total := 0.0
	for _, w := range c.Mix {
		total += w
	}
	first := true
	for t, w := range c.Mix {
		if w <= 0 || total <= 0 {
			continue
		}
		if !first {
			b.WriteByte(' ')
		}
		first = false
		b.WriteString(OpType(t).String())
		b.WriteByte(' ')
		b.WriteString(percent(w / total))
	}
	if first {
		b.WriteString("no operations")
	}
	b.WriteString(", ")
	switch c.RequestDistribution {
	case DistZipfian:
		fmt.Fprintf(&b, "zipfian(%g, scrambled)", c.ZipfianConstant)
	case DistLatest:
		fmt.Fprintf(&b, "latest(zipfian %g)", c.ZipfianConstant)
	case DistHotspot:
		fmt.Fprintf(&b, "hotspot(%s of ops on %s of keys)", percent(c.HotspotOpnFraction), percent(c.HotspotDataFraction))
	default:
		b.WriteString(c.RequestDistribution)
	}
	if c.Mix[Scan] > 0 {
		d := c.ScanLengthDistribution
		if d == "" {
			d = DistUniform
		}
		fmt.Fprintf(&b, ", scan length %s 1-%d", d, c.MaxScanLength)
	}
	fmt.Fprintf(&b, ", %d records x %d x %d B", c.RecordCount, c.FieldCount, c.FieldLength)
	if !c.ReadAllFields {
		b.WriteString(", read one field")
	}
	if c.WriteAllFields {
		b.WriteString(", write all fields")
	}
	if c.OrderedInserts {
		b.WriteString(", ordered keys")
	}
	return b.String()
}

// percent formats a fraction as a percentage with at most two decimals.
func percent(f float64) string {
	return strconv.FormatFloat(math.Round(f*1e4)/100, 'f', -1, 64) + "%"
}
