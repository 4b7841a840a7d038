package cassandra

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/target"
)

// The consistency workload (target.VersionedStore): versions live in a
// table of their own in the workload's keyspace, so they have its
// replication factor. The read paths are consistency levels: a read at
// ONE may come from a replica the write has not reached yet; QUORUM reads
// with QUORUM writes overlap in at least one replica (R + W > RF).
const versionsTable = "headroom_versions"

var (
	_ target.VersionedStore = (*Target)(nil)
	_ target.ClockReader    = (*Target)(nil)
	_ target.ClockReader    = (*Managed)(nil)
	_ target.VersionedStore = (*Managed)(nil)
)

// readPaths are the levels a reader can use, weakest first.
var readPaths = []string{"ONE", "QUORUM", "ALL"}

// ReadPaths implements target.VersionedStore: ONE, QUORUM and ALL.
func (t *Target) ReadPaths() []string { return append([]string(nil), readPaths...) }

// WriteLevel implements target.VersionedStore: write_consistency.
func (t *Target) WriteLevel() string {
	_, name, _ := t.opts.writeLevel()
	return strings.ToUpper(name)
}

func (t *Target) session() (*gocql.Session, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sess == nil {
		return nil, errors.New("cassandra target: Prepare must run before the consistency workload")
	}
	return t.sess, nil
}

// PrepareVersions implements target.VersionedStore: creates the table and
// writes version 0 of every key at ALL.
func (t *Target) PrepareVersions(ctx context.Context, keys []string) error {
	if err := t.ddl(ctx, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s (k text PRIMARY KEY, v bigint)", t.opts.Keyspace, versionsTable)); err != nil {
		return err
	}
	if err := t.admin.AwaitSchemaAgreement(ctx); err != nil {
		return fmt.Errorf("cassandra target: the nodes do not agree on the schema after creating %s: %w", versionsTable, err)
	}
	sess, err := t.session()
	if err != nil {
		return err
	}
	q := sess.Query("UPDATE " + versionsTable + " SET v = 0 WHERE k = ?").Consistency(gocql.All)
	for _, k := range keys {
		if err := q.Bind(k).ExecContext(ctx); err != nil {
			return fmt.Errorf("cassandra target: setting the consistency key %q to version 0 at ALL: %w", k, classify(err))
		}
	}
	return nil
}

// NewVersionedClient implements target.VersionedStore: the session's
// queries share the workload's driver session (its connections and
// token-aware routing).
func (t *Target) NewVersionedClient(_ context.Context, paths []string) (target.VersionedClient, error) {
	sess, err := t.session()
	if err != nil {
		return nil, err
	}
	vc := &versionedClient{reads: map[string]*gocql.Query{}, names: map[string]string{}}
	vc.write = sess.Query("UPDATE "+versionsTable+" SET v = ? WHERE k = ?", &vc.v, &vc.key).Consistency(t.write)
	for _, p := range paths {
		cl, ok := levels[strings.ToUpper(p)]
		if !ok || cl == gocql.Any {
			return nil, fmt.Errorf("cassandra target: workload.consistency.read_levels: %q is not a read level; use %s", p, strings.Join(readPaths, ", "))
		}
		if need := replicasNeeded(cl, t.ReplicationFactor()); need > t.ReplicationFactor() {
			return nil, fmt.Errorf("cassandra target: workload.consistency.read_levels: %s needs %d replicas, but the replication factor is %d; leave it out", p, need, t.ReplicationFactor())
		}
		vc.reads[p] = sess.Query("SELECT v FROM "+versionsTable+" WHERE k = ?", &vc.key).Consistency(cl)
	}
	return vc, nil
}

// versionedClient reuses one query per level; its arguments point at the
// client's key and version, so a request binds nothing new.
type versionedClient struct {
	key   string
	v     int64
	got   int64
	write *gocql.Query
	reads map[string]*gocql.Query
	names map[string]string // coordinator address -> the name its clock has
}

// NewVersionedClient implements target.VersionedStore on a managed
// cluster: a read's replica is named as its node's clock is (ServerClocks).
func (m *Managed) NewVersionedClient(ctx context.Context, paths []string) (target.VersionedClient, error) {
	c, err := m.Target.NewVersionedClient(ctx, paths)
	if err != nil {
		return nil, err
	}
	vc := c.(*versionedClient)
	for _, n := range m.cluster.Nodes() {
		name := n.Host
		if name == "" {
			name = n.Name
		}
		vc.names[n.Inst.Host] = name
	}
	return vc, nil
}

// WriteVersion implements target.VersionedClient at the target's write
// consistency.
func (vc *versionedClient) WriteVersion(ctx context.Context, key string, v int64) error {
	vc.key, vc.v = key, v
	if err := vc.write.ExecContext(ctx); err != nil {
		return classify(err)
	}
	return nil
}

// ReadVersion implements target.VersionedClient at level path; the
// replica is the coordinator that answered.
func (vc *versionedClient) ReadVersion(ctx context.Context, path, key string) (int64, string, error) {
	q, ok := vc.reads[path]
	if !ok {
		return 0, "", fmt.Errorf("cassandra target: the session was not opened to read at %q", path)
	}
	vc.key = key
	iter := q.IterContext(ctx)
	found := iter.Scan(&vc.got)
	replica := ""
	if h := iter.Host(); h != nil {
		replica = h.ConnectAddress().String()
		if n, ok := vc.names[replica]; ok {
			replica = n
		}
	}
	if err := iter.Close(); err != nil {
		return 0, "", classify(err)
	}
	if !found {
		return history.NoValue, replica, nil
	}
	return vc.got, replica, nil
}

// Close implements target.VersionedClient; the session is the target's.
func (vc *versionedClient) Close() error { return nil }

// ServerClocks implements target.ClockReader: toTimestamp(now()) (in
// milliseconds) of every node, each named by its address.
func (t *Target) ServerClocks(ctx context.Context) ([]target.ServerClock, error) {
	return t.serverClocks(ctx, func(addr string) string { return addr })
}

// ServerClocks implements target.ClockReader on a managed cluster, each
// clock named by its node's lab host (or node name on this machine).
func (m *Managed) ServerClocks(ctx context.Context) ([]target.ServerClock, error) {
	names := map[string]string{}
	for _, n := range m.cluster.Nodes() {
		name := n.Host
		if name == "" {
			name = n.Name
		}
		names[n.Inst.Host] = name
	}
	return m.Target.serverClocks(ctx, func(addr string) string {
		if n, ok := names[addr]; ok {
			return n
		}
		return addr
	})
}

func (t *Target) serverClocks(_ context.Context, name func(addr string) string) ([]target.ServerClock, error) {
	sess, err := t.session()
	if err != nil {
		return nil, err
	}
	var out []target.ServerClock
	for _, h := range sess.GetHosts() {
		if !h.IsUp() {
			continue
		}
		q := sess.Query("SELECT toTimestamp(now()) FROM system.local").Consistency(gocql.One).SetHostID(h.HostID())
		out = append(out, target.ServerClock{
			Host: name(h.ConnectAddress().String()), Resolution: time.Millisecond, Close: func() error { return nil },
			Now: func(ctx context.Context) (time.Time, error) {
				var ts time.Time
				err := q.ScanContext(ctx, &ts)
				return ts, err
			},
		})
	}
	return out, nil
}
