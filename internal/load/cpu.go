package load

import "syscall"

// processCPUSeconds returns the user plus system CPU time this process has
// used, in seconds. The engine compares it with wall time to tell when the
// client, not the target, is the limit.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
