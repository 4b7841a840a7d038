package workload

import (
	"fmt"
	"strings"
)

// Preset returns YCSB core workload name ("a".."f", any case) with YCSB's
// default properties (seed-digest §1): 1000 records of 10 fields x 100 bytes,
// hashed keys, reads of all fields, writes of one field, zipfian constant
// 0.99, hotspot 20% of keys / 80% of operations, scan lengths uniform in
// [1, 100].
//
//	a  read 50%, update 50%             zipfian  (update heavy)
//	b  read 95%, update 5%              zipfian  (read mostly)
//	c  read 100%                        zipfian  (read only)
//	d  read 95%, insert 5%              latest   (read latest)
//	e  scan 95%, insert 5%              zipfian  (short ranges)
//	f  read 50%, read-modify-write 50%  zipfian
func Preset(name string) (Config, error) {
	c := Config{
		RecordCount:            1000,
		FieldCount:             10,
		FieldLength:            100,
		RequestDistribution:    DistZipfian,
		ZipfianConstant:        0.99,
		HotspotDataFraction:    0.2,
		HotspotOpnFraction:     0.8,
		MaxScanLength:          100,
		ScanLengthDistribution: DistUniform,
		ReadAllFields:          true,
	}
	switch strings.ToLower(name) {
	case "a":
		c.Mix[Read], c.Mix[Update] = 0.5, 0.5
	case "b":
		c.Mix[Read], c.Mix[Update] = 0.95, 0.05
	case "c":
		c.Mix[Read] = 1
	case "d":
		c.Mix[Read], c.Mix[Insert] = 0.95, 0.05
		c.RequestDistribution = DistLatest
	case "e":
		c.Mix[Scan], c.Mix[Insert] = 0.95, 0.05
	case "f":
		c.Mix[Read], c.Mix[ReadModifyWrite] = 0.5, 0.5
	default:
		return Config{}, fmt.Errorf("workload: unknown YCSB workload %q (want a, b, c, d, e or f)", name)
	}
	return c, nil
}

// PresetNames lists the names Preset accepts.
func PresetNames() []string { return []string{"a", "b", "c", "d", "e", "f"} }
