package procfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// Columns of /proc/diskstats after major, minor and name.
const (
	dsReads = iota
	dsReadsMerged
	dsSectorsRead
	dsReadMs
	dsWrites
	dsWritesMerged
	dsSectorsWritten
	dsWriteMs
	dsInFlight
	dsIOMs
	dsWeightedMs
	dsCols
)

const sectorBytes = 512 // /proc/diskstats counts 512-byte sectors whatever the device's sector size

type diskCounters [dsCols]uint64

// parseDiskstatsLine splits one /proc/diskstats line into the device name
// and its first dsCols counters.
func parseDiskstatsLine(line []byte, c *diskCounters) (name []byte, ok bool) {
	_, rest := nextField(line) // major
	_, rest = nextField(rest)  // minor
	name, rest = nextField(rest)
	if len(name) == 0 {
		return nil, false
	}
	if uintFields(rest, c[:]) < dsCols {
		return name, false
	}
	return name, true
}

// diskRates are the metrics of one interval.
type diskRates struct {
	readOps, writeOps, readBytes, writeBytes, util, queue, await float64
	// okX is false when a counter behind X went backwards (or, for await,
	// when no I/O completed).
	okReadOps, okWriteOps, okReadBytes, okWriteBytes, okUtil, okQueue, okAwait bool
}

func computeDisk(cur, prev *diskCounters, secs float64) (r diskRates) {
	d := func(i int) (float64, bool) {
		if cur[i] < prev[i] {
			return 0, false
		}
		return float64(cur[i] - prev[i]), true
	}
	ms := secs * 1000
	var v float64
	var ok bool
	v, ok = d(dsReads)
	r.readOps, r.okReadOps = v/secs, ok
	v, ok = d(dsWrites)
	r.writeOps, r.okWriteOps = v/secs, ok
	v, ok = d(dsSectorsRead)
	r.readBytes, r.okReadBytes = v*sectorBytes/secs, ok
	v, ok = d(dsSectorsWritten)
	r.writeBytes, r.okWriteBytes = v*sectorBytes/secs, ok
	v, ok = d(dsIOMs)
	r.util, r.okUtil = 100*v/ms, ok
	if r.util > 100 {
		r.util = 100 // io_ms is sampled by the kernel at jiffy granularity
	}
	v, ok = d(dsWeightedMs)
	r.queue, r.okQueue = v/ms, ok
	nr, ok1 := d(dsReads)
	nw, ok2 := d(dsWrites)
	tr, ok3 := d(dsReadMs)
	tw, ok4 := d(dsWriteMs)
	if ok1 && ok2 && ok3 && ok4 && nr+nw > 0 {
		r.await, r.okAwait = (tr+tw)/(nr+nw), true
	}
	return r
}

type diskState struct {
	name      string
	resource  string
	cur, prev diskCounters
	seen      bool // in this call's /proc/diskstats
	havePrev  bool
	gone      bool // noted as missing
}

type diskSampler struct {
	f      *statFile
	disks  []*diskState
	byName map[string]*diskState
}

func newDiskSampler(root string, names []string, all bool) (*diskSampler, error) {
	path := filepath.Join(root, "proc/diskstats")
	f, err := openStatFile(path, 8<<10)
	if err != nil {
		return nil, fmt.Errorf("procfs: cannot open %s (%v); disk sampling needs a mounted /proc", path, err)
	}
	ds := &diskSampler{f: f, byName: map[string]*diskState{}}
	b, err := f.read()
	if err != nil {
		f.close()
		return nil, fmt.Errorf("procfs: %v", err)
	}
	var present []string
	var c diskCounters
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		if name, _ := parseDiskstatsLine(line, &c); len(name) > 0 {
			present = append(present, string(name))
		}
	}
	isPresent := map[string]bool{}
	for _, n := range present {
		isPresent[n] = true
	}
	for _, n := range names {
		n = strings.TrimPrefix(n, "/dev/")
		if !isPresent[n] {
			f.close()
			return nil, fmt.Errorf("procfs: disk %q is not in /proc/diskstats (there: %s); name one of those in monitor.disks, or use monitor.disks: [all]", n, listNames(present))
		}
		ds.addDisk(n)
	}
	if all {
		sysBlock := filepath.Join(root, "sys/block")
		_, err := os.Stat(sysBlock)
		haveSys := err == nil
		for _, n := range present {
			if strings.HasPrefix(n, "loop") || strings.HasPrefix(n, "ram") || strings.HasPrefix(n, "zram") {
				continue
			}
			if haveSys {
				if _, err := os.Stat(filepath.Join(sysBlock, n)); err != nil {
					continue // a partition
				}
			}
			ds.addDisk(n)
		}
	}
	return ds, nil
}

func (ds *diskSampler) addDisk(name string) {
	if ds.byName[name] != nil {
		return
	}
	d := &diskState{name: name, resource: monitor.ResourceDiskPrefix + name}
	ds.byName[name] = d
	ds.disks = append(ds.disks, d)
}

func (ds *diskSampler) sample(e *emitter, s *Sampler) error {
	if len(ds.disks) == 0 {
		return nil
	}
	b, err := ds.f.read()
	if err != nil {
		return fmt.Errorf("procfs: %v", err)
	}
	for _, d := range ds.disks {
		d.seen = false
	}
	var c diskCounters
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		name, ok := parseDiskstatsLine(line, &c)
		if !ok {
			continue
		}
		d := ds.byName[string(name)]
		if d == nil {
			continue
		}
		d.cur = c
		d.seen = true
	}
	for _, d := range ds.disks {
		if !d.seen {
			if !d.gone {
				s.warn("procfs: disk %s disappeared from /proc/diskstats; its samples stop until it returns", d.name)
				d.gone = true
			}
			d.havePrev = false
			continue
		}
		d.gone = false
		if e.emit && d.havePrev {
			r := computeDisk(&d.cur, &d.prev, e.secs)
			emitDisk(e, d.resource, &r)
		}
		d.prev = d.cur
		d.havePrev = true
	}
	return nil
}

func emitDisk(e *emitter, res string, r *diskRates) {
	e.addIf(r.okReadOps, res, monitor.DiskReadOps, r.readOps)
	e.addIf(r.okWriteOps, res, monitor.DiskWriteOps, r.writeOps)
	e.addIf(r.okReadBytes, res, monitor.DiskReadBytes, r.readBytes)
	e.addIf(r.okWriteBytes, res, monitor.DiskWriteBytes, r.writeBytes)
	e.addIf(r.okAwait, res, monitor.DiskAwaitMs, r.await)
	e.addIf(r.okUtil, res, monitor.DiskUtilPct, r.util)
	e.addIf(r.okQueue, res, monitor.DiskQueueLength, r.queue)
}

// DiskForPath returns the name of the whole disk (as in /proc/diskstats,
// e.g. "vda" for a file on /dev/vda1) that holds path, for use in
// Config.Disks. It follows st_dev through /sys/dev/block, and for
// filesystems with an anonymous device number (btrfs, overlay) the mount's
// source in /proc/self/mountinfo. root is the filesystem root of /proc and
// /sys ("" means "/"); path is looked up as given.
func DiskForPath(root, path string) (string, error) {
	if root == "" {
		root = "/"
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return "", fmt.Errorf("procfs: cannot stat %s (%v); give an existing path", path, err)
	}
	dev := uint64(st.Dev)
	major, minor := unix.Major(dev), unix.Minor(dev)
	if major != 0 {
		if name, err := diskFromSysDev(root, fmt.Sprintf("%d:%d", major, minor)); err == nil {
			return name, nil
		}
	}
	// Anonymous device: take the mount's source device.
	mi, err := os.ReadFile(filepath.Join(root, "proc/self/mountinfo"))
	if err == nil {
		want := fmt.Sprintf("%d:%d", major, minor)
		for _, line := range strings.Split(string(mi), "\n") {
			f := strings.Fields(line)
			if len(f) < 10 || f[2] != want {
				continue
			}
			sep := -1
			for i := 6; i < len(f); i++ {
				if f[i] == "-" {
					sep = i
					break
				}
			}
			if sep < 0 || sep+2 >= len(f) || !strings.HasPrefix(f[sep+2], "/dev/") {
				continue
			}
			src := f[sep+2]
			if r, err := filepath.EvalSymlinks(filepath.Join(root, src)); err == nil {
				src = r
			}
			var s2 syscall.Stat_t
			if err := syscall.Stat(src, &s2); err == nil && s2.Mode&syscall.S_IFMT == syscall.S_IFBLK {
				r := uint64(s2.Rdev)
				ma, mn := unix.Major(r), unix.Minor(r)
				if name, err := diskFromSysDev(root, fmt.Sprintf("%d:%d", ma, mn)); err == nil {
					return name, nil
				}
			}
		}
	}
	return "", fmt.Errorf("procfs: cannot find the block device holding %s (device %d:%d is not a disk in /sys/dev/block); name its disk in monitor.disks, or use monitor.disks: [all]", path, major, minor)
}

// diskFromSysDev maps "MAJ:MIN" to the whole disk's name via
// /sys/dev/block, going from a partition to its parent.
func diskFromSysDev(root, majmin string) (string, error) {
	link := filepath.Join(root, "sys/dev/block", majmin)
	target, err := filepath.EvalSymlinks(link)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(target, "partition")); err == nil {
		target = filepath.Dir(target)
	}
	return filepath.Base(target), nil
}
