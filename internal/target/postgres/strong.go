package postgres

import (
	"context"
	"errors"

	"github.com/headroom-dev/headroom/internal/target"
)

// StrongClient implements target.StrongReader: reads from the primary,
// whatever read_from says, for the campaign's write check after a cluster
// change (a replica may lag; the primary has every acknowledged write).
func (t *Target) StrongClient(context.Context) (target.Client, error) {
	if t.qs.Load() == nil {
		return nil, errors.New("postgres target: Prepare must run before clients are opened")
	}
	c := newClient(t)
	c.primaryOnly = true
	return c, nil
}
