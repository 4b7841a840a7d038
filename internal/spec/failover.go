package spec

import (
	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/target/registry"
)

// eventPromote is a failover (internal/deploy/pgcluster_promote.go,
// rediscluster_promote.go): the replica named by host becomes the primary
// of a managed PostgreSQL cluster or Redis replica set (mode replicas) and
// the target's clients move to it. With a lab, host is the
// replica's lab host; without one, a node name (node2, ...) or none for
// the first replica.
const eventPromote = "promote"

// promoteEvent checks a promote event at path p beyond what every
// cluster event needs (a managed cluster).
func (c *checker) promoteEvent(p string, s *Spec, host string) {
	switch s.Target.Type {
	case "postgres":
	case "redis":
		// Redis Cluster elects its own primaries (its replicas vote);
		// only a replica set has a replica Headroom can promote.
		if m := registry.ManagedOf(s.Target.Options); m != nil && m.Cluster != nil && m.Cluster.ModeOr(deploy.RedisModeReplicas) != deploy.RedisModeReplicas {
			c.fail(p+".action", "promote fails a redis replica set (managed.cluster.mode: replicas) over to a replica; a Redis Cluster (mode %s) elects its own primaries, and Headroom does not promote its replicas", m.Cluster.Mode)
			return
		}
	default:
		c.fail(p+".action", "promote fails a managed PostgreSQL cluster or Redis replica set over to a replica; the %s target has no failover", s.Target.Type)
		return
	}
	if s.Lab == nil && host != "" && !nodeNamePattern.MatchString(host) {
		c.fail(p+".host", "without a lab, promote names a replica of the cluster (node2, node3, ...) or none for the first, not %q", host)
	}
}
