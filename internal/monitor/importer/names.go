package importer

// Metric names the importers produce in addition to those in package
// monitor. They follow the same conventions (rates per second, sizes in
// bytes).
const (
	// DiskOps is completed reads + writes + discards per second (sar's
	// tps, which sar -d reports instead of separate read and write ops).
	DiskOps = "ops_per_s"

	// MemTotalBytes is the installed memory seen by the kernel (MemTotal).
	MemTotalBytes = "total_bytes"
)
