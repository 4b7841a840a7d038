package cassandra

import (
	"context"
	"fmt"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// StrongClient implements target.StrongReader: a client whose reads are at
// ALL, so a record any replica lost, or one not yet streamed to a joining
// node that owns it, is seen (the campaign's write check after a cluster
// change). It only reads.
func (t *Target) StrongClient(ctx context.Context) (target.Client, error) {
	c, err := t.NewClient(ctx)
	if err != nil {
		return nil, err
	}
	cc, ok := c.(*client)
	if !ok {
		return nil, fmt.Errorf("cassandra target: unexpected client %T", c)
	}
	return &strongClient{client: cc}, nil
}

type strongClient struct {
	*client
	q *gocql.Query
}

// Do reads op's record, every field, at ALL.
func (s *strongClient) Do(ctx context.Context, op *workload.Op) error {
	if op.Type != workload.Read {
		return fmt.Errorf("cassandra target: the strong client only reads, not %v", op.Type)
	}
	s.key.b = op.Key
	if s.q == nil {
		s.q = s.sess.Query(s.st.readAll, s.keyArgs...).Consistency(gocql.All)
	}
	iter := s.q.RoutingKey(op.Key).IterContext(ctx)
	found := iter.Scan(s.allDest...)
	if err := iter.Close(); err != nil {
		return classify(err)
	}
	if !found {
		return target.ErrNotFound
	}
	return nil
}
