package hostinfo

import (
	"os"
	"strconv"
	"strings"
)

// CPUWaitSeconds reads the kernel's CPU pressure (/proc/pressure/cpu,
// "some"): the total time at least one runnable task of the machine waited
// for a processor, in seconds since boot; ok is false without pressure
// information (an old kernel, no /proc). Two readings bound a window; the
// difference over its wall time says how busy the machine's processors
// were, whichever processes kept them busy.
func CPUWaitSeconds() (float64, bool) {
	b, err := os.ReadFile("/proc/pressure/cpu")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "some ")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(rest) {
			if v, ok := strings.CutPrefix(f, "total="); ok {
				us, err := strconv.ParseInt(v, 10, 64)
				return float64(us) / 1e6, err == nil
			}
		}
	}
	return 0, false
}
