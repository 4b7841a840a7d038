package cassandra

import (
	"context"
	"time"

	"github.com/headroom-dev/headroom/internal/target"
)

// populateRetryWaits are the pauses before a population insert is tried
// again after a transient refusal. A freshly formed ring of small nodes
// can time out its very first writes while the nodes still compile and
// settle their system tables (an 8-node ring at a tenth of a core each
// failed the campaign on record 0 with write_timeout, 2026-12-01). An
// insert is an idempotent upsert of a whole record, so trying it again
// cannot change what a run later reads. About 15 s in all, then the error
// stands.
var populateRetryWaits = []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}

// transientForPopulate reports whether a refusal of kind k may pass if the
// same insert is sent again a little later: too few replicas answered in
// time or were alive, the coordinator shed load or was still joining.
func transientForPopulate(k string) bool {
	switch k {
	case KindWriteTimeout, KindUnavailable, KindOverloaded, target.KindTimeout, target.KindBusy:
		return true
	}
	return false
}

// retryPopulate runs insert, and again after each of waits while it fails
// with a transient refusal. It returns the last error.
func retryPopulate(ctx context.Context, waits []time.Duration, insert func() error) error {
	err := insert()
	for _, w := range waits {
		if err == nil || !transientForPopulate(kindOf(err)) {
			return err
		}
		t := time.NewTimer(w)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		err = insert()
	}
	return err
}
