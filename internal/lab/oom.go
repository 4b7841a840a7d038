package lab

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// OOMKills is how many processes the kernel has killed in host's cgroup
// because it reached its memory limit (memory_mib), counted since the host
// came up; ok is false where the kernel does not count them (cgroup v1
// before Linux 4.13). A managed server that dies with SIGKILL is then
// known to have been killed by the limit, not by something else.
func (l *Lab) OOMKills(host string) (n int64, ok bool) {
	h, err := l.Host(host)
	if err != nil {
		return 0, false
	}
	// v2: memory.events has "oom_kill N"; v1: memory.oom_control has it.
	file := filepath.Join(l.cg.dir("memory", h.Cgroup), "memory.oom_control")
	if l.cg.v2 {
		file = filepath.Join(l.cg.dir("", h.Cgroup), "memory.events")
	}
	return readKeyed(file, "oom_kill")
}

// readKeyed reads the value of key in a cgroup file of "key value" lines.
func readKeyed(path, key string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, found := strings.Cut(sc.Text(), " ")
		if found && k == key {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
