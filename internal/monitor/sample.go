// Package monitor records what the resources did while load ran: per
// interval, host, process and cgroup metrics (CPU, memory, block devices,
// network), sampled from /proc and /sys or imported from other tools
// (iostat, sar, CloudWatch, Prometheus). Samples share one long format so
// that analyses cannot tell sampled from imported data except by the
// Source and Period tags.
package monitor

import "time"

// Sample is one metric of one resource over one interval.
type Sample struct {
	Host     string        // e.g. the machine's hostname, a lab host name, or an EC2 volume's instance
	Resource string        // "cpu" (all cores), "cpu3", "memory", "disk:vda", "net:eth0", "proc:1234", "cgroup:/lab/db1", "volume:vol-123"
	Metric   string        // see Metrics (docs/results-schema.md), e.g. "util_pct", "read_ops_per_s"
	Start    time.Time     // start of the interval the value covers
	Period   time.Duration // length of that interval (the original period for imported data, e.g. 60s for CloudWatch)
	Value    float64
	Source   string // "sampled", "iostat", "sar", "cloudwatch", "prometheus"
}

// Metric names. Rates are per second, utilisations in percent (0-100 per
// resource; a process may exceed 100 on several cores), sizes in bytes,
// times in milliseconds.
const (
	// CPU (host total "cpu" and per core "cpuN").
	CPUUserPct   = "user_pct"
	CPUSystemPct = "system_pct"
	CPUIowaitPct = "iowait_pct"
	CPUStealPct  = "steal_pct"
	CPUIdlePct   = "idle_pct"
	CPUUtilPct   = "util_pct" // 100 - idle - iowait

	// Memory ("memory").
	MemUsedBytes      = "used_bytes"
	MemCachedBytes    = "cached_bytes"
	MemAvailableBytes = "available_bytes"

	// Block devices ("disk:NAME") and volumes.
	DiskReadOps     = "read_ops_per_s"
	DiskWriteOps    = "write_ops_per_s"
	DiskReadBytes   = "read_bytes_per_s"
	DiskWriteBytes  = "write_bytes_per_s"
	DiskAwaitMs     = "await_ms" // mean time per completed I/O, queueing included
	DiskUtilPct     = "util_pct" // share of the interval the device was busy
	DiskQueueLength = "queue_length"

	// Network interfaces ("net:NAME").
	NetRxBytes   = "rx_bytes_per_s"
	NetTxBytes   = "tx_bytes_per_s"
	NetRxPackets = "rx_packets_per_s"
	NetTxPackets = "tx_packets_per_s"

	// Processes ("proc:PID" or "proc:NAME") and cgroups ("cgroup:PATH").
	ProcCPUPct         = "cpu_pct" // of one core
	ProcRSSBytes       = "rss_bytes"
	ProcReadBytes      = "read_bytes_per_s"
	ProcWriteBytes     = "write_bytes_per_s"
	CgroupThrottledPct = "throttled_pct" // share of the interval's CPU periods that were throttled
	CgroupThrottledMs  = "throttled_ms_per_s"
	CgroupMemoryBytes  = "memory_bytes"
	CgroupIOReadOps    = "read_ops_per_s"
	CgroupIOWriteOps   = "write_ops_per_s"
	CgroupIOReadBytes  = "read_bytes_per_s"
	CgroupIOWriteBytes = "write_bytes_per_s"
)

// Sources of samples.
const (
	SourceSampled    = "sampled"
	SourceIostat     = "iostat"
	SourceSar        = "sar"
	SourceCloudWatch = "cloudwatch"
	SourcePrometheus = "prometheus"
)

// Resource names and prefixes.
const (
	ResourceCPU          = "cpu"
	ResourceMemory       = "memory"
	ResourceDiskPrefix   = "disk:"
	ResourceNetPrefix    = "net:"
	ResourceProcPrefix   = "proc:"
	ResourceCgroupPrefix = "cgroup:"
	ResourceVolumePrefix = "volume:"
)
