package target

import (
	"context"
	"time"

	"github.com/headroom-dev/headroom/internal/workload"
)

// Optional capabilities. The campaign runner checks for them with type
// assertions, so a target implements only what its system offers.

// Restarter is a target whose server Headroom manages and can restart
// (reset policy "restart", seed-digest §2).
type Restarter interface {
	// Restart stops and starts the server and returns once it accepts
	// connections again. Clients made before it must not be used after it.
	Restart(ctx context.Context) error
}

// Snapshotter is a target that can save its populated data set once and
// bring it back before a run (reset policy "restore", seed-digest §2: the
// remedy seed 001 proposes, a dump and restore instead of an insert script).
type Snapshotter interface {
	// Snapshot saves the current data set; it is called once, right after
	// population.
	Snapshot(ctx context.Context) error
	// Restore replaces the data set with the snapshot.
	Restore(ctx context.Context) error
}

// ServerTimer is a target whose server reports how long it spent executing
// statements (seed-digest §2, 001 §III-A: network delay mu = client response
// time minus server execution time). ServerTimes returns cumulative counters
// since an arbitrary origin, one per operation name (a YCSB operation name
// such as "read", or a statement's name); the runner takes differences per
// interval. Operations the server did not see are left out.
type ServerTimer interface {
	ServerTimes(ctx context.Context) ([]ServerTime, error)
}

// ServerTime is a cumulative server-side execution counter of one operation.
type ServerTime struct {
	Op    string
	Calls int64         // statements executed
	Total time.Duration // summed execution time
}

// ServerProcesses is a target that knows the processes of its server (a
// managed local instance), so the runner can monitor them.
type ServerProcesses interface {
	ServerPIDs() []int
}

// ServerStarter is a target whose server Headroom runs and can start again
// after it was killed (a lab fault), leaving the target's connection pool
// as it is: the pool reconnects on its own.
type ServerStarter interface {
	StartServer(ctx context.Context) error
}

// DatasetLoader is a target that runs statement workloads: its Prepare
// creates the tables of w.Dataset (dropping them first when fresh), and
// LoadDataset fills them (see internal/sqlwork).
type DatasetLoader interface {
	// LoadDataset fills the data set's tables; progress (which may be nil)
	// receives rows done and rows in all now and then.
	LoadDataset(ctx context.Context, w workload.Config, seed uint64, progress func(done, total int64)) error
}

// Ephemeral is a target whose data does not outlive the Headroom session,
// such as a managed instance created afresh by each session: a resumed
// campaign must populate it again.
type Ephemeral interface {
	Ephemeral() bool
}
