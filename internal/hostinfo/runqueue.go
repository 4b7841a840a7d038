package hostinfo

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// RunqueueWaitSeconds is the time this process's threads have spent
// runnable but waiting for a processor, in seconds, summed over the
// threads alive now (/proc/self/task/*/schedstat, its second field); ok is
// false where the kernel keeps no such statistics. Two readings bound a
// window. Unlike the machine's CPU pressure (CPUWaitSeconds), it does not
// count tasks held back by their own CPU quota (a throttled lab host's
// server is runnable but has no processor to wait for): it says how long
// this process itself waited because other work had the processors.
func RunqueueWaitSeconds() (float64, bool) {
	paths, err := filepath.Glob("/proc/self/task/*/schedstat")
	if err != nil || len(paths) == 0 {
		return 0, false
	}
	var ns int64
	read := 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread exited since the listing
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		ns += v
		read++
	}
	if read == 0 {
		return 0, false
	}
	return float64(ns) / 1e9, true
}
