package hostinfo

import (
	"os"
	"testing"
)

// The CPU pressure total is a counter since boot: two readings never go
// backwards, and it is known wherever the kernel exposes it.
func TestCPUWaitSecondsIsACounter(t *testing.T) {
	a, ok := CPUWaitSeconds()
	if _, err := os.Stat("/proc/pressure/cpu"); err != nil {
		if ok {
			t.Fatal("a CPU pressure reading without /proc/pressure/cpu")
		}
		t.Skip("this kernel gives no CPU pressure information")
	}
	if !ok || a < 0 {
		t.Fatalf("reading %v, ok %v", a, ok)
	}
	for i := 0; i < 1e6; i++ { // some work between the readings
		_ = i * i
	}
	b, ok := CPUWaitSeconds()
	if !ok || b < a {
		t.Fatalf("second reading %v after %v (ok %v): the counter went backwards", b, a, ok)
	}
}
