package target

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// Error kind names shared by every target, so that per-interval error counts
// mean the same thing whatever the system under test.
const (
	KindTimeout    = "timeout"    // the request or the server gave up waiting
	KindConnection = "connection" // refused, reset or closed connections; the server is unreachable
	KindBusy       = "busy"       // the server refused for lack of resources (too many connections, locked)
	KindDeadlock   = "deadlock"   // the server aborted the transaction to break a deadlock or serialization failure
	KindConstraint = "constraint" // a unique, foreign key or check constraint rejected a write
	KindNotFound   = "not_found"  // the record the operation needs does not exist
)

// IsConnectionError reports whether err says the server could not be
// reached or dropped the connection: refused, reset, broken pipe, EOF, or a
// dial failure.
func IsConnectionError(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
