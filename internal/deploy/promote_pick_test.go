package deploy

import (
	"strings"
	"testing"
)

func TestReplicaToPromote(t *testing.T) {
	nodes := []Node{
		{Name: "pg1", Host: "db1", Role: "primary"},
		{Name: "pg2", Host: "db2", Role: "replica"},
		{Name: "pg3", Host: "db3", Role: "replica"},
	}
	for _, c := range []struct {
		name string
		want int
	}{{"", 1}, {"pg3", 2}, {"db3", 2}, {"db2", 1}} {
		if i, err := replicaToPromote(nodes, c.name, "cluster"); err != nil || i != c.want {
			t.Errorf("%q: got %d, %v; want %d", c.name, i, err, c.want)
		}
	}
	// The primary is no replica: the error lists the ones there are.
	if _, err := replicaToPromote(nodes, "pg1", "cluster"); err == nil || !strings.Contains(err.Error(), `"pg1" is not a replica of the cluster; its replicas are [pg2 pg3]`) {
		t.Errorf("the primary by name: %v", err)
	}
	if _, err := replicaToPromote(nodes[:1], "", "replica set"); err == nil || err.Error() != "the replica set has no replica to promote" {
		t.Errorf("no replica: %v", err)
	}
}
