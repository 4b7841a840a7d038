package agent

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// Coordinator accepts agents on a TCP listener, checks their token, and
// drives their runs (Run). It is safe for one Run at a time.
type Coordinator struct {
	ln     net.Listener
	token  []byte
	events chan event

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced when an agent joins or is refused
	agents   map[string]*remote
	refusals []string
	closed   bool
	runs     uint64 // runs driven so far (Msg.Run)
}

// remote is one connected agent.
type remote struct {
	name string
	nc   net.Conn
	c    *conn
	wmu  sync.Mutex
	gone bool // its connection ended (set by Run from the events)
}

func (r *remote) send(m Msg) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	_ = r.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return r.c.send(m)
}

// event is a message from an agent, or the end of its connection (err).
type event struct {
	r   *remote
	m   Msg
	err error
	at  time.Time
}

// Listen starts a coordinator on addr ("0.0.0.0:0" for any free port).
func Listen(addr string, token []byte) (*Coordinator, error) {
	if len(token) == 0 {
		return nil, errors.New("the coordinator needs an agent token")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen for load agents on %s: %w", addr, err)
	}
	c := &Coordinator{ln: ln, token: token, events: make(chan event, 256), agents: map[string]*remote{}, changed: make(chan struct{})}
	go c.accept()
	return c, nil
}

// Port is the port agents connect to.
func (c *Coordinator) Port() int { return c.ln.Addr().(*net.TCPAddr).Port }

func (c *Coordinator) accept() {
	for {
		nc, err := c.ln.Accept()
		if err != nil {
			return
		}
		go c.handshake(nc)
	}
}

// handshake authenticates one connection and registers its agent.
func (c *Coordinator) handshake(nc net.Conn) {
	cn := newConn(nc)
	_ = nc.SetDeadline(time.Now().Add(15 * time.Second))
	nonce := newNonce()
	refuse := func(msg string) {
		_ = cn.send(Msg{Type: msgError, Error: msg})
		_ = nc.Close()
		c.mu.Lock()
		c.refusals = append(c.refusals, msg)
		c.notify()
		c.mu.Unlock()
	}
	if err := cn.send(Msg{Type: msgChallenge, Version: Version, Nonce: nonce}); err != nil {
		_ = nc.Close()
		return
	}
	m, err := cn.recv()
	if err != nil {
		_ = nc.Close()
		return
	}
	if m.Type == msgError { // the agent refused us (a version mismatch)
		c.mu.Lock()
		c.refusals = append(c.refusals, m.Error)
		c.notify()
		c.mu.Unlock()
		_ = nc.Close()
		return
	}
	switch {
	case m.Type != msgHello:
		refuse(fmt.Sprintf("a connection from %s did not introduce itself as a Headroom agent", nc.RemoteAddr()))
		return
	case m.Version != Version:
		refuse(fmt.Sprintf("agent %q at %s speaks protocol version %d but the coordinator speaks %d; run the same Headroom version on both", m.Name, nc.RemoteAddr(), m.Version, Version))
		return
	case len(m.Nonce) != nonceLen:
		refuse(fmt.Sprintf("agent %q at %s sent no %d-byte nonce of its own; run the same Headroom version on both", m.Name, nc.RemoteAddr(), nonceLen))
		return
	case !hmac.Equal(m.MAC, proof(c.token, roleAgent, m.Nonce, nonce, m.Name)):
		refuse(fmt.Sprintf("agent %q at %s was refused: its token is not the coordinator's; give it the same token file (or %s)", m.Name, nc.RemoteAddr(), TokenEnv))
		return
	case m.Name == "":
		refuse(fmt.Sprintf("an agent at %s has no name; start it with --name", nc.RemoteAddr()))
		return
	}
	c.mu.Lock()
	if _, dup := c.agents[m.Name]; dup || c.closed {
		c.mu.Unlock()
		refuse(fmt.Sprintf("a second agent named %q connected from %s; give each agent its own --name", m.Name, nc.RemoteAddr()))
		return
	}
	r := &remote{name: m.Name, nc: nc, c: cn}
	// The welcome must be the first message the agent reads: the agent is
	// listed (and Wait returns) before it is sent, so its writer lock is
	// held until then, and a Run's first message waits behind it.
	r.wmu.Lock()
	c.agents[m.Name] = r
	c.notify()
	c.mu.Unlock()
	_ = nc.SetDeadline(time.Time{})
	// The coordinator's proof: without it the agent sends nothing more.
	_ = nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	err = cn.send(Msg{Type: msgWelcome, MAC: proof(c.token, roleCoordinator, nonce, m.Nonce, m.Name)})
	// Every frame after the welcome is sealed, both ways.
	cn.seal(sessionKey(c.token, nonce, m.Nonce, m.Name), roleCoordinator)
	r.wmu.Unlock()
	if err != nil {
		c.events <- event{r: r, err: err, at: time.Now()}
		return
	}
	for {
		m, err := cn.recv()
		c.events <- event{r: r, m: m, err: err, at: time.Now()}
		if err != nil {
			return
		}
	}
}

// notify wakes Wait; callers hold c.mu.
func (c *Coordinator) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Wait waits until every named agent has connected and been let in, for
// at most timeout. check, when set, is called while waiting: an error from
// it (an agent process that exited) ends the wait.
func (c *Coordinator) Wait(ctx context.Context, names []string, timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		c.mu.Lock()
		var missing []string
		for _, n := range names {
			if _, ok := c.agents[n]; !ok {
				missing = append(missing, n)
			}
		}
		refusals := slices.Clone(c.refusals)
		changed := c.changed
		c.mu.Unlock()
		if len(missing) == 0 {
			return nil
		}
		why := ""
		if len(refusals) > 0 {
			why = " (" + strings.Join(refusals, "; ") + ")"
		}
		if check != nil {
			if err := check(); err != nil {
				return fmt.Errorf("load agents %s did not connect: %w%s", strings.Join(missing, ", "), err, why)
			}
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("load agents %s did not connect to port %d within %v%s", strings.Join(missing, ", "), c.Port(), timeout, why)
		}
		t := time.NewTimer(min(left, 200*time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

// Refusals are the sentences of every connection refused so far.
func (c *Coordinator) Refusals() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.refusals)
}

// Close says bye to every agent and stops listening.
func (c *Coordinator) Close() error {
	c.mu.Lock()
	c.closed = true
	rs := make([]*remote, 0, len(c.agents))
	for _, r := range c.agents {
		rs = append(rs, r)
	}
	c.mu.Unlock()
	for _, r := range rs {
		_ = r.send(Msg{Type: msgBye})
		_ = r.nc.Close()
	}
	return c.ln.Close()
}

func (c *Coordinator) agent(name string) (*remote, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.agents[name]
	if !ok || r.gone {
		return nil, fmt.Errorf("load agent %s is not connected", name)
	}
	return r, nil
}

// Addr is the address the coordinator listens on.
func (c *Coordinator) Addr() net.Addr { return c.ln.Addr() }
