// Package hostinfo collects the facts about the measuring machine that every
// campaign stores beside its results, so that numbers can be compared only
// with numbers from comparable machines.
package hostinfo

import (
	"bufio"
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"syscall"
)

// Facts about this host.
type Facts struct {
	Hostname   string `json:"hostname"`
	OS         string `json:"os"`
	Kernel     string `json:"kernel"`
	Arch       string `json:"arch"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUModel   string `json:"cpu_model,omitempty"`
	MemoryKiB  int64  `json:"memory_kib,omitempty"`
	GoVersion  string `json:"go_version"`
}

// Collect reads the facts; anything it cannot read is left empty.
func Collect() Facts {
	f := Facts{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version()}
	f.Hostname, _ = os.Hostname()
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		f.Kernel = charsToString(u.Release[:])
	}
	f.CPUModel = firstValue("/proc/cpuinfo", "model name")
	if v := firstValue("/proc/meminfo", "MemTotal"); v != "" {
		var kib int64
		for _, r := range strings.TrimSuffix(v, " kB") {
			if r >= '0' && r <= '9' {
				kib = kib*10 + int64(r-'0')
			}
		}
		f.MemoryKiB = kib
	}
	return f
}

// JSON returns the facts as a JSON object.
func (f Facts) JSON() string {
	b, _ := json.Marshal(f)
	return string(b)
}

func charsToString(cs []int8) string {
	b := make([]byte, 0, len(cs))
	for _, c := range cs {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

func firstValue(path, key string) string {
	fh, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
