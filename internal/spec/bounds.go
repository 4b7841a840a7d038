package spec

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/headroom-dev/headroom/internal/load"
)

// Bounds on the numbers and lengths of a spec, beyond which a campaign
// could not run as written: it would run out of memory, ask for a rate the
// load engine cannot pace, or last longer than anyone waits for.
// docs/spec.md ("Bounds") lists each with its reason; the load engine's own
// limits are in internal/load/bounds.go.
const (
	maxNameLen        = 100   // characters; the name names directories and a lab
	maxDescriptionLen = 10000 // characters
	maxOutputLen      = 4096  // bytes, Linux's PATH_MAX

	maxPhase       = 24 * time.Hour // warmup, measure, cooldown, dead_after, a schedule step
	maxRequestWait = time.Hour      // timeout, late_after, drop_after, think_time

	// maxRecordCount is the key space of YCSB's scrambled zipfian (10^10),
	// over which its ranks are drawn before they are hashed onto the keys.
	maxRecordCount = 10_000_000_000
	// maxRecordBytes bounds field_count x field_length; the workload
	// generator refuses the same (internal/workload/config.go), so a spec
	// that validates builds its generator.
	maxRecordBytes = 64 << 20
	maxScanLength  = 100_000 // records per scan
	maxTableRows   = maxRecordCount
)

// bounds checks the limits above and the load engine's, for every field
// that has no narrower rule elsewhere.
func (c *checker) bounds(s *Spec) {
	if n := utf8.RuneCountInString(s.Description); n > maxDescriptionLen {
		c.fail("description", "is %d characters long, more than the %d allowed; shorten it", n, maxDescriptionLen)
	}
	if len(s.Output) > maxOutputLen {
		c.fail("output", "is %d bytes long, more than the %d a path may be; use a shorter path", len(s.Output), maxOutputLen)
	}
	c.atMost("phases.warmup", s.Phases.Warmup, maxPhase)
	c.atMost("phases.measure", s.Phases.Measure, maxPhase)
	c.atMost("phases.cooldown", s.Phases.Cooldown, maxPhase)
	c.atMost("load.dead_after", s.Load.DeadAfter, maxPhase)
	c.atMost("load.timeout", s.Load.Timeout, maxRequestWait)
	switch s.Load.Model {
	case "open":
		c.atMost("load.late_after", s.Load.LateAfter, maxRequestWait)
		c.atMost("load.drop_after", s.Load.DropAfter, maxRequestWait)
		c.slots("load.max_in_flight", float64(s.Load.MaxInFlight), s, "request slots")
	case "closed":
		c.atMost("load.think_time", s.Load.ThinkTime, maxRequestWait)
	}
	c.workloadBounds(&s.Workload)
	c.disks(s.Monitor.Disks)
}

// disks checks monitor.disks: "all" or names of this machine's disks, the
// one its monitor samples (when /proc/diskstats can be read).
func (c *checker) disks(names []string) {
	present := diskNames()
	for i, d := range names {
		p := fmt.Sprintf("monitor.disks[%d]", i)
		switch {
		case d == "all":
		case d == "" || strings.ContainsAny(d, "/ \t") || d == "." || d == "..":
			c.fail(p, "%q is not a disk name; name a device as in /proc/diskstats (e.g. sda, nvme0n1), or use [all]", truncate(d, 40))
		case present != nil && !slices.Contains(present, d):
			c.fail(p, "%q is not a disk of this machine; name one of %s, or use [all]", truncate(d, 40), orList(wholeDisks(present)))
		}
	}
}

// diskNames lists the devices in /proc/diskstats, or nil when it cannot be
// read.
func diskNames() []string {
	data, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		return nil
	}
	var names []string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 2 {
			names = append(names, f[2])
		}
	}
	return names
}

// wholeDisks leaves out of names the loop and RAM devices, which nobody
// means, and keeps at most 10, for a message.
func wholeDisks(names []string) []string {
	var out []string
	for _, n := range names {
		if !strings.HasPrefix(n, "loop") && !strings.HasPrefix(n, "ram") && len(out) < 10 {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return names[:min(len(names), 10)]
	}
	return out
}

// atMost checks that a duration is not above its bound.
func (c *checker) atMost(path string, d Duration, limit time.Duration) {
	if d.Duration > limit {
		c.fail(path, "%s is longer than the %s allowed; use %s or less", shortDuration(d.Duration), shortDuration(limit), shortDuration(limit))
	}
}

// recordBytes is the size of one record's fields, which every request slot
// keeps a buffer of (statement workloads keep none).
func recordBytes(w *Workload) int64 {
	if len(w.Statements) > 0 {
		return 0
	}
	return int64(w.FieldCount) * int64(w.FieldLength)
}

// slots checks a number of request slots (max_in_flight, or a level of
// clients) against the memory they take: load.SlotBytes each, within a
// quarter of this machine's memory.
func (c *checker) slots(path string, n float64, s *Spec, what string) bool {
	rb := recordBytes(&s.Workload)
	if rb > maxRecordBytes {
		return true // reported on the workload; the figure below would mislead
	}
	limit := load.MaxSlots(rb)
	if n <= float64(limit) {
		return true
	}
	per := load.SlotBytes(rb)
	if limit == load.MaxSlotsCeiling {
		c.fail(path, "%.0f %s is more than the %d one run may have; use at most %d", n, what, load.MaxSlotsCeiling, limit)
		return false
	}
	c.fail(path, "%.0f %s would need about %s (%s each with %d-byte records), more than the %s (a quarter of this machine's memory) a run may use; use at most %d, or smaller records",
		n, what, byteSize(int64(n*float64(per))), byteSize(per), rb, byteSize(load.SlotBudget()), limit)
	return false
}

// rate checks one open-loop rate: the engine must be able to pace it, and
// the measured phase must expect at least one request from it.
func (c *checker) rate(path string, v float64, s *Spec) bool {
	measure := s.Phases.Measure.Duration
	switch {
	case v > load.MaxRate:
		c.fail(path, "%g requests per second is more than the %d the load engine can pace; use at most %d", v, load.MaxRate, load.MaxRate)
		return false
	case measure > 0 && v*measure.Seconds() < 1:
		// With fewer than one expected arrival, the measured phase would
		// measure nothing: refuse rather than report empty intervals.
		fix := fmt.Sprintf("use at least %.3g", 1/measure.Seconds())
		if need := 1 / v; need <= maxPhase.Seconds() {
			fix += fmt.Sprintf(", or measure for at least %s", shortDuration(time.Duration(math.Ceil(need))*time.Second))
		}
		c.fail(path, "%g requests per second sends fewer than one request in the %s measured phase; %s", v, shortDuration(measure), fix)
		return false
	}
	return true
}

// workloadBounds checks the workload's sizes.
func (c *checker) workloadBounds(w *Workload) {
	if w.RecordCount > maxRecordCount {
		c.fail("workload.record_count", "%d is more than the %d records allowed (YCSB's key space); use fewer", w.RecordCount, int64(maxRecordCount))
	}
	if rb := recordBytes(w); rb > maxRecordBytes {
		path := "workload.field_length"
		if c.has("workload.field_count") && !c.has("workload.field_length") {
			path = "workload.field_count"
		}
		c.fail(path, "field_count x field_length is %d x %d = %s per record, more than the %s allowed; use fewer or shorter fields", w.FieldCount, w.FieldLength, byteSize(rb), byteSize(maxRecordBytes))
	}
	if w.MaxScanLength > maxScanLength {
		c.fail("workload.max_scan_length", "%d is more than the %d records a scan may return; use a smaller length", w.MaxScanLength, maxScanLength)
	}
	if d := w.Dataset; d != nil {
		for i, t := range d.Tables {
			if t.Rows > maxTableRows {
				c.fail(fmt.Sprintf("workload.dataset.tables[%d].rows", i), "%d is more than the %d rows allowed; use fewer", t.Rows, int64(maxTableRows))
			}
		}
	}
}

// shortDuration prints d without trailing zero units: "24h" rather than
// "24h0m0s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
