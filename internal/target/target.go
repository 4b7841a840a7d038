// Package target defines the system-under-test interface that the load engine
// drives. Each system (sqlite, null, and later postgres, mysql, redis, http,
// disk) lives in its own sub-package and registers itself in
// internal/target/registry; the engine never imports a concrete target.
package target

import (
	"context"
	"errors"

	"github.com/headroom-dev/headroom/internal/workload"
)

// Target is one system under test for the duration of a campaign.
type Target interface {
	// Prepare creates what the workload needs (schema, tables) and empties it
	// when fresh is true. It runs once before any population or run.
	Prepare(ctx context.Context, w workload.Config, fresh bool) error
	// NewClient returns a client for one engine slot (one in-flight request at
	// a time). Clients are not shared between goroutines.
	NewClient(ctx context.Context) (Client, error)
	// Close releases everything the target holds.
	Close() error
}

// Client executes operations. Do must not retain op after it returns.
type Client interface {
	Do(ctx context.Context, op *workload.Op) error
	Close() error
}

// Loader is implemented by clients that can populate faster than one Insert
// per Do call (for example in one transaction per batch). The engine's
// populate phase uses it when present.
type Loader interface {
	// LoadBatch inserts the given records (each an Insert op) atomically.
	LoadBatch(ctx context.Context, ops []*workload.Op) error
}

// ErrNotFound is returned by Do when a Read, Update or ReadModifyWrite finds
// no record with the key. The engine counts it as an error of kind "not_found".
var ErrNotFound = errors.New("record not found")

// Kinder lets a target name the kind of an error for the per-interval error
// counts ("timeout", "busy", "connection", ...). Errors that do not implement
// it are classified by the engine (context deadline -> "timeout", ErrNotFound
// -> "not_found", anything else -> "error").
type Kinder interface {
	Kind() string
}

// KindError wraps an error with a kind name.
type KindError struct {
	K   string
	Err error
}

func (e *KindError) Error() string { return e.K + ": " + e.Err.Error() }
func (e *KindError) Unwrap() error { return e.Err }

// Kind returns the error kind.
func (e *KindError) Kind() string { return e.K }

// Addresser is a networked target that knows the host:port its server
// listens on (as the client dials it). The probe's RTT guard times TCP
// connects to it, and the results store records it.
type Addresser interface {
	Address() string
}
