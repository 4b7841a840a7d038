package load

import (
	"time"

	"github.com/headroom-dev/headroom/internal/hostinfo"
)

// processorWaitSeconds is how long the client process's threads have
// waited for a processor (hostinfo). The client-limit verdict uses it to
// say why a client with little CPU of its own sent requests late: a load
// generator shares the machine with other processes (the servers under
// test beside it, other work), and when they keep every processor busy
// the engine's timers fire late although the engine itself is idle. Go's
// scheduling-latency histogram (clientdelay.go) does not see that wait: it
// happens below the runtime. The machine's CPU pressure would see it too,
// but it also counts servers held back by their own CPU quota (a lab
// host's), which take no processor from the client.
var processorWaitSeconds = hostinfo.RunqueueWaitSeconds

// processorWait measures the client's wait for processors over a window.
type processorWait struct {
	from float64
	at   time.Time
	ok   bool
}

func startProcessorWait() processorWait {
	s, ok := processorWaitSeconds()
	return processorWait{from: s, at: time.Now(), ok: ok}
}

// perSecond is the client's threads' wait for a processor per second of
// the window (0.2: on average a fifth of a thread was waiting); -1 when
// unknown.
func (w processorWait) perSecond() float64 {
	if !w.ok {
		return -1
	}
	s, ok := processorWaitSeconds()
	wall := time.Since(w.at).Seconds()
	if !ok || wall <= 0 {
		return -1
	}
	return max((s-w.from)/wall, 0)
}
