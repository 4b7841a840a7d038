package agent

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
)

// tamperProxy relays one agent's connection to the coordinator at addr
// and does harm to the agent's first interval frame: "flip" changes one
// byte of its JSON (a count), "replay" sends it twice, "inject" sends a
// forged unsealed interval before it. Frames are length-prefixed
// (protocol.go), so the proxy can find them without the token.
func tamperProxy(t *testing.T, addr, mode string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		in, err := ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", addr)
		if err != nil {
			in.Close()
			return
		}
		t.Cleanup(func() { in.Close(); out.Close() })
		go func() { _, _ = io.Copy(in, out) }()
		done := false
		for {
			var head [4]byte
			if _, err := io.ReadFull(in, head[:]); err != nil {
				return
			}
			frame := make([]byte, binary.BigEndian.Uint32(head[:]))
			if _, err := io.ReadFull(in, frame); err != nil {
				return
			}
			write := func(b []byte) {
				var h [4]byte
				binary.BigEndian.PutUint32(h[:], uint32(len(b)))
				_, _ = out.Write(append(h[:], b...))
			}
			if done || !bytes.Contains(frame, []byte(`"type":"interval"`)) {
				write(frame)
				continue
			}
			done = true
			switch mode {
			case "flip":
				i := bytes.Index(frame, []byte(`"count":`)) + len(`"count":`)
				frame[i] ^= 0x01 // one digit becomes another
				write(frame)
			case "replay":
				write(frame)
				write(frame)
			case "inject":
				forged := []byte(`{"type":"interval","run":1,"interval":{"index":0,"phase":"measure","stats":[{"phase":"measure","op":"read","count":1000000,"hist":""}]}}`)
				write(forged)
				write(frame)
			}
		}
	}()
	return ln.Addr().String()
}

// After the handshake every frame is sealed (issue 36): an interval
// changed, replayed or injected on the way by someone without the token
// never reaches the merge; the coordinator drops the agent with a
// sentence saying why, and the merged intervals hold only what the agent
// sent.
func TestSealedFramesRefuseTampering(t *testing.T) {
	for _, mode := range []string{"flip", "replay", "inject"} {
		t.Run(mode, func(t *testing.T) {
			c, err := Listen("127.0.0.1:0", testToken)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			nc, err := net.Dial("tcp", tamperProxy(t, c.ln.Addr().String(), mode))
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			const iv = 100 * time.Millisecond
			r := &tickRunner{interval: iv, last: 3}
			go func() { _ = Serve(context.Background(), nc, "a", testToken, r, t.Logf) }()
			if err := c.Wait(context.Background(), []string{"a"}, 5*time.Second, nil); err != nil {
				t.Fatal(err)
			}
			rs := RunSpec{Agents: []string{"a"}, Orders: []Order{{Share: Share{Index: 0, Of: 1}}}, Interval: iv, Last: 3, Drain: iv, Behind: time.Second}
			var merged []Merged
			out, err := c.Run(context.Background(), rs, func(m Merged) error {
				merged = append(merged, m)
				return nil
			})
			if err != nil {
				t.Logf("run: %v", err)
			}
			if len(out.Agents) != 1 {
				t.Fatalf("outcome %+v", out)
			}
			a := out.Agents[0]
			t.Logf("agent a: %s (%s)", a.Status, a.Reason)
			if a.Status == store.AgentCompleted || !strings.Contains(a.Reason, "does not carry this session's MAC") {
				t.Errorf("agent a %s (%s); want it lost because a frame was not sealed by the session", a.Status, a.Reason)
			}
			for _, m := range merged {
				for _, s := range m.PerAgent["a"] {
					if s.Count != 50 {
						t.Errorf("interval %d merged a count of %d from agent a, which sent 50", m.Index, s.Count)
					}
				}
			}
		})
	}
}
