package postgres

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/headroom-dev/headroom/internal/target"
)

// classify names the kind of a request error from its SQLSTATE, or from
// the connection's fate. pc may be nil. Errors under a canceled or expired
// context are returned as they are: the engine names those itself.
func classify(ctx context.Context, err error, pc *pgconn.PgConn) error {
	if err == nil || errors.Is(err, target.ErrNotFound) {
		return err
	}
	if ctx.Err() != nil {
		if !errors.Is(err, ctx.Err()) {
			return &ctxError{ctx: ctx.Err(), err: err}
		}
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if k := sqlstateKind(pe.Code); k != "" {
			return &target.KindError{K: k, Err: err}
		}
		return err
	}
	if target.IsConnectionError(err) || (pc != nil && pc.IsClosed()) {
		return &target.KindError{K: target.KindConnection, Err: err}
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return &target.KindError{K: target.KindConnection, Err: err}
	}
	if pgconn.Timeout(err) {
		return &target.KindError{K: target.KindTimeout, Err: err}
	}
	return err
}

// sqlstateKind maps PostgreSQL error codes to Headroom's error kinds.
func sqlstateKind(code string) string {
	switch {
	case code == "40P01" || code == "40001": // deadlock_detected, serialization_failure
		return target.KindDeadlock
	case strings.HasPrefix(code, "23"): // integrity constraint violations
		return target.KindConstraint
	case code == "57014": // query_canceled: statement_timeout
		return target.KindTimeout
	case code == "53300" || code == "55P03" || code == "53400": // too_many_connections, lock_not_available, configuration_limit_exceeded
		return target.KindBusy
	case strings.HasPrefix(code, "08"), code == "57P01", code == "57P02", code == "57P03": // connection exceptions, admin/crash shutdown, cannot connect now
		return target.KindConnection
	}
	return ""
}

// ctxError keeps the context's error visible to errors.Is (the engine
// tells timeouts from the end of a run by it) next to the driver's.
type ctxError struct{ ctx, err error }

func (e *ctxError) Error() string   { return e.err.Error() }
func (e *ctxError) Unwrap() []error { return []error{e.ctx, e.err} }
