// Package testnet gives tests local endpoints whose behaviour is known by
// construction: a listener that accepts connections and never answers,
// and an address that refuses them. They stand for the dead and silent
// targets a run must name (issue 15), on loopback only.
package testnet

import (
	"net"
	"sync"
	"testing"
)

// SilentListener accepts TCP connections on loopback and never reads or
// answers; it holds them until the test ends.
func SilentListener(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// RefusedAddress is a loopback port nothing listens on (one that was just
// free), so a connection to it is refused.
func RefusedAddress(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
