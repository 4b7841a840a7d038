package importer

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// writeLargeIostat writes iostat JSON of at least size bytes: one host,
// reports a second apart with four disks each, as iostat -x -t -o JSON
// prints them. It returns the number of reports.
func writeLargeIostat(t *testing.T, path string, size int64) int {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprint(w, `{"sysstat": {"hosts": [{"nodename": "big", "sysname": "Linux", "statistics": [`)
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	var written int64
	n := 0
	for ; written < size; n++ {
		if n > 0 {
			w.WriteString(",")
		}
		k, _ := fmt.Fprintf(w, "\n\t\t\t{\n\t\t\t\t\"timestamp\": %q,\n\t\t\t\t\"avg-cpu\":  {\"user\": 12.50, \"nice\": 0.00, \"system\": 4.25, \"iowait\": 3.10, \"steal\": 0.00, \"idle\": 80.15},\n\t\t\t\t\"disk\": [",
			t0.Add(time.Duration(n)*time.Second).Format("2006-01-02T15:04:05-0700"))
		written += int64(k)
		for d := range 4 {
			if d > 0 {
				w.WriteString(",")
			}
			k, _ = fmt.Fprintf(w, "\n\t\t\t\t\t{\"disk_device\": \"vd%c\", \"r/s\": %d.00, \"w/s\": 250.00, \"d/s\": 0.00, \"f/s\": 0.00, \"rkB/s\": 400.00, \"wkB/s\": 16000.00, \"dkB/s\": 0.00, \"rrqm/s\": 0.00, \"wrqm/s\": 1.00, \"drqm/s\": 0.00, \"%%rrqm\": 0.00, \"%%wrqm\": 0.40, \"%%drqm\": 0.00, \"r_await\": 0.50, \"w_await\": 1.20, \"d_await\": 0.00, \"f_await\": 0.00, \"rareq-sz\": 4.00, \"wareq-sz\": 64.00, \"dareq-sz\": 0.00, \"aqu-sz\": 0.35, \"util\": 41.20}",
				'a'+d, n%500)
			written += int64(k)
		}
		w.WriteString("\n\t\t\t\t]\n\t\t\t}")
	}
	fmt.Fprint(w, "\n\t\t]\n\t}]\n}}\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

// heapPeak samples the live heap every few milliseconds while fn runs
// and returns the largest growth over the heap before fn.
func heapPeak(fn func()) (peak uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var max atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > base && ms.HeapAlloc-base > max.Load() {
					max.Store(ms.HeapAlloc - base)
				}
			}
		}
	}()
	fn()
	close(done)
	<-stopped
	return max.Load()
}

// A valid 305 MB iostat file needed more than 6 GB (review finding): the
// whole file was read and unmarshalled at once. Read streams it, so the
// heap stays far below the file's size.
func TestIostatLargeFileBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes an 80 MB file")
	}
	path := filepath.Join(t.TempDir(), "big.json")
	const size = 80 << 20
	reports := writeLargeIostat(t, path, size)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sum Summary
	var got int
	began := time.Now()
	peak := heapPeak(func() {
		sum, err = Read(FormatIostat, "big.json", f, Options{}, func(s []monitor.Sample) error {
			got += len(s)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	// 6 CPU and 8 disk metrics × 4 disks per report, the first dropped.
	if want := (reports - 1) * (6 + 4*8); got != want || sum.Samples != want {
		t.Fatalf("got %d samples (summary %d), want %d", got, sum.Samples, want)
	}
	t.Logf("%d reports, %d samples, heap peak +%.1f MiB, %v", reports, got, float64(peak)/(1<<20), time.Since(began))
	if limit := uint64(16 << 20); peak > limit {
		t.Fatalf("heap grew by %.1f MiB reading an %d MiB file, want at most %d MiB", float64(peak)/(1<<20), size>>20, limit>>20)
	}
}
