package probe

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

func TestTCPPingerMeasuresConnects(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	ctx := context.Background()
	p, err := NewTCPPinger(ctx, ln.Addr().String(), 3, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.Measure(ctx)
	if err != nil || d <= 0 {
		t.Fatalf("rtt %v, %v", d, err)
	}
	// The server saw the three connects of one measurement.
	for i := 0; i < 3; i++ {
		select {
		case <-accepted:
		case <-time.After(10 * time.Second):
			t.Fatalf("the server saw %d connects, want 3", i)
		}
	}
	ln.Close()
	// A closed port refuses: Measure fails with the address in the message.
	if _, err := p.Measure(ctx); err == nil || !strings.Contains(err.Error(), p.Addr()) {
		t.Fatalf("closed port: %v", err)
	}
}

func TestTCPPingerBadInput(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		addr  string
		count int
		want  string
	}{
		{"localhost", 3, "not host:port"},
		{"127.0.0.1:http", 0, "at least 1"},
		{"127.0.0.1:nosuchservice", 3, "bad port"},
	} {
		if _, err := NewTCPPinger(ctx, c.addr, c.count, time.Second); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.addr, err)
		}
	}
}

func TestMedian(t *testing.T) {
	if m := median([]time.Duration{5, 1, 3}); m != 3 {
		t.Fatal(m)
	}
	if m := median([]time.Duration{4, 1, 3, 2}); m != 2 {
		t.Fatal(m) // (2 + 3) / 2 in integer nanoseconds
	}
}
