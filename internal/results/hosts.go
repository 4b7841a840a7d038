package results

import (
	"sort"
	"time"
)

// HoursPerMonth spreads monthly prices (volumes) over hours, as the
// catalog does.
const HoursPerMonth = 730

// HostLimits are a host's limits from From on, until the host's next
// entry. Zero limits mean unlimited.
type HostLimits struct {
	Host         string        `json:"host"`
	From         time.Time     `json:"from"`
	Lab          string        `json:"lab,omitempty"`  // the lab the host belonged to ("" for a host outside one)
	Type         string        `json:"type,omitempty"` // instance type
	Address      string        `json:"address,omitempty"`
	VCPUs        float64       `json:"vcpus"`
	MemoryBytes  int64         `json:"memory_bytes"`
	NetworkMbit  float64       `json:"network_mbit"`
	PricePerHour float64       `json:"price_per_hour"` // the instance's price, volumes not included
	Volumes      []VolumeLimit `json:"volumes,omitempty"`
	Stopped      bool          `json:"stopped,omitempty"`
	LinkDown     bool          `json:"link_down,omitempty"`
	Cause        string        `json:"cause,omitempty"` // "up", or the event that set these limits
	// Compute is what the host's vCPUs meant (its lab's compute unit; nil
	// outside a lab and in labs made before compute units).
	Compute *ComputeUnit `json:"compute_unit,omitempty"`
}

// VolumeLimit is a host's volume with the limits in force.
type VolumeLimit struct {
	Name         string  `json:"name"`
	Type         string  `json:"type"`
	SizeGiB      float64 `json:"size_gib"`
	IOPS         float64 `json:"iops"`  // 0 = unthrottled
	MiBps        float64 `json:"mibps"` // 0 = uncapped
	MonthlyPrice float64 `json:"monthly_price"`
	// Stalled: the volume served no I/O (a stall_disk fault) whatever its
	// limits say.
	Stalled bool `json:"stalled,omitempty"`
}

// Volume returns the named volume ("" = the first), if the host has it.
func (h HostLimits) Volume(name string) (VolumeLimit, bool) {
	for _, v := range h.Volumes {
		if name == "" || v.Name == name {
			return v, true
		}
	}
	return VolumeLimit{}, false
}

// HourlyCost is the host's price per hour with its volumes' monthly
// prices spread over HoursPerMonth.
func (h HostLimits) HourlyCost() float64 {
	p := h.PricePerHour
	for _, v := range h.Volumes {
		p += v.MonthlyPrice / HoursPerMonth
	}
	return p
}

// Catalog is the instance and volume types a lab offered, with prices,
// as recorded when it came up.
type Catalog struct {
	InstanceTypes []InstanceType `json:"instance_types"`
	VolumeTypes   []VolumeType   `json:"volume_types"`
}

// InstanceType is one instance type of a catalog.
type InstanceType struct {
	Name         string  `json:"name"`
	VCPUs        float64 `json:"vcpus"`
	MemoryMiB    int64   `json:"memory_mib"`
	NetworkMbit  float64 `json:"network_mbit"`
	VolumeMiBps  float64 `json:"volume_mibps"`
	PricePerHour float64 `json:"price_per_hour"`
}

// VolumeType is one volume type of a catalog.
type VolumeType struct {
	Name              string  `json:"name"`
	IOPSPerGiB        float64 `json:"iops_per_gib"`
	MaxIOPS           float64 `json:"max_iops"`
	DefaultIOPS       float64 `json:"default_iops"`
	MaxMiBps          float64 `json:"max_mibps"`
	PricePerGiBMonth  float64 `json:"price_per_gib_month"`
	PricePerIOPSMonth float64 `json:"price_per_iops_month"`
}

// Instance returns the named instance type.
func (c *Catalog) Instance(name string) (InstanceType, bool) {
	if c != nil {
		for _, t := range c.InstanceTypes {
			if t.Name == name {
				return t, true
			}
		}
	}
	return InstanceType{}, false
}

// VolumeType returns the named volume type.
func (c *Catalog) VolumeType(name string) (VolumeType, bool) {
	if c != nil {
		for _, t := range c.VolumeTypes {
			if t.Name == name {
				return t, true
			}
		}
	}
	return VolumeType{}, false
}

// Lab is one lab that came up during the campaign (each treatment with a
// lab brings its own up): its hosts as they started, and its catalog.
type Lab struct {
	Name    string       `json:"name"`
	Up      time.Time    `json:"up"`
	Hosts   []HostLimits `json:"hosts"`
	Catalog *Catalog     `json:"catalog,omitempty"`
	// ComputeUnit is what a vCPU meant in this lab (nil before compute
	// units existed).
	ComputeUnit *ComputeUnit `json:"compute_unit,omitempty"`
}

// hostSeries is one host's limits in time order.
type hostSeries []HostLimits

// at returns the entry in force at t: the last one whose From is not after
// t.
func (s hostSeries) at(t time.Time) (HostLimits, bool) {
	i := sort.Search(len(s), func(i int) bool { return s[i].From.After(t) })
	if i == 0 {
		return HostLimits{}, false
	}
	return s[i-1], true
}
