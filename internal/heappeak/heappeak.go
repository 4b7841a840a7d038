// Package heappeak measures the most heap a piece of work needs: a bound
// on memory that holds on any machine, unlike a time, for the tests and
// benchmarks that keep readers of long runs bounded (docs/performance.md).
package heappeak

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// During runs f and returns the highest heap (live objects and garbage
// not yet collected, starting from a collected heap) seen while it ran,
// sampled every 5 ms.
func During(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	var mu sync.Mutex
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			mu.Lock()
			peak = max(peak, sample[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(stop)
	<-done
	mu.Lock()
	defer mu.Unlock()
	return peak
}
