// Command cpuserver is the server of the probe's lab test: every request
// burns a fixed amount of CPU time, so on a lab host with a CPU quota of q
// vCPUs it serves at most q / (work + HTTP overhead) requests per second.
// GET /stats reports the CPU time the process used and the requests it
// served, from which the test computes that limit exactly.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time the calling OS thread has used.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}

// burn spins until this thread has used d of CPU time: CPU time, not wall
// time, so that a throttled host makes requests wait rather than shrink.
func burn(d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	x := 1.0
	for threadCPU()-start < d {
		for i := 0; i < 2000; i++ {
			x = x*1.0000001 + 1e-9
		}
	}
	runtime.KeepAlive(x) // the loop's result must not be optimised away
}

func main() {
	addr := flag.String("addr", ":8080", "address to listen on")
	work := flag.Duration("work", 4*time.Millisecond, "CPU time each request burns")
	flag.Parse()
	var served atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/stats", func(w http.ResponseWriter, _ *http.Request) {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		fmt.Fprintf(w, "%d %d\n", served.Load(), cpu.Nanoseconds())
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		burn(*work)
		served.Add(1)
		w.WriteHeader(http.StatusOK)
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ready", ln.Addr())
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
