package redistarget

import (
	"context"
	"errors"

	"github.com/headroom-dev/headroom/internal/target"
)

// StrongClient implements target.StrongReader: reads from the primary (a
// Redis Cluster's primaries, which its client reads from anyway), whatever
// read_from says, for the campaign's write check after a cluster change.
func (t *Target) StrongClient(context.Context) (target.Client, error) {
	if t.fields == nil {
		return nil, errors.New("redis target: Prepare must run before clients are opened")
	}
	c := newClient(t)
	c.primaryOnly = true
	return c, nil
}
