package deploy

import (
	"encoding/binary"
	"testing"
)

// cqlMapValue encodes a map<text, text> as the native protocol does: the
// entry count, then each key and value as [bytes].
func cqlMapValue(pairs ...string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(pairs)/2))
	for _, s := range pairs {
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	return b
}

// A keyspace's copies, from the replication map system_schema.keyspaces
// holds: SimpleStrategy's replication_factor, or the sum over data centres
// (a transient replica "3/1" counts 3 copies, of which one is transient).
func TestReplicationCopies(t *testing.T) {
	cases := []struct {
		pairs []string
		want  int
	}{
		{[]string{"class", "org.apache.cassandra.locator.SimpleStrategy", "replication_factor", "2"}, 2},
		{[]string{"class", "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1", "3", "dc2", "2"}, 5},
		{[]string{"class", "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1", "3/1"}, 3},
		{[]string{"class", "org.apache.cassandra.locator.LocalStrategy"}, 0},
	}
	for _, c := range cases {
		m := cqlTextMap(cqlMapValue(c.pairs...))
		if len(m) != len(c.pairs)/2 {
			t.Errorf("%v decoded as %v", c.pairs, m)
		}
		if got := replicationCopies(m); got != c.want {
			t.Errorf("%v: %d copies, want %d", c.pairs, got, c.want)
		}
	}
	// A value cut short decodes what it holds and stops.
	b := cqlMapValue("class", "x", "replication_factor", "3")
	if m := cqlTextMap(b[:len(b)-3]); m["class"] != "x" || len(m) > 2 {
		t.Errorf("a truncated map decoded as %v", m)
	}
	if m := cqlTextMap(nil); len(m) != 0 {
		t.Errorf("an empty value decoded as %v", m)
	}
}
