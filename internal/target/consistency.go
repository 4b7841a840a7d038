package target

import (
	"context"
	"time"
)

// VersionedStore is a target that takes part in the consistency workload
// (workload.consistency; seed-digest §5): writers write versions 1, 2,
// 3... of a few keys and readers read them back through every read path
// the target offers, so that each read says which version it saw. The
// versions live apart from the YCSB records (a table, or keys, of their
// own), so the workload runs beside the YCSB mix without touching it.
type VersionedStore interface {
	// ReadPaths are the ways a read can go, strongest first: PostgreSQL
	// and Redis "primary", "replica1", ... (one per replica now serving);
	// Cassandra the consistency levels "ONE", "QUORUM", "ALL" that its
	// replication factor allows.
	ReadPaths() []string
	// WriteLevel names the consistency the writes are acknowledged at
	// (Cassandra: write_consistency); "" where the target writes one way.
	WriteLevel() string
	// PrepareVersions creates the versions' table (if the target needs
	// one) and sets every key to version 0. The campaign then waits until
	// every path reads 0, so a run starts from the same state everywhere.
	PrepareVersions(ctx context.Context, keys []string) error
	// NewVersionedClient opens the connections of one session (a writer
	// or a reader, which runs one operation at a time). paths are the read
	// paths the session reads on (nil for a writer that does not read).
	NewVersionedClient(ctx context.Context, paths []string) (VersionedClient, error)
}

// VersionedClient is one session's connections to a VersionedStore. It is
// not shared between goroutines.
type VersionedClient interface {
	// WriteVersion sets key to version v, at the target's write
	// consistency (PostgreSQL: the cluster's synchronous_commit; Cassandra:
	// write_consistency), and returns once the target acknowledged it.
	WriteVersion(ctx context.Context, key string, v int64) error
	// ReadVersion reads key on path (one of the session's paths) and
	// returns the version it found (history.NoValue when none) and, when
	// the target knows it, the node that served it ("" otherwise). It
	// does not allocate on the way: readers run every millisecond.
	ReadVersion(ctx context.Context, path, key string) (v int64, replica string, err error)
	Close() error
}

// ServerClock is one host's clock as a target can read it through its own
// protocol (PostgreSQL clock_timestamp(), Redis TIME, Cassandra
// toTimestamp(now())): what internal/clockoffset estimates the offset to
// the load generator's clock from.
type ServerClock struct {
	// Host names where the clock runs: the lab host, or the node's name
	// when the node runs on this machine.
	Host string
	// Resolution is the smallest step of the times Now returns
	// (microseconds for PostgreSQL and Redis, milliseconds for Cassandra).
	Resolution time.Duration
	// Now asks the server for its time. It is called from one goroutine
	// at a time.
	Now func(ctx context.Context) (time.Time, error)
	// Close releases its connection.
	Close func() error
}

// ClockReader is a target whose servers' clocks can be read
// (ServerClock), one per host that times anything.
type ClockReader interface {
	ServerClocks(ctx context.Context) ([]ServerClock, error)
}
