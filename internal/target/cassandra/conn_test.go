package cassandra

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// tcpPair is a coalescingConn on one end of a loopback TCP connection and
// the plain socket on the other.
func tcpPair(t *testing.T) (*coalescingConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	cc := newCoalescingConn(c, 5*time.Second)
	t.Cleanup(func() { cc.Close(); peer.Close() })
	return cc, peer
}

// Frames written from many goroutines at once arrive whole, each
// writer's in its order, however the flusher groups them.
func TestCoalescingConnKeepsFramesWhole(t *testing.T) {
	cc, peer := tcpPair(t)
	const writers, frames = 8, 2000
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, 512)
			for i := range frames {
				// writer, sequence, length, then length bytes of the writer's id
				n := 1 + (i*37+w)%400
				buf = binary.BigEndian.AppendUint32(buf[:0], uint32(w))
				buf = binary.BigEndian.AppendUint32(buf, uint32(i))
				buf = binary.BigEndian.AppendUint32(buf, uint32(n))
				buf = append(buf, bytes.Repeat([]byte{byte('a' + w)}, n)...)
				if _, err := cc.Write(buf); err != nil {
					t.Error(err)
					return
				}
				// The caller's buffer is its own again once Write returns.
				clear(buf)
			}
		}()
	}
	next := make([]int, writers)
	r := bufio.NewReader(peer)
	head := make([]byte, 12)
	peer.SetReadDeadline(time.Now().Add(20 * time.Second))
	for range writers * frames {
		if _, err := io.ReadFull(r, head); err != nil {
			t.Fatalf("after %v frames: %v", next, err)
		}
		w, i, n := binary.BigEndian.Uint32(head), int(binary.BigEndian.Uint32(head[4:])), int(binary.BigEndian.Uint32(head[8:]))
		if w >= writers || i != next[w] {
			t.Fatalf("frame of writer %d number %d, want number %d", w, i, next[w])
		}
		next[w]++
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(body, bytes.Repeat([]byte{byte('a' + w)}, n)) {
			t.Fatalf("writer %d frame %d: body corrupted", w, i)
		}
	}
	wg.Wait()
}

// Reads through the driver's small buffered reader return the peer's bytes
// unchanged, in pieces larger and smaller than the connection's buffer.
func TestCoalescingConnReads(t *testing.T) {
	cc, peer := tcpPair(t)
	want := make([]byte, 3*readBufferSize+123)
	for i := range want {
		want[i] = byte(i * 7)
	}
	go func() {
		peer.Write(want)
		peer.Close()
	}()
	got, err := io.ReadAll(bufio.NewReaderSize(cc, 4096))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want %d, or they differ", len(got), len(want))
	}
	// A read as large as the buffer goes to the socket directly.
	if _, err := cc.Read(make([]byte, readBufferSize)); err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want EOF", err)
	}
}

// A read deadline the driver sets applies to the next read that waits.
func TestCoalescingConnReadDeadline(t *testing.T) {
	cc, _ := tcpPair(t)
	cc.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	start := time.Now()
	_, err := cc.Read(make([]byte, 10))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read past its deadline: %v, want a timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the read waited %v for a 50ms deadline", d)
	}
	// Clearing the deadline lets the next read wait for data.
	cc.SetReadDeadline(time.Time{})
	if cc.applyDeadline() != nil || !cc.applied.IsZero() {
		t.Fatal("the cleared deadline was not applied")
	}
}

// A write that fails (the peer is gone) closes the connection, and the
// next Write returns the error instead of queueing more.
func TestCoalescingConnWriteFailure(t *testing.T) {
	cc, peer := tcpPair(t)
	peer.(*net.TCPConn).SetLinger(0) // reset, so that writes fail at once
	peer.Close()
	frame := bytes.Repeat([]byte("x"), 1000)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := cc.Write(frame); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("writes to a reset connection still succeed after 5s")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := cc.Read(make([]byte, 10)); err == nil {
		t.Fatal("the failed connection still reads")
	}
}

// After Close, Write fails with net.ErrClosed and Close again is harmless.
func TestCoalescingConnClose(t *testing.T) {
	cc, _ := tcpPair(t)
	if err := cc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.Write([]byte("late")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after close: %v, want net.ErrClosed", err)
	}
	if err := cc.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

// On an idle connection Write hands the frame to the socket itself: when
// it returns nothing is left for the flusher, so one request in flight
// costs no goroutine switch on its way out.
func TestCoalescingConnWritesIdleFramesAtOnce(t *testing.T) {
	cc, peer := tcpPair(t)
	frame := bytes.Repeat([]byte("y"), 100)
	got := make([]byte, len(frame))
	for i := range 100 {
		if _, err := cc.Write(frame); err != nil {
			t.Fatal(err)
		}
		cc.mu.Lock()
		pending, writing := len(cc.pending), cc.writing
		cc.mu.Unlock()
		if pending != 0 || writing {
			t.Fatalf("write %d: %d bytes pending (writing %v) after Write returned on an idle connection", i, pending, writing)
		}
		if _, err := io.ReadFull(peer, got); err != nil || !bytes.Equal(got, frame) {
			t.Fatalf("write %d: the peer read %q (%v)", i, got, err)
		}
	}
}
