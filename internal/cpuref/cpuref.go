// Package cpuref measures how much work one core of this machine does per
// second of CPU time on a fixed reference workload, in compute units: 1.0
// is the reference core's speed (docs/lab.md, "The compute unit"). Clouds
// sell vCPUs of unequal speed and name a unit of compute to compare them
// (EC2's ECU); the lab does the same, so that a catalog vCPU means the
// same work per second on a fast machine and on a slow one (seed 001: hosts
// "created equal" are not).
//
// The workload mixes three loops a database server's CPU time is made of:
// integer arithmetic with branches, a byte-wise hash over a buffer that
// stays in the core's caches, and dependent loads spread over a buffer
// larger than the last-level cache. Each is timed by the CPU time of the
// thread that ran it, so another process on the machine lowers the score
// only through what it shares with the core (caches, memory, a sibling
// hyper-thread), not by taking turns on it; the time others took is
// measured beside the score (Measurement.OthersCores, StealPct).
package cpuref

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/headroom-dev/headroom/internal/hostinfo"
)

// Part is one loop of the reference workload.
type Part struct {
	Name string
	// Reference is what the reference core does of this loop per CPU
	// second (docs/lab.md says how it was chosen).
	Reference float64
	run       func(b *buffers) (ops float64)
}

// Parts are the loops of the reference workload, each sized to take tens of
// milliseconds on the reference core.
var Parts = []Part{
	{Name: "integer", Reference: 1.42e8, run: integerLoop},
	{Name: "hash", Reference: 6.9e8, run: hashLoop},
	{Name: "memory", Reference: 3.8e6, run: memoryLoop},
}

// ReferenceCore names the core whose speed is 1.0.
const ReferenceCore = "one vCPU of a 2-vCPU AMD EPYC (family 25, model 1, Zen 3) KVM guest"

// Measurement is one calibration of this machine.
type Measurement struct {
	// Score is this machine's speed per core in compute units: the
	// geometric mean over the parts of the median rate / reference rate.
	Score float64 `json:"score"`
	// PartScores is each part's median rate / its reference rate.
	PartScores map[string]float64 `json:"part_scores"`
	// Spread is (highest - lowest) / median of the tries' scores: how much
	// the machine's speed moved while it was measured.
	Spread float64 `json:"spread"`
	Tries  int     `json:"tries"`
	// CPUShare is the measuring thread's CPU time over the wall time it
	// ran: below 1 when other work took turns on its core.
	CPUShare float64 `json:"cpu_share"`
	// Cores is the number of processors this process may run on.
	Cores int `json:"cores"`
	// OthersCores is the CPU other processes used during the measurement,
	// in cores (busy time of the whole machine minus this process's own).
	OthersCores float64 `json:"others_cores"`
	// StealPct is the share of the machine's CPU time the hypervisor gave
	// to other guests during the measurement ("steal" in /proc/stat).
	StealPct float64 `json:"steal_pct"`
	// PressurePct is the share of the wall time at least one runnable task
	// waited for a processor (/proc/pressure/cpu "some"); -1 when the
	// kernel does not say.
	PressurePct float64       `json:"pressure_pct"`
	Took        time.Duration `json:"took_ns"`
	At          time.Time     `json:"at"`
}

// Options of Measure.
type Options struct {
	// Tries is how many times each part runs; the median of each part is
	// kept. Default 5.
	Tries int
}

// Measure runs the reference workload Tries times on one locked thread
// and returns the machine's speed per core with what others took meanwhile.
func Measure(o Options) (Measurement, error) {
	if o.Tries <= 0 {
		o.Tries = 5
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	before, beforeOK := readStat()
	ownBefore := processCPU()
	pressBefore, pressOK := hostinfo.CPUWaitSeconds()
	wallStart := time.Now()
	threadStart, err := threadCPU()
	if err != nil {
		return Measurement{}, fmt.Errorf("cannot read this thread's CPU time to calibrate the lab's compute unit: %v", err)
	}

	b := newBuffers()
	rates := make([][]float64, len(Parts))
	tryScores := make([]float64, 0, o.Tries)
	for t := 0; t < o.Tries; t++ {
		logSum := 0.0
		for i, p := range Parts {
			c0, err := threadCPU()
			if err != nil {
				return Measurement{}, err
			}
			ops := p.run(b)
			c1, err := threadCPU()
			if err != nil {
				return Measurement{}, err
			}
			d := (c1 - c0).Seconds()
			if d <= 0 {
				d = 1e-6 // a clock coarser than the loop: bounded, not infinite
			}
			r := ops / d
			rates[i] = append(rates[i], r)
			logSum += math.Log(r / p.Reference)
		}
		tryScores = append(tryScores, math.Exp(logSum/float64(len(Parts))))
	}
	threadEnd, _ := threadCPU()
	wall := time.Since(wallStart)
	m := Measurement{PartScores: map[string]float64{}, Tries: o.Tries, Cores: runtime.NumCPU(), PressurePct: -1, At: start.UTC()}
	logSum := 0.0
	for i, p := range Parts {
		s := median(rates[i]) / p.Reference
		m.PartScores[p.Name] = s
		logSum += math.Log(s)
	}
	m.Score = math.Exp(logSum / float64(len(Parts)))
	med := median(tryScores)
	sort.Float64s(tryScores)
	if med > 0 {
		m.Spread = (tryScores[len(tryScores)-1] - tryScores[0]) / med
	}
	if wall > 0 {
		m.CPUShare = math.Min(1, (threadEnd-threadStart).Seconds()/wall.Seconds())
	}
	if after, ok := readStat(); ok && beforeOK {
		total := after.total() - before.total()
		if total > 0 {
			m.StealPct = 100 * (after.steal - before.steal) / total
			// /proc/stat counts in clock ticks of every processor together;
			// its busy share of all of them, times the cores, is in cores.
			busy := (after.busy() - before.busy()) / total * float64(m.Cores)
			own := (processCPU() - ownBefore).Seconds() / wall.Seconds()
			m.OthersCores = math.Max(0, busy-own)
		}
	}
	if p1, ok := hostinfo.CPUWaitSeconds(); ok && pressOK && wall > 0 {
		m.PressurePct = math.Min(100, 100*(p1-pressBefore)/wall.Seconds())
	}
	m.Took = time.Since(start)
	return m, nil
}

// String is one line for a person.
func (m Measurement) String() string {
	s := fmt.Sprintf("%.2f compute units per core (integer %.2f, hash %.2f, memory %.2f; %d tries, spread %.0f%%)",
		m.Score, m.PartScores["integer"], m.PartScores["hash"], m.PartScores["memory"], m.Tries, 100*m.Spread)
	s += fmt.Sprintf("; others used %.2f of %d cores, steal %.1f%%", m.OthersCores, m.Cores, m.StealPct)
	if m.PressurePct >= 0 {
		s += fmt.Sprintf(", CPU pressure %.0f%%", m.PressurePct)
	}
	return s
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func threadCPU() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, err
	}
	return time.Duration(ts.Nano()), nil
}

func processCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuTimes are the machine-wide counters of /proc/stat's "cpu" line, in
// seconds.
type cpuTimes struct{ user, nice, system, idle, iowait, irq, softirq, steal float64 }

func (c cpuTimes) busy() float64 {
	return c.user + c.nice + c.system + c.irq + c.softirq
}
func (c cpuTimes) total() float64 { return c.busy() + c.idle + c.iowait + c.steal }

func readStat() (cpuTimes, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}, false
	}
	v := make([]float64, 8)
	for i := range v {
		x, err := strconv.ParseFloat(f[i+1], 64)
		if err != nil {
			return cpuTimes{}, false
		}
		v[i] = x / 100 // USER_HZ is 100 on Linux
	}
	return cpuTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}, true
}
