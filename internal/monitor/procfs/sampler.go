// Package procfs samples host, block-device, network, process and cgroup
// counters from /proc and /sys and turns them into monitor.Samples.
//
// A Sampler keeps every file it reads open and re-reads it with one
// pread(2) at offset 0 per call (procfs, sysfs and cgroupfs regenerate the
// content on a read at offset 0), parses the bytes in place without
// regular expressions and reuses its buffers, so a call costs one system
// call per file and no allocation except the returned slice. Call Close
// when done.
//
// Rates are computed from counter deltas between two calls of Sample; the
// first call only primes the counters. A counter that went backwards
// (wrap, reset, device re-created) makes only the values that depend on it
// disappear for that interval. A process, disk, interface or cgroup that
// disappears stops producing samples without an error; the Sampler notes
// it once, and Warnings returns the notes.
package procfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// Config says what to sample.
type Config struct {
	Host string // host name put in samples (default os.Hostname)

	CPU     bool // host total "cpu"
	PerCore bool // "cpu0", "cpu1", ...
	Memory  bool // "memory"

	// Disks are block device names as in /proc/diskstats, e.g. "vda" or
	// "nvme0n1p1". AllDisks adds every whole disk (one listed in
	// /sys/block) that is not a loop, ram or zram device. The set is fixed
	// when New runs.
	Disks    []string
	AllDisks bool

	// Interfaces are names from /proc/net/dev. AllInterfaces adds every
	// interface there except "lo" (name "lo" explicitly to get it). The set
	// is fixed when New runs.
	Interfaces    []string
	AllInterfaces bool

	// PIDs are processes; each is sampled as a whole (all its threads,
	// including exited ones; not its children).
	PIDs []int
	// TransientPIDs are processes sampled like PIDs that may end before
	// sampling starts (a server's workers: a PostgreSQL backend exits with
	// its connection); one that is gone by then is left out, not an error.
	TransientPIDs []int

	// Cgroups are paths relative to the hierarchy root, as in
	// /proc/PID/cgroup, e.g. "/headroom/db1". If any of the v1 cpu,
	// cpuacct, memory or blkio controllers is mounted, the v1 files are
	// used; otherwise the cgroup v2 (unified) hierarchy.
	Cgroups []string

	// Root is the filesystem root under which /proc and /sys are found
	// (default "/"); tests point it at a fake tree.
	Root string
}

// Sampler reads the counters Config names. It is not safe for concurrent
// use.
type Sampler struct {
	host   string
	root   string
	prevAt time.Time
	primed bool
	lastN  int

	cpu   *cpuSampler
	mem   *memSampler
	disk  *diskSampler
	net   *netSampler
	procs []*procSampler
	cgs   []*cgroupSampler

	warnings []string
}

// New validates cfg and opens the files it needs. A named disk,
// interface, process or cgroup that does not exist is an error.
func New(cfg Config) (*Sampler, error) {
	s := &Sampler{host: cfg.Host, root: cfg.Root}
	if s.root == "" {
		s.root = "/"
	}
	if s.host == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("procfs: cannot get the host name (%v); set Config.Host", err)
		}
		s.host = h
	}
	if !cfg.CPU && !cfg.PerCore && !cfg.Memory && len(cfg.Disks) == 0 && !cfg.AllDisks &&
		len(cfg.Interfaces) == 0 && !cfg.AllInterfaces && len(cfg.PIDs) == 0 && len(cfg.TransientPIDs) == 0 && len(cfg.Cgroups) == 0 {
		return nil, errors.New("procfs: nothing to sample; enable CPU, PerCore, Memory, disks, interfaces, PIDs or cgroups in the Config")
	}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	var err error
	if cfg.CPU || cfg.PerCore {
		if s.cpu, err = newCPUSampler(s.path("proc/stat"), cfg.CPU, cfg.PerCore); err != nil {
			return nil, err
		}
	}
	if cfg.Memory {
		if s.mem, err = newMemSampler(s.path("proc/meminfo")); err != nil {
			return nil, err
		}
	}
	if len(cfg.Disks) > 0 || cfg.AllDisks {
		if s.disk, err = newDiskSampler(s.root, cfg.Disks, cfg.AllDisks); err != nil {
			return nil, err
		}
	}
	if len(cfg.Interfaces) > 0 || cfg.AllInterfaces {
		if s.net, err = newNetSampler(s.path("proc/net/dev"), cfg.Interfaces, cfg.AllInterfaces); err != nil {
			return nil, err
		}
	}
	seenPID := map[int]bool{}
	for _, pid := range cfg.PIDs {
		if seenPID[pid] {
			continue
		}
		seenPID[pid] = true
		p, err := newProcSampler(s.root, pid)
		if err != nil {
			return nil, err
		}
		s.procs = append(s.procs, p)
	}
	for _, pid := range cfg.TransientPIDs {
		if seenPID[pid] {
			continue
		}
		seenPID[pid] = true
		if p, err := newProcSampler(s.root, pid); err == nil {
			s.procs = append(s.procs, p)
		}
	}
	if len(cfg.Cgroups) > 0 {
		mounts, err := findCgroupMounts(s.root)
		if err != nil {
			return nil, err
		}
		seenCG := map[string]bool{}
		for _, cg := range cfg.Cgroups {
			c, err := newCgroupSampler(mounts, cg)
			if err != nil {
				return nil, err
			}
			if seenCG[c.resource] {
				c.close()
				continue
			}
			seenCG[c.resource] = true
			s.cgs = append(s.cgs, c)
		}
	}
	ok = true
	return s, nil
}

func (s *Sampler) path(rel string) string { return filepath.Join(s.root, rel) }

// Sample reads all counters and returns the samples for the interval
// since the previous call: Start is the previous call's at, Period is at
// minus it. Rates come from counter deltas over Period, gauges (memory,
// RSS) are read now. The first call only primes the counters and returns
// nothing. at must increase from call to call.
func (s *Sampler) Sample(at time.Time) ([]monitor.Sample, error) {
	if s.primed && !at.After(s.prevAt) {
		return nil, fmt.Errorf("procfs: sample time %s is not after the previous one (%s); pass increasing times", at.Format(time.RFC3339Nano), s.prevAt.Format(time.RFC3339Nano))
	}
	e := emitter{host: s.host, start: s.prevAt, period: at.Sub(s.prevAt), emit: s.primed}
	if e.emit {
		e.out = make([]monitor.Sample, 0, s.lastN)
	}
	e.secs = e.period.Seconds()
	if s.cpu != nil {
		if err := s.cpu.sample(&e); err != nil {
			return nil, err
		}
	}
	if s.mem != nil {
		if err := s.mem.sample(&e); err != nil {
			return nil, err
		}
	}
	if s.disk != nil {
		if err := s.disk.sample(&e, s); err != nil {
			return nil, err
		}
	}
	if s.net != nil {
		if err := s.net.sample(&e, s); err != nil {
			return nil, err
		}
	}
	for _, p := range s.procs {
		p.sample(&e, s)
	}
	for _, c := range s.cgs {
		c.sample(&e, s)
	}
	s.prevAt = at
	s.primed = true
	if len(e.out) > s.lastN {
		s.lastN = len(e.out)
	}
	return e.out, nil
}

// Warnings returns the notes collected since the last call (a process
// exited, a disk, interface or cgroup disappeared) and clears them. Each
// event is noted once.
func (s *Sampler) Warnings() []string {
	w := s.warnings
	s.warnings = nil
	return w
}

func (s *Sampler) warn(format string, args ...any) {
	s.warnings = append(s.warnings, fmt.Sprintf(format, args...))
}

// Close releases the open files. The Sampler must not be used afterwards.
func (s *Sampler) Close() error {
	if s.cpu != nil {
		s.cpu.f.close()
	}
	if s.mem != nil {
		s.mem.f.close()
	}
	if s.disk != nil {
		s.disk.f.close()
	}
	if s.net != nil {
		s.net.f.close()
	}
	for _, p := range s.procs {
		p.close()
	}
	for _, c := range s.cgs {
		c.close()
	}
	return nil
}

// emitter collects the samples of one call.
type emitter struct {
	host   string
	start  time.Time
	period time.Duration
	secs   float64
	emit   bool // false on the priming call
	out    []monitor.Sample
}

// addIf adds the value only when it could be computed (ok).
func (e *emitter) addIf(ok bool, resource, metric string, v float64) {
	if ok {
		e.add(resource, metric, v)
	}
}

func (e *emitter) add(resource, metric string, v float64) {
	e.out = append(e.out, monitor.Sample{
		Host: e.host, Resource: resource, Metric: metric,
		Start: e.start, Period: e.period, Value: v, Source: monitor.SourceSampled,
	})
}

// rate adds (cur-prev)/seconds unless the counter went backwards.
func (e *emitter) rate(resource, metric string, cur, prev uint64, scale float64) {
	if cur < prev {
		return
	}
	e.add(resource, metric, float64(cur-prev)*scale/e.secs)
}

// ---------------------------------------------------------------------
// Files read again and again with pread at offset 0.

type statFile struct {
	path string
	fd   int
	buf  []byte
}

func openStatFile(path string, size int) (*statFile, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &statFile{path: path, fd: fd, buf: make([]byte, size)}, nil
}

// read returns the whole current content; the slice is valid until the
// next read. Files such as /proc/net/dev and /proc/diskstats hand out at
// most about one page per read whatever the buffer size, so it reads on at
// the next offset until the kernel returns nothing more, growing the
// buffer when it fills.
func (f *statFile) read() ([]byte, error) {
	if f.fd < 0 {
		return nil, fmt.Errorf("%s: closed", f.path)
	}
	total := 0
	for {
		if total == len(f.buf) {
			grown := make([]byte, 2*len(f.buf))
			copy(grown, f.buf)
			f.buf = grown
		}
		n, err := syscall.Pread(f.fd, f.buf[total:], int64(total))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: f.path, Err: err}
		}
		if n == 0 {
			return f.buf[:total], nil
		}
		total += n
	}
}

func (f *statFile) close() {
	if f != nil && f.fd >= 0 {
		syscall.Close(f.fd)
		f.fd = -1
	}
}

// ---------------------------------------------------------------------
// Allocation-free parsing helpers.

// nextLine splits b at the first newline.
func nextLine(b []byte) (line, rest []byte) {
	for i, c := range b {
		if c == '\n' {
			return b[:i], b[i+1:]
		}
	}
	return b, nil
}

// nextField skips blanks and returns the next blank-separated field.
func nextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	j := i
	for j < len(b) && b[j] != ' ' && b[j] != '\t' {
		j++
	}
	return b[i:j], b[j:]
}

// parseUint parses a decimal number; ok is false if b is not one.
func parseUint(b []byte) (v uint64, ok bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// uintFields parses up to len(dst) numeric fields from b and returns how
// many it parsed.
func uintFields(b []byte, dst []uint64) int {
	n := 0
	for n < len(dst) {
		var f []byte
		f, b = nextField(b)
		v, ok := parseUint(f)
		if !ok {
			break
		}
		dst[n] = v
		n++
	}
	return n
}

// hasPrefix is bytes.HasPrefix for a string prefix.
func hasPrefix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == p
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// listNames formats names for an error message.
func listNames(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	sort.Strings(names)
	if len(names) > 12 {
		return strings.Join(names[:12], ", ") + ", ..."
	}
	return strings.Join(names, ", ")
}
