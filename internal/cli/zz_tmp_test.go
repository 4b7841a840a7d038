package cli

import (
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"testing"
	"time"
)

func TestTmpHeap(t *testing.T) {
	dir := os.Getenv("TMPSTORE")
	if dir == "" {
		t.Skip()
	}
	runtime.MemProfileRate = 64 * 1024
	var peak uint64
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for !stop.Load() {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak+50<<20 {
				peak = ms.HeapInuse
				f, _ := os.Create("/tmp/heap.prof")
				_ = pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	if err := reportSource(io.Discard, io.Discard, dir, "/tmp/zzout", ""); err != nil {
		t.Fatal(err)
	}
	stop.Store(true)
	<-done
	t.Logf("peak %d MB", peak>>20)
}
