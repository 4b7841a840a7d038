package cassandra

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// The driver writes every request frame to its connection with its own
// write call, and reads replies through a 4 KiB buffer. At 64 requests in
// flight on a 2-core machine those system calls were a quarter of the
// client's CPU (docs/performance.md (g)), CPU taken from the Cassandra node
// it measures. Its own write coalescer waits a fixed 200 µs before each
// write, which costs latency and throughput at low concurrency. So the
// target dials its connections itself and hands the driver a net.Conn
// that batches without waiting:
//
//   - Write on an idle connection (nothing pending, no write under way)
//     writes the frame itself, at once. Otherwise it copies the frame into
//     a pending buffer and returns; one flusher goroutine per connection,
//     once the goroutines ready to run have had their turn, writes
//     whatever is pending in one system call, and while a call runs the
//     frames written meanwhile gather for the next. With one request in
//     flight each frame goes out in its caller's own system call (a
//     hand-off to the flusher cost a goroutine switch per request, which
//     at 4 requests in flight was a tenth of the throughput against latte);
//     with many, one system call carries all the frames queued since the
//     last.
//   - Read fills a 64 KiB buffer per system call, so that one call takes
//     every reply that has arrived.
//
// The scylla Rust driver latte uses batches its writes the same way (a
// writer task flushes every queued request at once).

// coalescingDialer dials the driver's connections as coalescingConns.
type coalescingDialer struct {
	dialer       net.Dialer
	writeTimeout time.Duration // bound on one flush (the target's timeout)
}

// DialHost implements gocql.HostDialer.
func (d *coalescingDialer) DialHost(ctx context.Context, host *gocql.HostInfo) (*gocql.DialedHost, error) {
	ip, port := host.ConnectAddress(), host.Port()
	if ip == nil || ip.IsUnspecified() || port == 0 {
		return nil, fmt.Errorf("node %s has no address to connect to (%v port %d)", host.HostID(), ip, port)
	}
	c, err := d.dialer.DialContext(ctx, "tcp", host.ConnectAddressAndPort())
	if err != nil {
		return nil, err
	}
	// DisableCoalesce: the driver's own coalescer would add its fixed wait
	// on top.
	return &gocql.DialedHost{Conn: newCoalescingConn(c, d.writeTimeout), DisableCoalesce: true}, nil
}

const (
	// readBufferSize is what one read system call can take.
	readBufferSize = 64 << 10
	// maxPending bounds the bytes waiting to be written: a writer waits
	// while this much is pending (the node is not reading fast enough).
	maxPending = 1 << 20
)

// coalescingConn is a TCP connection whose writes are batched by a
// flusher goroutine and whose reads are buffered (see above). Write may be
// called from many goroutines; Read from one at a time, as the driver's
// single reader does.
type coalescingConn struct {
	net.Conn
	writeTimeout time.Duration

	mu      sync.Mutex
	room    sync.Cond // broadcast when the flusher takes the pending bytes, or on failure
	pending []byte
	writing bool          // a system call writes to the socket now (a caller's or the flusher's)
	err     error         // the first failed write, or net.ErrClosed after Close: every later Write returns it
	kick    chan struct{} // one token: there is something pending
	done    chan struct{} // closed by Close
	once    sync.Once

	// The reader's side, used only by the goroutine that reads.
	rbuf       []byte
	rpos, rend int
	applied    time.Time // read deadline last set on the socket

	dmu      sync.Mutex
	deadline time.Time // read deadline asked for, set on the socket before the next read system call
}

func newCoalescingConn(c net.Conn, writeTimeout time.Duration) *coalescingConn {
	cc := &coalescingConn{Conn: c, writeTimeout: writeTimeout, kick: make(chan struct{}, 1), done: make(chan struct{}),
		rbuf: make([]byte, readBufferSize)}
	cc.room.L = &cc.mu
	go cc.flusher()
	return cc
}

// Write queues p to be written by the flusher. An error of an earlier
// flush comes back from the next Write (and the connection is closed, so
// the driver's reader fails the requests in flight).
func (c *coalescingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	for c.err == nil && len(c.pending) >= maxPending {
		c.room.Wait()
	}
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return 0, err
	}
	if !c.writing && len(c.pending) == 0 {
		// Idle: write it here, and let the flusher take what others
		// queue meanwhile.
		c.writing = true
		c.mu.Unlock()
		err := c.write(p)
		c.mu.Lock()
		c.writing = false
		more := len(c.pending) > 0
		c.mu.Unlock()
		if err != nil {
			c.fail(err)
			return 0, err
		}
		if more {
			c.wake()
		}
		return len(p), nil
	}
	c.pending = append(c.pending, p...)
	c.mu.Unlock()
	c.wake()
	return len(p), nil
}

// wake tells the flusher there is something pending.
func (c *coalescingConn) wake() {
	select {
	case c.kick <- struct{}{}:
	default: // a token is already there
	}
}

// write is one system call, bounded by the write timeout.
func (c *coalescingConn) write(b []byte) error {
	if c.writeTimeout > 0 {
		if err := c.Conn.SetWriteDeadline(time.Now().Add(c.writeTimeout)); err != nil {
			return err
		}
	}
	_, err := c.Conn.Write(b)
	return err
}

// flusher writes what is pending, in one system call per turn, until the
// connection closes or a write fails.
func (c *coalescingConn) flusher() {
	var out []byte
	for {
		select {
		case <-c.kick:
		case <-c.done:
			return
		}
		// Let the goroutines that are ready to run go first: the clients
		// the reader has just handed replies write their next requests,
		// which then go out in this flush. The woken flusher would
		// otherwise run straight after the one writer that woke it and
		// write its frame alone. With nothing else ready (one client)
		// this returns at once.
		runtime.Gosched()
		for {
			c.mu.Lock()
			// A caller writing its frame itself wakes the flusher again
			// when it is done, if more is pending.
			if c.err != nil || len(c.pending) == 0 || c.writing {
				c.mu.Unlock()
				break
			}
			out, c.pending = c.pending, out[:0]
			c.writing = true
			c.room.Broadcast()
			c.mu.Unlock()
			err := c.write(out)
			c.mu.Lock()
			c.writing = false
			c.mu.Unlock()
			if err != nil {
				c.fail(err)
				return
			}
		}
	}
}

// fail records a failed write and closes the socket.
func (c *coalescingConn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.room.Broadcast()
	c.mu.Unlock()
	c.Conn.Close()
}

// Close stops the flusher (dropping what it has not written) and closes
// the socket.
func (c *coalescingConn) Close() error {
	c.mu.Lock()
	if c.err == nil {
		c.err = net.ErrClosed
	}
	c.room.Broadcast()
	c.mu.Unlock()
	c.once.Do(func() { close(c.done) })
	err := c.Conn.Close()
	if errors.Is(err, net.ErrClosed) {
		return nil // fail closed it already
	}
	return err
}

// Read returns buffered bytes, reading more first when none are left.
func (c *coalescingConn) Read(p []byte) (int, error) {
	if c.rpos == c.rend {
		if err := c.applyDeadline(); err != nil {
			return 0, err
		}
		if len(p) >= len(c.rbuf) {
			return c.Conn.Read(p)
		}
		n, err := c.Conn.Read(c.rbuf)
		c.rpos, c.rend = 0, n
		if n == 0 {
			return 0, err
		}
		// An error with data comes back from the next read.
	}
	n := copy(p, c.rbuf[c.rpos:c.rend])
	c.rpos += n
	return n, nil
}

// SetReadDeadline takes effect at the next read system call: the driver
// sets it before every read, most of which the buffer serves.
func (c *coalescingConn) SetReadDeadline(t time.Time) error {
	c.dmu.Lock()
	c.deadline = t
	c.dmu.Unlock()
	return nil
}

// SetWriteDeadline is ignored: the flusher bounds each write by the
// target's timeout, and the driver's Write never blocks on the socket.
func (c *coalescingConn) SetWriteDeadline(time.Time) error { return nil }

// SetDeadline sets the read deadline (see SetWriteDeadline).
func (c *coalescingConn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }

func (c *coalescingConn) applyDeadline() error {
	c.dmu.Lock()
	d := c.deadline
	c.dmu.Unlock()
	if d.Equal(c.applied) {
		return nil
	}
	c.applied = d
	return c.Conn.SetReadDeadline(d)
}
