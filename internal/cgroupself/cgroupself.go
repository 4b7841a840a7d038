// Package cgroupself finds the cgroups the running process is in, from
// /proc/self/cgroup, and the directories from one of them up to its
// hierarchy's root, where the limits that apply to the process are set
// (a parent's limit binds all its children).
package cgroupself

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Membership is the process's place in each hierarchy.
type Membership struct {
	v1    map[string]string // cgroup v1: controller → cgroup path
	v2    string            // cgroup v2: the unified hierarchy's path
	hasV2 bool
}

// Read parses procDir/self/cgroup. A system without the file has no
// cgroups: the zero Membership. Each line is
// hierarchy-ID:controller-list:cgroup-path ("4:cpu,cpuacct:/lab/host"
// for v1, "0::/path" for v2); the path may itself contain ':'.
func Read(procDir string) (Membership, error) {
	var m Membership
	b, err := os.ReadFile(filepath.Join(procDir, "self", "cgroup"))
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		id, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		ctrls, p, ok := strings.Cut(rest, ":")
		if !ok {
			return Membership{}, fmt.Errorf("/proc/self/cgroup: malformed line %q", line)
		}
		if id == "0" && ctrls == "" {
			m.v2, m.hasV2 = p, true
			continue
		}
		for _, c := range strings.Split(ctrls, ",") {
			if m.v1 == nil {
				m.v1 = map[string]string{}
			}
			m.v1[c] = p
		}
	}
	return m, nil
}

// V1 is the cgroup path of a v1 controller ("cpu", "memory"), if the
// process is in that hierarchy. A controller bound to v1 is absent from
// v2 (hybrid systems), so a caller tries V1 first.
func (m Membership) V1(controller string) (string, bool) {
	p, ok := m.v1[controller]
	return p, ok
}

// V2 is the process's cgroup v2 path, if there is a unified hierarchy.
func (m Membership) V2() (string, bool) { return m.v2, m.hasV2 }

// Up lists the directories of cgroup p and of each of its parents under
// mount, from p to the root.
func Up(mount, p string) ([]string, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("/proc/self/cgroup: cgroup path %q is not absolute", p)
	}
	var dirs []string
	for p = path.Clean(p); ; p = path.Dir(p) {
		dirs = append(dirs, filepath.Join(mount, p))
		if p == "/" {
			return dirs, nil
		}
	}
}
