package agent

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Runner turns a work order into load on the agent's machine (the campaign
// implements it: spec, target, load engine).
type Runner interface {
	// Prepare opens the target and every client the share needs, so that
	// the run starts on time.
	Prepare(ctx context.Context, o Order) (Prepared, error)
}

// Prepared is a share ready to run.
type Prepared interface {
	// Hist is the geometry of the latency histograms it records.
	Hist() HistRange
	// Run starts the load at start (this machine's clock), calls send
	// with each interval as it completes, and returns the share's result.
	// Cancelling ctx stops it early (the result says interrupted).
	Run(ctx context.Context, start time.Time, send func(IntervalMsg) error) (ResultMsg, error)
	Close() error
}

// Serve runs the agent's side of a session on nc until the coordinator
// says bye (nil), the connection ends, or ctx is cancelled. name is the
// agent's name, token the shared secret; the token is never sent or
// logged. Nothing but the handshake is sent to a coordinator that has not
// proved it holds the token (UnprovenError). logf, when set,
// hears one line per step.
func Serve(ctx context.Context, nc net.Conn, name string, token []byte, r Runner, logf func(string, ...any)) error {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	c := newConn(nc)
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	if err := clientHandshake(c, nc.RemoteAddr().String(), name, token); err != nil {
		return err
	}
	_ = nc.SetDeadline(time.Time{})
	logf("connected to %s as %s", nc.RemoteAddr(), name)

	// One reader for the whole session: a stop or bye can come while a run
	// goes on.
	in := make(chan Msg, 16)
	readErr := make(chan error, 1)
	go func() {
		for {
			m, err := c.recv()
			if err != nil {
				readErr <- err
				close(in)
				return
			}
			in <- m
		}
	}()
	var wmu sync.Mutex
	send := func(m Msg) error {
		wmu.Lock()
		defer wmu.Unlock()
		return c.send(m)
	}
	go func() { <-ctx.Done(); _ = nc.Close() }()

	var prep Prepared
	var run uint64 // the order's run number, echoed in its messages
	defer func() {
		if prep != nil {
			_ = prep.Close()
		}
	}()
	for m := range in {
		switch m.Type {
		case msgPing:
			if err := send(Msg{Type: msgPong, T1: m.T1, T2: time.Now().UnixNano(), T3: time.Now().UnixNano()}); err != nil {
				return err
			}
		case msgOrder:
			if prep != nil {
				_ = prep.Close()
				prep = nil
			}
			if m.Order == nil {
				return errors.New("the coordinator sent an order without a share")
			}
			run = m.Run
			p, err := r.Prepare(ctx, *m.Order)
			if err != nil {
				logf("run %d: %v", m.Order.RunID, err)
				if err := send(Msg{Type: msgError, Run: run, Error: fmt.Sprintf("agent %s cannot run its share: %v", name, err)}); err != nil {
					return err
				}
				continue
			}
			prep = p
			if err := send(Msg{Type: msgReady, Run: run, Ready: &Ready{Hist: p.Hist()}}); err != nil {
				return err
			}
		case msgStart:
			if prep == nil {
				return errors.New("the coordinator started a run before ordering it")
			}
			if err := runShare(ctx, prep, run, time.Unix(0, m.StartAt), in, send, logf); err != nil {
				return err
			}
			_ = prep.Close()
			prep = nil
		case msgStop:
			// A stop between runs: nothing is running.
		case msgBye:
			return nil
		case msgError:
			return &PeerError{m.Error}
		default:
			return fmt.Errorf("unexpected %q message from the coordinator", m.Type)
		}
	}
	err := <-readErr
	if errors.Is(err, io.EOF) || ctx.Err() != nil {
		return fmt.Errorf("the coordinator closed the connection")
	}
	return fmt.Errorf("the connection to the coordinator broke: %w", err)
}

// runShare runs one prepared share, passing intervals and the result to
// send, and stops it on the coordinator's stop.
func runShare(ctx context.Context, p Prepared, run uint64, start time.Time, in <-chan Msg, send func(Msg) error, logf func(string, ...any)) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type outcome struct {
		res ResultMsg
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := p.Run(runCtx, start, func(iv IntervalMsg) error {
			return send(Msg{Type: msgInterval, Run: run, Interval: &iv})
		})
		done <- outcome{res, err}
	}()
	for {
		select {
		case o := <-done:
			if o.err != nil {
				logf("run: %v", o.err)
				return send(Msg{Type: msgError, Run: run, Error: o.err.Error()})
			}
			return send(Msg{Type: msgResult, Run: run, Result: &o.res})
		case m, ok := <-in:
			switch {
			case !ok:
				cancel()
				<-done
				return errors.New("the coordinator closed the connection during a run")
			case m.Type == msgStop:
				cancel()
			case m.Type == msgPing:
				if err := send(Msg{Type: msgPong, T1: m.T1, T2: time.Now().UnixNano(), T3: time.Now().UnixNano()}); err != nil {
					return err
				}
			}
		}
	}
}

// UnprovenError is the agent's refusal of a peer that did not prove it
// holds the agent's token: a fake coordinator, or one started with another
// token. The agent sends it nothing after the handshake.
type UnprovenError struct {
	Agent, Addr string
}

func (e *UnprovenError) Error() string {
	return fmt.Sprintf("agent %s refused the coordinator at %s: it does not know this agent's token; check that --connect names your coordinator and that both use the same token (--token-file or %s)", e.Agent, e.Addr, TokenEnv)
}

// clientHandshake is the agent's side of the mutual proof (protocol.go):
// it proves the token to the coordinator at addr, then checks the
// coordinator's proof, and returns nil only when both hold.
func clientHandshake(c *conn, addr, name string, token []byte) error {
	ch, err := c.expect(msgChallenge)
	if err != nil {
		return fmt.Errorf("the coordinator at %s did not start a session: %w", addr, err)
	}
	if ch.Version != Version {
		msg := fmt.Sprintf("agent %s speaks protocol version %d but the coordinator speaks %d; run the same Headroom version on both", name, Version, ch.Version)
		_ = c.send(Msg{Type: msgError, Error: msg})
		return errors.New(msg)
	}
	if len(ch.Nonce) != nonceLen {
		return fmt.Errorf("the peer at %s sent a challenge without a %d-byte nonce; check that --connect names a Headroom coordinator", addr, nonceLen)
	}
	own := newNonce()
	if err := c.send(Msg{Type: msgHello, Version: Version, Name: name, Nonce: own, MAC: proof(token, roleAgent, own, ch.Nonce, name)}); err != nil {
		return err
	}
	w, err := c.expect(msgWelcome)
	if err != nil {
		return fmt.Errorf("the coordinator refused agent %s: %w", name, err)
	}
	if !hmac.Equal(w.MAC, proof(token, roleCoordinator, ch.Nonce, own, name)) {
		// Not a word more to it: a peer without the token may be anyone,
		// and an error message would only tell it what it got wrong.
		return &UnprovenError{Agent: name, Addr: addr}
	}
	c.seal(sessionKey(token, ch.Nonce, own, name), roleAgent)
	return nil
}
