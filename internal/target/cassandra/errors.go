package cassandra

import (
	"context"
	"errors"
	"net"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/headroom-dev/headroom/internal/target"
)

// Error kinds of Cassandra's own refusals, besides the shared ones
// (internal/target/kinds.go). They tell a consistency study apart what the
// coordinator said: too few replicas alive to try (unavailable), replicas
// that did not answer in time (write_timeout, read_timeout), replicas that
// answered with a failure, or a node shedding load.
const (
	KindUnavailable  = "unavailable"   // fewer live replicas than the consistency level needs
	KindWriteTimeout = "write_timeout" // the coordinator's write_request_timeout passed before enough replicas acknowledged
	KindReadTimeout  = "read_timeout"  // the coordinator's read (or range) request timeout passed before enough replicas answered
	KindOverloaded   = "overloaded"    // the coordinator refused the request for load
	KindWriteFailure = "write_failure" // a replica answered the write with a failure
	KindReadFailure  = "read_failure"  // a replica answered the read with a failure (e.g. too many tombstones)
)

// classify gives an error from the driver its kind for the per-interval
// error counts. Context errors pass through unwrapped, for the engine.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	if k := kindOf(err); k != "" {
		return &target.KindError{K: k, Err: err}
	}
	return err
}

func kindOf(err error) string {
	var (
		unavailable  *gocql.RequestErrUnavailable
		writeTimeout *gocql.RequestErrWriteTimeout
		readTimeout  *gocql.RequestErrReadTimeout
		overloaded   *gocql.RequestErrOverloaded
		bootstrap    *gocql.RequestErrBootstrapping
		writeFailure *gocql.RequestErrWriteFailure
		readFailure  *gocql.RequestErrReadFailure
		ne           net.Error
	)
	switch {
	case errors.As(err, &unavailable):
		return KindUnavailable
	case errors.As(err, &writeTimeout):
		return KindWriteTimeout
	case errors.As(err, &readTimeout):
		return KindReadTimeout
	case errors.As(err, &overloaded):
		return KindOverloaded
	case errors.As(err, &bootstrap):
		// A joining node that got the request as coordinator: it cannot
		// serve yet.
		return target.KindBusy
	case errors.As(err, &writeFailure):
		return KindWriteFailure
	case errors.As(err, &readFailure):
		return KindReadFailure
	case errors.Is(err, gocql.ErrTimeoutNoResponse):
		return target.KindTimeout
	case errors.Is(err, gocql.ErrNoStreams):
		// Every stream of the connection is in use: the client's own limit.
		return target.KindBusy
	case errors.Is(err, gocql.ErrNoConnections), errors.Is(err, gocql.ErrConnectionClosed),
		errors.Is(err, gocql.ErrSessionClosed),
		target.IsConnectionError(err):
		return target.KindConnection
	case errors.As(err, &ne) && ne.Timeout():
		return target.KindTimeout
	}
	return ""
}
