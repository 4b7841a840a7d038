package lab

import (
	"bytes"
	_ "embed"
	"fmt"
	"math"
	"os"
	"sort"

	"go.yaml.in/yaml/v3"
)

//go:embed catalog.yaml
var defaultCatalog []byte

// InstanceType is an emulated machine size: what a lab host of this type
// may use, and what it costs.
type InstanceType struct {
	Name         string  `yaml:"name" json:"name"`
	VCPUs        float64 `yaml:"vcpus" json:"vcpus"`               // CPU quota in cores
	MemoryMiB    int64   `yaml:"memory_mib" json:"memory_mib"`     // cgroup memory limit
	NetworkMbit  float64 `yaml:"network_mbit" json:"network_mbit"` // link rate, each direction
	VolumeMiBps  float64 `yaml:"volume_mibps" json:"volume_mibps"` // instance-to-volume cap; 0 = none
	PricePerHour float64 `yaml:"price_per_hour" json:"price_per_hour"`
}

// VolumeType is an emulated block-volume offering.
type VolumeType struct {
	Name              string  `yaml:"name" json:"name"`
	IOPSPerGiB        float64 `yaml:"iops_per_gib" json:"iops_per_gib"` // provisioning limit per GiB; 0 = not provisioned
	MaxIOPS           float64 `yaml:"max_iops" json:"max_iops"`
	DefaultIOPS       float64 `yaml:"default_iops" json:"default_iops"`
	MaxMiBps          float64 `yaml:"max_mibps" json:"max_mibps"` // 0 = no cap
	PricePerGiBMonth  float64 `yaml:"price_per_gib_month" json:"price_per_gib_month"`
	PricePerIOPSMonth float64 `yaml:"price_per_iops_month" json:"price_per_iops_month"`
}

// Catalog is the set of instance and volume types a lab can use.
type Catalog struct {
	InstanceTypes []InstanceType `yaml:"instance_types" json:"instance_types"`
	VolumeTypes   []VolumeType   `yaml:"volume_types" json:"volume_types"`
}

// HoursPerMonth converts hourly prices to monthly ones (365 x 24 / 12).
const HoursPerMonth = 730

// DefaultCatalog returns the shipped catalog (catalog.yaml).
func DefaultCatalog() *Catalog {
	c, err := parseCatalog("the built-in catalog", defaultCatalog)
	if err != nil {
		panic(err) // the embedded file is tested
	}
	return c
}

// LoadCatalog returns the default catalog with the types in file added; a
// type of the same name as a default one replaces it. An empty file name
// returns the default catalog.
func LoadCatalog(file string) (*Catalog, error) {
	c := DefaultCatalog()
	if file == "" {
		return c, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("lab.catalog: cannot read %s: %v", file, err)
	}
	extra, err := parseCatalog(file, b)
	if err != nil {
		return nil, err
	}
	for _, t := range extra.InstanceTypes {
		c.InstanceTypes = replaceOrAdd(c.InstanceTypes, t, func(x InstanceType) string { return x.Name })
	}
	for _, t := range extra.VolumeTypes {
		c.VolumeTypes = replaceOrAdd(c.VolumeTypes, t, func(x VolumeType) string { return x.Name })
	}
	return c, nil
}

func replaceOrAdd[T any](xs []T, x T, name func(T) string) []T {
	for i := range xs {
		if name(xs[i]) == name(x) {
			xs[i] = x
			return xs
		}
	}
	return append(xs, x)
}

func parseCatalog(file string, b []byte) (*Catalog, error) {
	var c Catalog
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("lab catalog %s: %v", file, err)
	}
	seen := map[string]bool{}
	for i, t := range c.InstanceTypes {
		where := fmt.Sprintf("lab catalog %s: instance_types[%d]", file, i)
		switch {
		case !validName(t.Name):
			return nil, fmt.Errorf("%s: name %q must be letters, digits, '.', '_' or '-'", where, t.Name)
		case seen["i:"+t.Name]:
			return nil, fmt.Errorf("%s: name %q appears twice; give each type its own name", where, t.Name)
		case !(t.VCPUs > 0) || t.VCPUs > 1024:
			return nil, fmt.Errorf("%s (%s): vcpus must be a positive number of cores like 0.5 or 2, got %v", where, t.Name, t.VCPUs)
		case t.MemoryMiB < 16:
			return nil, fmt.Errorf("%s (%s): memory_mib must be at least 16, got %d", where, t.Name, t.MemoryMiB)
		case t.NetworkMbit < 0 || t.VolumeMiBps < 0 || t.PricePerHour < 0 || math.IsNaN(t.NetworkMbit+t.VolumeMiBps+t.PricePerHour):
			return nil, fmt.Errorf("%s (%s): network_mbit, volume_mibps and price_per_hour must be zero or positive", where, t.Name)
		}
		seen["i:"+t.Name] = true
	}
	for i, t := range c.VolumeTypes {
		where := fmt.Sprintf("lab catalog %s: volume_types[%d]", file, i)
		switch {
		case !validName(t.Name):
			return nil, fmt.Errorf("%s: name %q must be letters, digits, '.', '_' or '-'", where, t.Name)
		case seen["v:"+t.Name]:
			return nil, fmt.Errorf("%s: name %q appears twice; give each type its own name", where, t.Name)
		case t.IOPSPerGiB < 0 || t.MaxIOPS < 0 || t.DefaultIOPS < 0 || t.MaxMiBps < 0 || t.PricePerGiBMonth < 0 || t.PricePerIOPSMonth < 0:
			return nil, fmt.Errorf("%s (%s): limits and prices must be zero or positive", where, t.Name)
		case t.MaxIOPS > 0 && t.DefaultIOPS > t.MaxIOPS:
			return nil, fmt.Errorf("%s (%s): default_iops %v is above max_iops %v", where, t.Name, t.DefaultIOPS, t.MaxIOPS)
		}
		seen["v:"+t.Name] = true
	}
	return &c, nil
}

// Instance returns the instance type of that name.
func (c *Catalog) Instance(name string) (InstanceType, bool) {
	for _, t := range c.InstanceTypes {
		if t.Name == name {
			return t, true
		}
	}
	return InstanceType{}, false
}

// Volume returns the volume type of that name.
func (c *Catalog) Volume(name string) (VolumeType, bool) {
	for _, t := range c.VolumeTypes {
		if t.Name == name {
			return t, true
		}
	}
	return VolumeType{}, false
}

// InstanceNames lists the instance types, sorted, for error messages.
func (c *Catalog) InstanceNames() []string {
	var out []string
	for _, t := range c.InstanceTypes {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

// VolumeNames lists the volume types, sorted, for error messages.
func (c *Catalog) VolumeNames() []string {
	var out []string
	for _, t := range c.VolumeTypes {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

// VolumeMonthlyPrice is what a volume of this type, size and provisioned
// IOPS costs per month.
func (t VolumeType) VolumeMonthlyPrice(sizeGiB, iops float64) float64 {
	return t.PricePerGiBMonth*sizeGiB + t.PricePerIOPSMonth*iops
}

func validName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
