package lab

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupRoot is the directory every lab's cgroups live under, in each
// hierarchy: /<cgroupRoot>/<lab>/<host>.
const cgroupRoot = "headroom-lab"

// cpuPeriodUs is the CFS period of a host's CPU quota. 100 ms is the
// kernel's default; quota = vCPUs x period.
const cpuPeriodUs = 100000

// cgroups creates and limits one cgroup per lab host, in cgroup v1 (one
// hierarchy per controller) or v2 (the unified hierarchy), whichever the
// machine uses for the cpu, memory and block-I/O controllers.
type cgroups struct {
	v2 bool
	// v1: controller -> mount point; the cpu and cpuacct controllers may
	// share one. v2: "" -> the unified mount point.
	mounts map[string]string
}

// v1Needed are the v1 controllers a lab host is limited and measured by.
var v1Needed = []string{"cpu", "cpuacct", "memory", "blkio"}

// detectCgroups reads the mount table under root ("/" normally) and picks
// the cgroup version. It fails with the missing controller's name when
// neither version offers cpu, memory and block I/O.
func detectCgroups(root string) (*cgroups, error) {
	b, err := os.ReadFile(filepath.Join(root, "proc/self/mounts"))
	if err != nil {
		return nil, fmt.Errorf("cannot read the mount table to find cgroups: %v", err)
	}
	v1 := map[string]string{}
	v2 := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 {
			continue
		}
		point := filepath.Join(root, unescapeOctal(f[1]))
		switch f[2] {
		case "cgroup":
			for _, o := range strings.Split(f[3], ",") {
				for _, c := range v1Needed {
					if o == c {
						v1[c] = point
					}
				}
			}
		case "cgroup2":
			if v2 == "" || f[1] == "/sys/fs/cgroup" {
				v2 = point
			}
		}
	}
	if len(v1) > 0 {
		// A controller bound to v1 is unavailable in v2, so any v1
		// controller means the v1 layout (hybrid systems included).
		for _, c := range v1Needed {
			if v1[c] == "" {
				return nil, fmt.Errorf("the cgroup v1 %s controller is not mounted (needed for lab hosts' limits); mount it under /sys/fs/cgroup/%s", c, c)
			}
		}
		return &cgroups{mounts: v1}, nil
	}
	if v2 == "" {
		return nil, errors.New("no cgroup filesystem is mounted; lab hosts need cgroups (v1 cpu, cpuacct, memory and blkio, or v2) for their CPU, memory and volume limits")
	}
	have, err := os.ReadFile(filepath.Join(v2, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Errorf("cannot read the cgroup v2 controllers at %s: %v", v2, err)
	}
	for _, c := range []string{"cpu", "memory", "io"} {
		if !containsWord(string(have), c) {
			return nil, fmt.Errorf("the cgroup v2 %s controller is not available at %s; lab hosts need cpu, memory and io", c, v2)
		}
	}
	return &cgroups{v2: true, mounts: map[string]string{"": v2}}, nil
}

func containsWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// unescapeOctal undoes the \040-style escapes of /proc/self/mounts.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Version is "v1" or "v2".
func (c *cgroups) Version() string {
	if c.v2 {
		return "v2"
	}
	return "v1"
}

// dirs are the directories of cgroup rel ("/headroom-lab/lab/host") in
// every hierarchy, each once.
func (c *cgroups) dirs(rel string) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range append([]string{""}, v1Needed...) {
		m, ok := c.mounts[k]
		if !ok || seen[m] {
			continue
		}
		seen[m] = true
		out = append(out, filepath.Join(m, rel))
	}
	return out
}

func (c *cgroups) dir(controller, rel string) string {
	if c.v2 {
		return filepath.Join(c.mounts[""], rel)
	}
	return filepath.Join(c.mounts[controller], rel)
}

// create makes cgroup rel and its parents in every hierarchy; in v2 it
// enables the cpu, memory and io controllers for the children of each
// parent on the way.
func (c *cgroups) create(rel string) error {
	for _, d := range c.dirs(rel) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cannot create the cgroup %s: %v", d, err)
		}
	}
	// A host's quota is a ceiling; when the machine is busy (the load
	// generator, other hosts) the host may still get less. Four times the
	// default CPU weight for the lab as a whole lets hosts reach their
	// quotas. Best effort: a quota still holds without it.
	if c.v2 {
		_ = writeFile(filepath.Join(c.mounts[""], cgroupRoot, "cpu.weight"), "400")
	} else {
		_ = writeFile(filepath.Join(c.mounts["cpu"], cgroupRoot, "cpu.shares"), "4096")
	}
	if !c.v2 {
		return nil
	}
	parts := strings.Split(strings.Trim(rel, "/"), "/")
	p := c.mounts[""]
	for _, part := range parts {
		if err := writeFile(filepath.Join(p, "cgroup.subtree_control"), "+cpu +memory +io"); err != nil {
			return err
		}
		p = filepath.Join(p, part)
	}
	return nil
}

// setCPU limits cgroup rel to vcpus cores' worth of CPU time per period.
func (c *cgroups) setCPU(rel string, vcpus float64) error {
	quota := int64(vcpus * cpuPeriodUs)
	if quota < 1000 {
		quota = 1000 // the kernel's minimum quota is 1 ms
	}
	if c.v2 {
		return writeFile(filepath.Join(c.dir("", rel), "cpu.max"), fmt.Sprintf("%d %d", quota, cpuPeriodUs))
	}
	d := c.dir("cpu", rel)
	if err := writeFile(filepath.Join(d, "cpu.cfs_period_us"), strconv.Itoa(cpuPeriodUs)); err != nil {
		return err
	}
	return writeFile(filepath.Join(d, "cpu.cfs_quota_us"), strconv.FormatInt(quota, 10))
}

// setMemory limits cgroup rel's memory, page cache included.
func (c *cgroups) setMemory(rel string, bytes int64) error {
	if c.v2 {
		return writeFile(filepath.Join(c.dir("", rel), "memory.max"), strconv.FormatInt(bytes, 10))
	}
	return writeFile(filepath.Join(c.dir("memory", rel), "memory.limit_in_bytes"), strconv.FormatInt(bytes, 10))
}

// setIO writes cgroup rel's per-direction block-I/O limits on the device
// (iobudget.go splits a volume's budgets into them).
func (c *cgroups) setIO(rel string, l dirLimits) error {
	if c.v2 {
		v := func(x uint64) string {
			if x == 0 {
				return "max"
			}
			return strconv.FormatUint(x, 10)
		}
		line := fmt.Sprintf("%s riops=%s wiops=%s rbps=%s wbps=%s", l.Dev, v(l.IOPS[0]), v(l.IOPS[1]), v(l.BPS[0]), v(l.BPS[1]))
		return writeFile(filepath.Join(c.dir("", rel), "io.max"), line)
	}
	d := c.dir("blkio", rel)
	for _, f := range []struct {
		file string
		val  uint64
	}{
		{"blkio.throttle.read_iops_device", l.IOPS[0]}, {"blkio.throttle.write_iops_device", l.IOPS[1]},
		{"blkio.throttle.read_bps_device", l.BPS[0]}, {"blkio.throttle.write_bps_device", l.BPS[1]},
	} {
		// Writing 0 removes the device's rule (no limit).
		if err := writeFile(filepath.Join(d, f.file), fmt.Sprintf("%s %d", l.Dev, f.val)); err != nil {
			return err
		}
	}
	return nil
}

// procsFiles are the files a process ID is written to so that it (and
// the children it starts later) belongs to cgroup rel.
func (c *cgroups) procsFiles(rel string) []string {
	var out []string
	for _, d := range c.dirs(rel) {
		out = append(out, filepath.Join(d, "cgroup.procs"))
	}
	return out
}

// pids lists the processes in cgroup rel (in any hierarchy).
func (c *cgroups) pids(rel string) []int {
	seen := map[int]bool{}
	var out []int
	for _, f := range c.procsFiles(rel) {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(l); err == nil && !seen[pid] {
				seen[pid] = true
				out = append(out, pid)
			}
		}
	}
	return out
}

// signal sends sig to every process of cgroup rel and returns how many.
func (c *cgroups) signal(rel string, sig syscall.Signal) int {
	n := 0
	for _, pid := range c.pids(rel) {
		if syscall.Kill(pid, sig) == nil {
			n++
		}
	}
	return n
}

// remove kills every process left in cgroup rel, waits for them to go and
// removes the cgroup in every hierarchy. A cgroup that does not exist is
// not an error.
func (c *cgroups) remove(rel string) error {
	deadline := time.Now().Add(10 * time.Second)
	for c.signal(rel, syscall.SIGKILL) > 0 {
		// A stopped process dies from SIGKILL too; wait until the kernel
		// has taken them out of the cgroup.
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v in the lab cgroup %s did not exit after SIGKILL", c.pids(rel), rel)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var errs []error
	for _, d := range c.dirs(rel) {
		if err := removeCgroupTree(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeCgroupTree removes d and any cgroups below it (deepest first);
// cgroup directories are removed with rmdir even though they hold files.
func removeCgroupTree(d string) error {
	entries, err := os.ReadDir(d)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := removeCgroupTree(filepath.Join(d, e.Name())); err != nil {
				return err
			}
		}
	}
	var rerr error
	for i := 0; i < 50; i++ {
		if rerr = syscall.Rmdir(d); rerr == nil || errors.Is(rerr, syscall.ENOENT) {
			return nil
		}
		time.Sleep(20 * time.Millisecond) // EBUSY right after the last process exits
	}
	return fmt.Errorf("cannot remove the cgroup %s: %v", d, rerr)
}

// removeIfEmpty removes cgroup dir rel in every hierarchy when it has no
// child cgroups (the shared /headroom-lab parent after the last lab).
func (c *cgroups) removeIfEmpty(rel string) {
	for _, d := range c.dirs(rel) {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		empty := true
		for _, e := range entries {
			empty = empty && !e.IsDir()
		}
		if empty {
			_ = syscall.Rmdir(d)
		}
	}
}

func writeFile(path, val string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("cannot open %s to set a lab limit: %v", path, err)
	}
	_, err = f.WriteString(val)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write %q to %s: %v", val, path, err)
	}
	return nil
}
