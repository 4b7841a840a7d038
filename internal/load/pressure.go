package load

import (
	"time"

	"github.com/headroom-dev/headroom/internal/hostinfo"
)

// machineWaitSeconds is the machine's CPU pressure (hostinfo): the time
// some runnable task waited for a processor. The client-limit verdict uses
// it to say why a client with little CPU of its own sent requests late: a
// load generator shares the machine with other processes (the servers
// under test beside it, other work), and when they keep every processor
// busy the engine's timers fire late although the engine itself is idle.
// Go's scheduling-latency histogram (clientdelay.go) does not see that
// wait: it happens below the runtime.
var machineWaitSeconds = hostinfo.CPUWaitSeconds

// machineWait measures the CPU pressure over a window.
type machineWait struct {
	from float64
	at   time.Time
	ok   bool
}

func startMachineWait() machineWait {
	s, ok := machineWaitSeconds()
	return machineWait{from: s, at: time.Now(), ok: ok}
}

// share is the fraction of the window's wall time during which some task
// of the machine waited for a processor; -1 when unknown.
func (w machineWait) share() float64 {
	if !w.ok {
		return -1
	}
	s, ok := machineWaitSeconds()
	wall := time.Since(w.at).Seconds()
	if !ok || wall <= 0 {
		return -1
	}
	return min(max((s-w.from)/wall, 0), 1)
}
