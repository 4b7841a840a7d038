package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"time"
)

// TCPPinger measures the network round trip to a host:port the way tcpping
// does (seed 004 §3.1.2): it times TCP connects (SYN to SYN-ACK, plus the
// local cost of a connect) and closes each connection at once. The server
// sees a connection that sends nothing; some servers log it (PostgreSQL
// logs "incomplete startup packet").
type TCPPinger struct {
	addr    *net.TCPAddr // resolved once, so name lookups are not timed
	count   int
	timeout time.Duration
}

// NewTCPPinger resolves addr (host:port) and returns a pinger that takes
// the median of count connects, each bounded by timeout.
func NewTCPPinger(ctx context.Context, addr string, count int, timeout time.Duration) (*TCPPinger, error) {
	if count < 1 {
		return nil, fmt.Errorf("rtt connects: must be at least 1, got %d", count)
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("rtt timeout: must be positive")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("rtt address %q is not host:port (%v); write it as 10.0.0.5:5432 or db.example.com:5432", addr, err)
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil || len(ips) == 0 {
		return nil, fmt.Errorf("rtt address %q: cannot resolve %s (%v)", addr, host, err)
	}
	p, err := net.DefaultResolver.LookupPort(ctx, "tcp", port)
	if err != nil {
		return nil, fmt.Errorf("rtt address %q: bad port %s (%v)", addr, port, err)
	}
	return &TCPPinger{addr: &net.TCPAddr{IP: ips[0].IP, Port: p, Zone: ips[0].Zone}, count: count, timeout: timeout}, nil
}

// Addr is the resolved address the pinger dials.
func (p *TCPPinger) Addr() string { return p.addr.String() }

// Measure returns the median connect time of the pinger's connects. Failed
// connects are left out; when all fail it returns the last error.
func (p *TCPPinger) Measure(ctx context.Context) (time.Duration, error) {
	d := net.Dialer{Timeout: p.timeout}
	var times []time.Duration
	var last error
	for i := 0; i < p.count; i++ {
		start := time.Now()
		c, err := d.DialContext(ctx, "tcp", p.addr.String())
		took := time.Since(start)
		if err != nil {
			last = err
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			continue
		}
		c.Close()
		times = append(times, took)
	}
	if len(times) == 0 {
		if last == nil {
			last = errors.New("no connect attempted")
		}
		return 0, fmt.Errorf("tcp connect to %s: %w", p.addr, last)
	}
	return median(times), nil
}

// median of a non-empty slice (the mean of the middle two for an even
// length); it sorts xs.
func median(xs []time.Duration) time.Duration {
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
