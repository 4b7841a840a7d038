package load

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"sync"
)

// The limits of what one load engine can honour on one machine. The spec's
// validation refuses numbers beyond them, so that a campaign that validates
// can run (docs/spec.md, "Bounds", has the commands behind each figure).

// MaxRate is the highest request rate, per second, that a campaign may ask
// of the open loop. Against the null target, with 4 request slots on one
// core, the engine sent every request of 2,000,000/s on a busy 2-core
// machine (HEADROOM_PACE_SWEEP=1 GOMAXPROCS=1 taskset -c 1 go test
// ./internal/spec -run TestPaceOnNull -v), and 3,000,000/s on a quiet one
// (docs/performance.md, figure b); 20,000,000/s took 19 s to drop the
// requests of a 2 s run. The bound keeps a margin of 2x below the lower
// figure. How many of the requests start late at such rates depends on
// what else the machine runs; each run reports it.
const MaxRate = 1_000_000

// SlotBaseBytes is the memory one request slot (an open loop's in-flight
// slot or a closed loop's client) costs besides its record buffer: its
// goroutine's stack, its histogram handle, its target client and its
// workload generator. 10 to 14 KB were measured with the null target (go
// test ./internal/spec -run TestSlotMemory -v); the bound rounds up to 16
// KiB, for targets whose clients keep a little more.
const SlotBaseBytes = 16 << 10

// MaxSlotsCeiling bounds request slots whatever the memory: a million
// goroutines is far beyond what any database client pool uses.
const MaxSlotsCeiling = 1_000_000

// SlotBytes is the memory of one request slot whose workload records are
// recordBytes long (field_count x field_length): each slot keeps one
// operation's buffers.
func SlotBytes(recordBytes int64) int64 {
	return SlotBaseBytes + max(recordBytes, 0)
}

// SlotMemoryShare is the share of the machine's memory a run's request
// slots may use: the rest is for the histograms, the results store, the
// monitors and, for in-process targets, the database itself.
const SlotMemoryShare = 4 // one quarter

// MaxSlots is how many request slots with records of recordBytes fit in
// SlotBudget, capped at MaxSlotsCeiling (and at least 1).
func MaxSlots(recordBytes int64) int {
	n := SlotBudget() / SlotBytes(recordBytes)
	return int(max(min(n, MaxSlotsCeiling), 1))
}

// SlotBudget is the memory a run's request slots may use: a quarter of this
// machine's memory (MemTotal in /proc/meminfo), or a quarter of 4 GiB when
// that cannot be read.
func SlotBudget() int64 {
	return MachineMemory() / SlotMemoryShare
}

// MachineMemory is this machine's memory in bytes, read once.
func MachineMemory() int64 {
	machineMemoryOnce.Do(func() { machineMemory = readMemTotal() })
	return machineMemory
}

var (
	machineMemoryOnce sync.Once
	machineMemory     int64
)

const fallbackMemory = 4 << 30

func readMemTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return fallbackMemory
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// MemTotal:       24684208 kB
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("MemTotal:"))
		if !ok {
			continue
		}
		fields := bytes.Fields(rest)
		if len(fields) == 2 && string(fields[1]) == "kB" {
			if kb, err := strconv.ParseInt(string(fields[0]), 10, 64); err == nil && kb > 0 {
				return kb << 10
			}
		}
		break
	}
	return fallbackMemory
}
