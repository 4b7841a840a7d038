package apptier

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Burn spends d of CPU time on the calling goroutine's thread and returns
// how much it spent (at least d, unless the clock cannot be read).
//
// It counts CPU time, not wall time: under a CPU quota the thread is
// throttled part of the time and the request takes longer, but it costs
// the host exactly d of its quota. That is what makes the application tier
// a bottleneck by design: a host with q vCPUs serves at most about q / d
// requests per second.
func Burn(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	// The thread's clock is only meaningful while the goroutine stays on
	// that thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, ok := threadCPU()
	if !ok {
		return 0
	}
	x := uint64(start) | 1
	for {
		// A few microseconds of register-only work between clock reads,
		// so reading the clock costs a small share of the burn.
		for range 2048 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
		now, ok := threadCPU()
		if !ok {
			return 0
		}
		if spent := now - start; spent >= d {
			// The result is kept so the compiler cannot drop the work.
			runtime.KeepAlive(x)
			return spent
		}
	}
}

// threadCPU is the CPU time the calling thread has used.
func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
