package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestCheckCassandraSettings(t *testing.T) {
	for _, tc := range []struct {
		settings map[string]string
		want     string // substring of the error; "" = accepted
	}{
		{map[string]string{"concurrent_writes": "64", "max_heap_size": "256M"}, ""},
		{map[string]string{"max_heap_size": "2G"}, ""},
		{map[string]string{"listen_address": "10.0.0.1"}, "managed.settings.listen_address: Headroom sets this itself"},
		{map[string]string{"native_transport_port": "9043"}, "set managed.port instead"},
		{map[string]string{"Concurrent-Writes": "1"}, "is not a cassandra.yaml setting name"},
		{map[string]string{"concurrent_writes": "1\nauthenticator: AllowAllAuthenticator"}, "one line"},
		{map[string]string{"max_heap_size": "lots"}, "write it as 512M or 2G"},
		{map[string]string{"max_heap_size": "64M"}, "outside 128M..64G"},
	} {
		err := CheckCassandraSettings(tc.settings)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: got %v, want %q", tc.settings, err, tc.want)
		}
	}
}

func TestCassandraHeap(t *testing.T) {
	if got := cassandraHeapMiB(map[string]string{"max_heap_size": "1G"}, nil); got != 1024 {
		t.Errorf("max_heap_size 1G: %d MiB", got)
	}
	if got := cassandraHeapMiB(nil, nil); got != 512 {
		t.Errorf("loopback default: %d MiB, want 512", got)
	}
	for _, tc := range []struct{ mem, want int64 }{{512, 192}, {1024, 512}, {2048, 1024}, {8192, 2048}, {65536, 8192}, {256, 128}} {
		p := &Placement{on: memHost{tc.mem}}
		if got := cassandraHeapMiB(nil, p); int64(got) != tc.want {
			t.Errorf("host with %d MiB: heap %d MiB, want %d", tc.mem, got, tc.want)
		}
	}
}

// memHost is a host with a memory limit, as a lab host reports it.
type memHost struct{ mib int64 }

func (memHost) Name() string                      { return "h" }
func (memHost) Address() string                   { return "10.0.0.2" }
func (memHost) ClientAddress() string             { return "10.0.0.1" }
func (memHost) DataDir() string                   { return "" }
func (memHost) Command(*exec.Cmd, int, int) error { return nil }
func (h memHost) OOMKills() (int64, int64, bool)  { return 0, h.mib, true }

func TestParseNodetoolStatus(t *testing.T) {
	out := `Datacenter: datacenter1
=======================
Status=Up/Down
|/ State=Normal/Leaving/Joining/Moving
--  Address    Load        Tokens  Owns (effective)  Host ID                               Rack
UN  127.0.0.1  114.71 KiB  16      100.0%            d87b3be4-a79c-4302-812e-4bfe829dd260  rack1
UJ  127.0.0.2  60 KiB      16      ?                 e87b3be4-a79c-4302-812e-4bfe829dd260  rack1
DN  10.1.0.3:7000  ?       16      33.3%             f87b3be4-a79c-4302-812e-4bfe829dd260  rack1
`
	got := parseNodetoolStatus(out)
	want := map[string]string{"127.0.0.1": "UN", "127.0.0.2": "UJ", "10.1.0.3": "DN"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// startCassandra starts a managed Cassandra cluster for the test and
// removes it when the test ends; it skips the test when Java or the jars
// are missing (fails under HEADROOM_REQUIRE_SERVERS=1).
func startCassandra(t *testing.T, m Managed) *CassandraCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	c, err := StartCassandra(ctx, serverTestDir(t, "cassandra"), m)
	if errors.Is(err, ErrMissingBinary) {
		if os.Getenv("HEADROOM_REQUIRE_SERVERS") == "1" {
			t.Fatal(err)
		}
		t.Skip("Cassandra cannot run here: ", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pids := c.PIDs()
		if err := c.Remove(); err != nil {
			t.Error(err)
		}
		for _, pid := range pids {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
				t.Errorf("cassandra process %d still runs after Remove", pid)
			}
		}
	})
	t.Logf("%d node(s) started in %.1f s", len(c.Nodes()), time.Since(start).Seconds())
	for _, n := range c.Nodes() {
		t.Logf("%s: RSS %d MiB", n.Name, rssMiB(n.Inst.PID()))
	}
	return c
}

// rssMiB is a process's resident memory.
func rssMiB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb >> 10
		}
	}
	return -1
}

// cql runs statements on the node at addr as the cluster's workload role.
func cql(t *testing.T, c *CassandraCluster, addr string, cl uint16, stmt string) [][][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := cqlDial(ctx, addr, c.User(), c.Password())
	if err != nil {
		t.Fatalf("logging in to %s: %v", addr, err)
	}
	defer conn.Close()
	rows, err := conn.query(ctx, stmt, cl)
	if err != nil {
		t.Fatalf("%s on %s: %v", stmt, addr, err)
	}
	return rows
}

func TestCassandraSingleNode(t *testing.T) {
	c := startCassandra(t, Managed{Settings: map[string]string{"max_heap_size": "256M", "concurrent_writes": "8"}})
	nodes := c.Nodes()
	if len(nodes) != 1 || nodes[0].Name != "node1" || nodes[0].Role != "member" || nodes[0].Host != "" {
		t.Fatalf("nodes %+v", nodes)
	}
	cp := c.ContactPoints()
	if len(cp) != 1 || !strings.HasPrefix(cp[0], "127.0.0.1:") {
		t.Fatalf("contact points %v", cp)
	}
	rows := cql(t, c, cp[0], cqlOne, "SELECT release_version, cluster_name FROM system.local")
	if len(rows) != 1 || !strings.HasPrefix(string(rows[0][0]), "5.0.") || string(rows[0][1]) != "headroom" {
		t.Fatalf("system.local: %q", rows)
	}
	// The setting reached the node, and the heap is the one asked for.
	rows = cql(t, c, cp[0], cqlOne, "SELECT value FROM system_views.settings WHERE name = 'concurrent_writes'")
	if len(rows) != 1 || string(rows[0][0]) != "8" {
		t.Fatalf("concurrent_writes: %q", rows)
	}
	// Only the workload's role logs in; the default superuser is gone.
	ctx := context.Background()
	for _, login := range [][2]string{{"cassandra", "cassandra"}, {c.User(), "wrong"}} {
		conn, err := cqlDial(ctx, cp[0], login[0], login[1])
		var se *cqlServerError
		if !errors.As(err, &se) || se.Code != cqlBadCredentials {
			t.Errorf("logging in as %s with a wrong password: %v, want bad credentials", login[0], err)
		}
		if conn != nil {
			conn.Close()
		}
	}
	// No password in the node's files or log.
	inst := nodes[0].Inst
	for _, f := range []string{cassandraConfPath(inst), inst.LogPath()} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), c.Password()) {
			t.Errorf("%s holds the password", f)
		}
	}
	st, err := c.Status(ctx)
	if err != nil || fmt.Sprint(st) != "map[node1:UN]" {
		t.Fatalf("status %v, %v", st, err)
	}
	// Node changes this cluster refuses before starting anything. The
	// changes a ring allows (add, decommission, the refusal by a
	// keyspace's copies) are checked on a three-node ring in
	// target/cassandra's TestThreeNodeRing, which starts one anyway.
	if _, err := c.RemoveNode(ctx, "node9"); err == nil || !strings.Contains(err.Error(), `no node "node9"; its nodes are node1`) {
		t.Errorf("removing an unknown node: %v", err)
	}
	if _, err := c.RemoveNode(ctx, "node1"); err == nil || !strings.Contains(err.Error(), "last running node") {
		t.Errorf("removing the last node: %v", err)
	}
	if _, err := c.AddNode(ctx, &Placement{Host: "h1", Address: "10.0.0.2"}); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("adding a lab host to a loopback cluster: %v", err)
	}
	dataDir := inst.DataDir()
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("the data directory %s is still there after Remove (%v)", dataDir, err)
	}
	if _, err := os.Stat(inst.LogPath()); err != nil {
		t.Errorf("the server log is gone: %v", err)
	}
}
