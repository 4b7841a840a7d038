// Package gcpolicy sets Go's garbage collector for a process that drives
// load.
//
// Why: a client's collection cycles take the processor its request
// goroutines need. With GOGC at its default of 100 a cycle starts every
// time the program has allocated as much as its live heap, and a database
// driver allocates on every request (the Cassandra driver 3-15 KB), so a
// client with a live heap of a few MB at thousands of requests a second
// collects many times a second; on a client of one core each cycle's mark
// work and assists delay the goroutines whose answers have arrived, which
// is latency the client adds to what it measures. A larger GOGC makes the
// cycles rarer for more memory (docs/performance.md, "The collector").
//
// The memory is bounded: a soft limit at half of what the process may use
// (its cgroup's memory limit, or the machine's memory) makes the collector
// work harder before the heap gets there, so that a load agent on a small
// lab host is not killed for memory. The user's GOGC or GOMEMLIMIT, when
// set, wins.
package gcpolicy

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/headroom-dev/headroom/internal/cgroupself"
)

// LoadPercent is the GOGC of a load-driving process: a cycle when the heap
// has grown by four times the live heap since the last, a quarter as
// often as the default.
const LoadPercent = 400

// Policy is what Apply set, for a debug line.
type Policy struct {
	Percent  int   // the GC percent set; 0 when GOGC was the user's
	MemLimit int64 // the soft memory limit set in bytes; 0 when none was set
}

// Apply sets the collector for load unless the environment (getenv)
// already does. The memory limit is half of the memory the process may
// use under fsys; none is set when it cannot be found.
func Apply(getenv func(string) string) Policy {
	return apply(getenv, hostFS)
}

func apply(getenv func(string) string, fsys procFS) Policy {
	var p Policy
	if getenv("GOGC") == "" {
		debug.SetGCPercent(LoadPercent)
		p.Percent = LoadPercent
	}
	if getenv("GOMEMLIMIT") == "" {
		if avail, err := fsys.available(); err == nil && avail > 0 {
			p.MemLimit = avail / 2
			debug.SetMemoryLimit(p.MemLimit)
		}
	}
	return p
}

// procFS names the roots the memory is read under: the real /proc and
// /sys/fs/cgroup, or a fake tree in tests.
type procFS struct {
	proc   string
	cgroup string
}

var hostFS = procFS{proc: "/proc", cgroup: "/sys/fs/cgroup"}

// available is the memory the process may use in bytes: the machine's
// (MemTotal), or the smallest memory limit of its cgroup and the cgroup's
// parents when smaller.
func (f procFS) available() (int64, error) {
	total, err := memTotal(filepath.Join(f.proc, "meminfo"))
	if err != nil {
		return 0, err
	}
	limit, err := f.cgroupLimit()
	if err != nil {
		return 0, err
	}
	if limit > 0 && limit < total {
		return limit, nil
	}
	return total, nil
}

// memTotal reads MemTotal from a meminfo file, in bytes.
func memTotal(file string) (int64, error) {
	fh, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("%s: MemTotal line %q is not \"N kB\"", file, sc.Text())
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb <= 0 {
			return 0, fmt.Errorf("%s: MemTotal %q is not a size", file, f[0])
		}
		return kb * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no MemTotal line", file)
}

// cgroupLimit is the smallest memory limit on the way from the process's
// cgroup to the root, in bytes; 0 for none. cgroup v1: the line of
// /proc/self/cgroup whose controllers include memory, and
// memory.limit_in_bytes under the memory hierarchy (a value near 2^63
// means none); v2: the "0::" line and memory.max ("max" means none). A
// level without the file sets no limit.
func (f procFS) cgroupLimit() (int64, error) {
	m, err := cgroupself.Read(f.proc)
	if err != nil {
		return 0, err
	}
	if p, ok := m.V1("memory"); ok {
		return smallest(filepath.Join(f.cgroup, "memory"), p, "memory.limit_in_bytes")
	}
	if p, ok := m.V2(); ok {
		return smallest(f.cgroup, p, "memory.max")
	}
	return 0, nil
}

// smallest reads file in cgroup p and in each of its parents under mount
// and keeps the smallest limit.
func smallest(mount, p, file string) (int64, error) {
	dirs, err := cgroupself.Up(mount, p)
	if err != nil {
		return 0, err
	}
	var least int64
	for _, dir := range dirs {
		name := filepath.Join(dir, file)
		b, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q is not a size", name, s)
		}
		// cgroup v1 writes "no limit" as the largest page-aligned int64.
		if v > 0 && v < math.MaxInt64/2 && (least == 0 || v < least) {
			least = v
		}
	}
	return least, nil
}
