package cassandra

import (
	"fmt"
	"strings"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// The consistency levels the target offers (read_consistency,
// write_consistency) and how many replicas of a record each one waits for
// in a keyspace of replication factor rf. The keyspace uses SimpleStrategy
// in one data centre, so the LOCAL_ and EACH_ forms count the same
// replicas as their plain forms; Cassandra accepts them all there.
//
//	ANY           0 (writes only: a hint on the coordinator is enough)
//	ONE, LOCAL_ONE 1
//	TWO           2
//	THREE         3
//	QUORUM, LOCAL_QUORUM, EACH_QUORUM  floor(rf/2) + 1
//	ALL           rf
//
// A read at R replicas sees the latest acknowledged write at W replicas
// when R + W > rf (QUORUM with QUORUM, ONE with ALL, ...).

// levels maps the spec's names to the driver's levels.
var levels = map[string]gocql.Consistency{
	"ANY":          gocql.Any,
	"ONE":          gocql.One,
	"TWO":          gocql.Two,
	"THREE":        gocql.Three,
	"QUORUM":       gocql.Quorum,
	"ALL":          gocql.All,
	"LOCAL_ONE":    gocql.LocalOne,
	"LOCAL_QUORUM": gocql.LocalQuorum,
	"EACH_QUORUM":  gocql.EachQuorum,
}

const levelList = "ONE, TWO, THREE, QUORUM, ALL, LOCAL_ONE, LOCAL_QUORUM, EACH_QUORUM"

// parseLevel reads a consistency level option (case does not matter).
// ANY is for writes only, as in Cassandra.
func parseLevel(field, name string, write bool) (gocql.Consistency, error) {
	c, ok := levels[strings.ToUpper(strings.TrimSpace(name))]
	if !ok {
		list := levelList
		if write {
			list = "ANY, " + list
		}
		return 0, fmt.Errorf("%s: %q is not a consistency level; use one of %s", field, name, list)
	}
	if c == gocql.Any && !write {
		return 0, fmt.Errorf("%s: ANY is for writes only; use ONE or higher for reads", field)
	}
	return c, nil
}

// replicasNeeded is how many replicas level c waits for at replication
// factor rf (see the table above).
func replicasNeeded(c gocql.Consistency, rf int) int {
	switch c {
	case gocql.Any:
		return 0
	case gocql.One, gocql.LocalOne:
		return 1
	case gocql.Two:
		return 2
	case gocql.Three:
		return 3
	case gocql.All:
		return rf
	default: // QUORUM, LOCAL_QUORUM, EACH_QUORUM
		return rf/2 + 1
	}
}

// checkLevels refuses a level that no request could meet at replication
// factor rf even with every node up; fields name the options the two
// levels came from.
func checkLevels(read, write gocql.Consistency, rf int, fields [2]string) error {
	for _, l := range []struct {
		field string
		c     gocql.Consistency
	}{{fields[0], read}, {fields[1], write}} {
		if n := replicasNeeded(l.c, rf); n > rf {
			return fmt.Errorf("%s: %s waits for %d replicas but the keyspace keeps %d (replication factor); lower the level or raise the replication factor", l.field, l.c, n, rf)
		}
	}
	return nil
}
