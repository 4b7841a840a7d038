package agent

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

func TestFraming(t *testing.T) {
	var buf bytes.Buffer
	c := newConn(&buf)
	in := Msg{Type: msgInterval, Interval: &IntervalMsg{Index: 3, Phase: "measure", Stats: []OpStat{{Op: "read", Count: 9, Hist: "HISTFAKE"}}}}
	if err := c.send(in); err != nil {
		t.Fatal(err)
	}
	if err := c.send(Msg{Type: msgBye}); err != nil {
		t.Fatal(err)
	}
	if n := binary.BigEndian.Uint32(buf.Bytes()); int(n) >= buf.Len() {
		t.Fatalf("the first frame's length %d is not a prefix of %d bytes", n, buf.Len())
	}
	out, err := c.recv()
	if err != nil || out.Interval == nil || out.Interval.Index != 3 || out.Interval.Stats[0].Count != 9 {
		t.Fatalf("read back %+v, %v", out, err)
	}
	if m, err := c.recv(); err != nil || m.Type != msgBye {
		t.Fatalf("second frame %+v, %v", m, err)
	}

	// A length beyond the bound is refused before anything is allocated.
	var huge bytes.Buffer
	_ = binary.Write(&huge, binary.BigEndian, uint32(maxFrame+1))
	if _, err := newConn(&huge).recv(); !errors.Is(err, errFrameTooLarge) {
		t.Errorf("oversized frame: %v", err)
	}
	// A frame cut short is an error, not a message.
	var cut bytes.Buffer
	_ = binary.Write(&cut, binary.BigEndian, uint32(100))
	cut.WriteString(`{"type":"bye"`)
	if _, err := newConn(&cut).recv(); err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("truncated frame: %v", err)
	}
}

var testToken = []byte("0123456789abcdef0123456789abcdef")

// dial connects an agent named name with token to c, serving runner until
// ctx ends; the returned channel gets Serve's error.
func dial(t *testing.T, ctx context.Context, c *Coordinator, name string, token []byte, r Runner) <-chan error {
	t.Helper()
	nc, err := net.Dial("tcp", c.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, nc, name, token, r, t.Logf) }()
	return done
}

func TestBadTokenRefusedWithASentence(t *testing.T) {
	c, err := Listen("127.0.0.1:0", testToken)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = <-dial(t, context.Background(), c, "a1", []byte("not-the-token-at-all"), nil)
	var pe *PeerError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), `agent "a1"`) || !strings.Contains(err.Error(), "its token is not the coordinator's") {
		t.Errorf("agent with a wrong token: %v", err)
	}
	if strings.Contains(err.Error(), string(testToken)) {
		t.Error("the refusal shows the token")
	}
	werr := c.Wait(context.Background(), []string{"a1"}, 300*time.Millisecond, nil)
	if werr == nil || !strings.Contains(werr.Error(), "did not connect") || !strings.Contains(werr.Error(), "token is not the coordinator's") {
		t.Errorf("waiting for the refused agent: %v", werr)
	}
}

func TestVersionMismatchRefused(t *testing.T) {
	// An agent facing a coordinator of another version says so and leaves.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		c := newConn(nc)
		_ = c.send(Msg{Type: msgChallenge, Version: Version + 1, Nonce: newNonce()})
		_, _ = c.recv()
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	err = Serve(context.Background(), nc, "a1", testToken, nil, nil)
	if want := fmt.Sprintf("protocol version %d but the coordinator speaks %d", Version, Version+1); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("agent facing a newer coordinator: %v", err)
	}

	// A coordinator facing an agent of another version refuses it.
	rc, ch := rawSession(t)
	own := newNonce()
	_ = rc.send(Msg{Type: msgHello, Version: Version + 1, Name: "old", Nonce: own, MAC: proof(testToken, roleAgent, own, ch.Nonce, "old")})
	_, err = rc.expect(msgWelcome)
	if want := fmt.Sprintf("speaks protocol version %d but the coordinator speaks %d", Version+1, Version); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("coordinator facing a newer agent: %v", err)
	}
}

// Whatever a peer sends, reading it returns a message or an error; it
// never panics or allocates beyond the frame bound.
func FuzzRecv(f *testing.F) {
	var ok bytes.Buffer
	_ = newConn(&ok).send(Msg{Type: msgHello, Version: Version, Name: "a1", MAC: []byte{1, 2}})
	f.Add(ok.Bytes())
	f.Add([]byte{0, 0, 0, 2, '{', '}'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		c := newConn(bytes.NewBuffer(b))
		for range 4 {
			if _, err := c.recv(); err != nil {
				return
			}
		}
	})
}
