package load

import (
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// pacer wakes open-loop workers at their requests' intended start times.
//
// Why not a Go timer per worker: the Go runtime parks idle threads in
// epoll_wait, whose timeout has millisecond granularity, so a sleep of
// 100 µs often lasts over 1 ms, which at moderate rates makes requests late
// for no fault of the target. A blocking nanosleep on a locked thread is no
// better: the thread keeps its scheduler slot while it sleeps, and the
// workers it wakes queue behind it. The pacer instead waits on a Linux
// timerfd through the runtime's network poller: the goroutine parks (its
// slot stays free for others) and the poller wakes it when the timer
// expires, with microsecond resolution. Workers claim arrivals in schedule
// order and queue in that order, so the queue is always sorted by intended
// time and the pacer only ever looks at its head.
type pacer struct {
	mu      sync.Mutex
	queue   []*waiter // FIFO ring, sorted by due time
	head, n int
	signal  chan struct{} // non-empty notification, buffered 1
	stop    chan struct{}
	since   func() int64
	clock   *os.File // timerfd; nil when unavailable (then a Go timer is used)
}

type waiter struct {
	due  int64
	wake chan struct{} // buffered 1
}

func newPacer(since func() int64, capacity int) *pacer {
	p := &pacer{queue: make([]*waiter, capacity), signal: make(chan struct{}, 1), stop: make(chan struct{}), since: since}
	if fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err == nil {
		p.clock = os.NewFile(uintptr(fd), "pacer-timerfd")
	}
	return p
}

// enqueue adds w, due at due; callers enqueue in non-decreasing due order.
func (p *pacer) enqueue(w *waiter, due int64) {
	w.due = due
	p.mu.Lock()
	if p.n == len(p.queue) {
		grown := make([]*waiter, 2*len(p.queue)+1)
		for i := 0; i < p.n; i++ {
			grown[i] = p.queue[(p.head+i)%len(p.queue)]
		}
		p.queue, p.head = grown, 0
	}
	p.queue[(p.head+p.n)%len(p.queue)] = w
	p.n++
	wasEmpty := p.n == 1
	p.mu.Unlock()
	if wasEmpty {
		select {
		case p.signal <- struct{}{}:
		default:
		}
	}
}

func (p *pacer) peek() *waiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		return nil
	}
	return p.queue[p.head]
}

// maxNap bounds one wait so that the pacer notices a stop promptly.
const maxNap = 5 * time.Millisecond

// wakeCost is about how much later than asked a timerfd wait returns on the
// machines we measured (30-35 µs: the poller's wake-up path). The pacer
// naps that much less and yields the processor for the rest, which keeps
// wake-ups within a few microseconds of the intended time without spinning
// for long.
const wakeCost = 35 * time.Microsecond

// nap waits about ns nanoseconds.
func (p *pacer) nap(ns int64, buf []byte, fallback *time.Timer) {
	if p.clock != nil {
		spec := unix.ItimerSpec{Value: unix.NsecToTimespec(ns)}
		if unix.TimerfdSettime(int(p.clock.Fd()), 0, &spec, nil) == nil {
			_, _ = p.clock.Read(buf) // returns once the timer has expired
			return
		}
	}
	fallback.Reset(time.Duration(ns))
	<-fallback.C
}

// loop runs until close(p.stop), then releases the timer.
func (p *pacer) loop() {
	defer func() {
		if p.clock != nil {
			p.clock.Close()
		}
	}()
	buf := make([]byte, 8)
	fallback := time.NewTimer(time.Hour)
	fallback.Stop()
	for {
		w := p.peek()
		if w == nil {
			select {
			case <-p.signal:
				continue
			case <-p.stop:
				return
			}
		}
		wait := w.due - p.since()
		switch {
		case wait > int64(2*wakeCost):
			p.nap(min(wait-int64(wakeCost), int64(maxNap)), buf, fallback)
			select {
			case <-p.stop:
				return
			default:
			}
			continue
		case wait > 0:
			runtime.Gosched()
			continue
		}
		p.wakeDue(p.since() + int64(earlyTolerance))
	}
}

// wakeDue wakes every queued worker due by limit, in order.
func (p *pacer) wakeDue(limit int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.n > 0 {
		w := p.queue[p.head]
		if w.due > limit {
			return
		}
		p.queue[p.head] = nil
		p.head = (p.head + 1) % len(p.queue)
		p.n--
		select {
		case w.wake <- struct{}{}:
		default: // cannot happen: a worker waits for one wake at a time
		}
	}
}
