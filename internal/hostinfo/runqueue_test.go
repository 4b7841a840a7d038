package hostinfo

import (
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
)

// With more of this process's threads spinning than the machine has
// processors, some of them wait on a run queue, and the reading grows by
// about (threads - cores) x the spinning time.
func TestRunqueueWaitSecondsCountsThisProcessWaiting(t *testing.T) {
	a, ok := RunqueueWaitSeconds()
	if _, err := os.Stat("/proc/self/schedstat"); err != nil {
		if ok {
			t.Fatal("a run-queue reading without /proc/self/schedstat")
		}
		t.Skip("this kernel keeps no scheduler statistics")
	}
	if !ok || a < 0 {
		t.Fatalf("reading %v, ok %v", a, ok)
	}
	cores := runtime.NumCPU()
	threads := 2 * cores
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
	spin := 300 * time.Millisecond
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for end := time.Now().Add(spin); time.Now().Before(end); {
			}
		}()
	}
	wg.Wait()
	b, ok := RunqueueWaitSeconds()
	if !ok {
		t.Fatal("no second reading")
	}
	// Each of the threads-cores extra threads waits about spin; a tenth
	// of that total is a floor no scheduler can stay under.
	floor := 0.1 * float64(threads-cores) * spin.Seconds()
	if b-a < floor {
		t.Fatalf("the process waited %.3f s for a processor while %d threads spun %v on %d cores; want at least %.3f s", b-a, threads, spin, cores, floor)
	}
	t.Logf("waited %.3f s with %d threads spinning %v on %d cores", b-a, threads, spin, cores)
}
