package workload

import (
	"math"
	"strings"
	"testing"
)

func TestPresets(t *testing.T) {
	want := map[string]struct {
		mix  [NumOpTypes]float64
		dist string
	}{
		"a": {[NumOpTypes]float64{Read: 0.5, Update: 0.5}, DistZipfian},
		"b": {[NumOpTypes]float64{Read: 0.95, Update: 0.05}, DistZipfian},
		"c": {[NumOpTypes]float64{Read: 1}, DistZipfian},
		"d": {[NumOpTypes]float64{Read: 0.95, Insert: 0.05}, DistLatest},
		"e": {[NumOpTypes]float64{Scan: 0.95, Insert: 0.05}, DistZipfian},
		"f": {[NumOpTypes]float64{Read: 0.5, ReadModifyWrite: 0.5}, DistZipfian},
	}
	for _, name := range PresetNames() {
		c, err := Preset(strings.ToUpper(name))
		if err != nil {
			t.Fatal(err)
		}
		w := want[name]
		if c.Mix != w.mix || c.RequestDistribution != w.dist {
			t.Errorf("workload %s: mix %v %s, want %v %s", name, c.Mix, c.RequestDistribution, w.mix, w.dist)
		}
		if c.RecordCount != 1000 || c.FieldCount != 10 || c.FieldLength != 100 || c.ZipfianConstant != 0.99 ||
			c.MaxScanLength != 100 || c.ScanLengthDistribution != DistUniform || !c.ReadAllFields || c.WriteAllFields ||
			c.OrderedInserts || c.HotspotDataFraction != 0.2 || c.HotspotOpnFraction != 0.8 {
			t.Errorf("workload %s: YCSB defaults not set: %+v", name, c)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("workload %s: %v", name, err)
		}
	}
	if _, err := Preset("g"); err == nil || !strings.Contains(err.Error(), `"g"`) {
		t.Errorf("Preset(g): %v", err)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		field string
		edit  func(*Config)
	}{
		{"record_count", func(c *Config) { c.RecordCount = 0 }},
		{"field_count", func(c *Config) { c.FieldCount = 0 }},
		{"field_length", func(c *Config) { c.FieldLength = -1 }},
		{"field_count x field_length", func(c *Config) { c.FieldCount, c.FieldLength = 1000, 1<<20 }},
		{"weight of update", func(c *Config) { c.Mix[Update] = -1 }},
		{"weight of read", func(c *Config) { c.Mix[Read] = math.NaN() }},
		{"weight of read", func(c *Config) { c.Mix[Read] = math.Inf(1) }},
		{"operations", func(c *Config) { c.Mix = [NumOpTypes]float64{} }},
		{"request_distribution", func(c *Config) { c.RequestDistribution = "Zipfian" }},
		{"zipfian_constant", func(c *Config) { c.ZipfianConstant = 1 }},
		{"zipfian_constant", func(c *Config) { c.RequestDistribution, c.ZipfianConstant = DistLatest, 0 }},
		{"hotspot_data_fraction", func(c *Config) { c.RequestDistribution, c.HotspotDataFraction = DistHotspot, 1.5 }},
		{"hotspot_opn_fraction", func(c *Config) { c.RequestDistribution, c.HotspotOpnFraction = DistHotspot, -0.1 }},
		{"max_scan_length", func(c *Config) { c.Mix[Scan], c.MaxScanLength = 1, 0 }},
		{"scan_length_distribution", func(c *Config) { c.Mix[Scan], c.ScanLengthDistribution = 1, "latest" }},
	} {
		cfg, _ := Preset("a")
		c.edit(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: Validate() = %v", c.field, err)
			continue
		}
		if _, err := New(cfg, 1); err == nil {
			t.Errorf("%s: New accepted an invalid config", c.field)
		}
	}
	// Unused settings are not checked.
	cfg, _ := Preset("a")
	cfg.RequestDistribution, cfg.ZipfianConstant, cfg.HotspotDataFraction, cfg.MaxScanLength, cfg.ScanLengthDistribution = DistUniform, 0, 7, 0, "bogus"
	if err := cfg.Validate(); err != nil {
		t.Errorf("unused settings: %v", err)
	}
}

func TestConfigString(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(*Config) {}, "read 50% update 50%, zipfian(0.99, scrambled), 1000 records x 10 x 100 B"},
		{func(c *Config) { *c, _ = Preset("e") }, "insert 5% scan 95%, zipfian(0.99, scrambled), scan length uniform 1-100, 1000 records x 10 x 100 B"},
		{func(c *Config) { *c, _ = Preset("d") }, "read 95% insert 5%, latest(zipfian 0.99), 1000 records x 10 x 100 B"},
		{func(c *Config) {
			c.Mix = [NumOpTypes]float64{Read: 1, Update: 2}
			c.RequestDistribution = DistHotspot
			c.ReadAllFields, c.WriteAllFields, c.OrderedInserts = false, true, true
		}, "read 33.33% update 66.67%, hotspot(80% of ops on 20% of keys), 1000 records x 10 x 100 B, read one field, write all fields, ordered keys"},
	} {
		cfg, _ := Preset("a")
		c.edit(&cfg)
		if got := cfg.String(); got != c.want {
			t.Errorf("String() = %q\nwant        %q", got, c.want)
		}
	}
}
