package cassandra

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"go.yaml.in/yaml/v3"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string // error prefix; "" = valid
	}{
		{"defaults", func(*Options) {}, ""},
		{"hosts", func(o *Options) { o.Hosts = []string{"10.0.0.5", "10.0.0.6:9043", "db.example.com"} }, ""},
		{"bad host", func(o *Options) { o.Hosts = []string{"10.0.0.5:"} }, "hosts: port"},
		{"bad port", func(o *Options) { o.Hosts = []string{"h:99999"} }, "hosts: port \"99999\""},
		{"keyspace", func(o *Options) { o.Keyspace = "my-ks" }, "keyspace: \"my-ks\" is not a CQL name"},
		{"table", func(o *Options) { o.Table = "1t" }, "table: \"1t\" is not a CQL name"},
		{"level name", func(o *Options) { o.ReadConsistency = "MOST" }, "read_consistency: \"MOST\" is not a consistency level"},
		{"lower case", func(o *Options) { o.ReadConsistency, o.WriteConsistency = "local_quorum", "each_quorum" }, ""},
		{"any read", func(o *Options) { o.ReadConsistency = "ANY" }, "read_consistency: ANY is for writes only"},
		{"any write", func(o *Options) { o.WriteConsistency = "ANY" }, ""},
		{"both at once", func(o *Options) { o.Consistency = "one" }, ""},
		{"both with one of them", func(o *Options) { o.Consistency, o.ReadConsistency = "ONE", "ALL" }, "consistency: sets both read_consistency and write_consistency"},
		{"both any", func(o *Options) { o.Consistency = "ANY" }, "consistency: ANY is for writes only"},
		{"both three on rf 2", func(o *Options) { o.ReplicationFactor, o.Consistency = 2, "THREE" }, "consistency: THREE waits for 3 replicas but the keyspace keeps 2"},
		{"three on rf 2", func(o *Options) { o.ReplicationFactor, o.WriteConsistency = 2, "THREE" }, "write_consistency: THREE waits for 3 replicas but the keyspace keeps 2"},
		{"all on rf 2", func(o *Options) { o.ReplicationFactor, o.ReadConsistency = 2, "ALL" }, ""},
		{"rf", func(o *Options) { o.ReplicationFactor = -1 }, "replication_factor: -1 is outside"},
		{"timeout", func(o *Options) { o.Timeout.Duration = 0 }, "timeout: must be at least 1ms"},
		{"connections", func(o *Options) { o.ConnectionsPerHost = 0 }, "connections_per_host: must be 1 to 64"},
		{"protocol", func(o *Options) { o.ProtocolVersion = 6 }, "protocol_version: 6 is not a CQL protocol version"},
		{"populate", func(o *Options) { o.PopulateConcurrency = 0 }, "populate_concurrency: must be 1 to 1024"},
		{"two passwords", func(o *Options) { o.User, o.PasswordEnv, o.PasswordFile = "u", "P", "f" }, "password_env: give either"},
		{"password without user", func(o *Options) { o.PasswordEnv = "P" }, "user: a password is set but no user"},
		{"managed", func(o *Options) { o.Managed = &deploy.Managed{} }, ""},
		{"managed hosts", func(o *Options) { o.Managed, o.Hosts = &deploy.Managed{}, []string{"h"} }, "hosts: a managed cluster has its own addresses"},
		{"managed rf", func(o *Options) { o.Managed, o.ReplicationFactor = &deploy.Managed{}, 1 }, "replication_factor: a managed cluster's replication factor is managed.cluster.replication_factor"},
		{"managed single node two", func(o *Options) { o.Managed, o.ReadConsistency = &deploy.Managed{}, "TWO" }, "read_consistency: TWO waits for 2 replicas but the keyspace keeps 1"},
		{"managed ring quorum", func(o *Options) {
			o.Managed = &deploy.Managed{Cluster: &deploy.Cluster{Nodes: 5}}
			o.ReadConsistency, o.WriteConsistency = "THREE", "ALL"
		}, ""},
		{"managed ring rf 2", func(o *Options) {
			o.Managed = &deploy.Managed{Cluster: &deploy.Cluster{Nodes: 5, ReplicationFactor: 2}}
			o.ReadConsistency = "THREE"
		}, "read_consistency: THREE waits for 3 replicas but the keyspace keeps 2"},
		{"managed settings", func(o *Options) {
			o.Managed = &deploy.Managed{Settings: map[string]string{"authenticator": "AllowAllAuthenticator"}}
		}, "managed.settings.authenticator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := defaultOptions()
			tc.edit(o)
			err := validate(o)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("error %v, want one starting %q", err, tc.want)
			}
		})
	}
}

// A load agent's view of a managed ring: the coordinator's node address
// as the one contact point, the ring's replication factor kept (2 of 4
// nodes, not min(3, nodes)), nothing managed left, and the options valid
// once the agent has put the generated role's user and password in.
func TestForAgent(t *testing.T) {
	o := defaultOptions()
	o.Managed = &deploy.Managed{Cluster: &deploy.Cluster{Nodes: 4, ReplicationFactor: 2}}
	o.ReadConsistency = "TWO"
	if err := o.ForAgent("10.9.0.2:9042"); err != nil {
		t.Fatal(err)
	}
	if o.Managed != nil || len(o.Hosts) != 1 || o.Hosts[0] != "10.9.0.2:9042" || o.ReplicationFactor != 2 {
		t.Fatalf("agent options: managed %v, hosts %v, replication_factor %d; want none, [10.9.0.2:9042], 2", o.Managed, o.Hosts, o.ReplicationFactor)
	}
	if got := o.contactPoints(); len(got) != 1 || got[0] != "10.9.0.2:9042" {
		t.Errorf("contact points %v", got)
	}
	o.User, o.PasswordEnv = deploy.CassandraUser, "HEADROOM_AGENT_TARGET_PASSWORD"
	if err := validate(o); err != nil {
		t.Errorf("the agent's options do not validate: %v", err)
	}

	single := defaultOptions()
	single.Managed = &deploy.Managed{}
	if err := single.ForAgent(""); err == nil || !strings.Contains(err.Error(), "no address the agent can dial") {
		t.Errorf("a managed node without an address: %v", err)
	}
	plain := defaultOptions()
	plain.Hosts = []string{"db.example.com"}
	if err := plain.ForAgent("10.9.0.2:9042"); err != nil || plain.Hosts[0] != "db.example.com" {
		t.Errorf("an existing cluster's options must stay as they are: %v, hosts %v", err, plain.Hosts)
	}
}

// The replicas each level waits for, as the table in consistency.go says.
func TestReplicasNeeded(t *testing.T) {
	for _, tc := range []struct {
		level string
		rf    int
		want  int
	}{
		{"ANY", 3, 0}, {"ONE", 3, 1}, {"LOCAL_ONE", 3, 1}, {"TWO", 3, 2}, {"THREE", 5, 3},
		{"QUORUM", 1, 1}, {"QUORUM", 2, 2}, {"QUORUM", 3, 2}, {"QUORUM", 4, 3}, {"QUORUM", 5, 3},
		{"LOCAL_QUORUM", 3, 2}, {"EACH_QUORUM", 3, 2}, {"ALL", 1, 1}, {"ALL", 5, 5},
	} {
		c, err := parseLevel("write_consistency", tc.level, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := replicasNeeded(c, tc.rf); got != tc.want {
			t.Errorf("%s at rf %d waits for %d replicas, want %d", tc.level, tc.rf, got, tc.want)
		}
	}
}

// Driver errors get their kinds; context errors pass through.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&gocql.RequestErrUnavailable{Consistency: gocql.All, Required: 3, Alive: 2}, KindUnavailable},
		{&gocql.RequestErrWriteTimeout{}, KindWriteTimeout},
		{&gocql.RequestErrReadTimeout{}, KindReadTimeout},
		{&gocql.RequestErrOverloaded{}, KindOverloaded},
		{&gocql.RequestErrWriteFailure{}, KindWriteFailure},
		{&gocql.RequestErrReadFailure{}, KindReadFailure},
		{&gocql.RequestErrBootstrapping{}, target.KindBusy},
		{fmt.Errorf("wrapped: %w", &gocql.RequestErrUnavailable{}), KindUnavailable},
		{gocql.ErrTimeoutNoResponse, target.KindTimeout},
		{gocql.ErrNoStreams, target.KindBusy},
		{gocql.ErrNoConnections, target.KindConnection},
		{gocql.ErrConnectionClosed, target.KindConnection},
		{errors.New("something else"), "error"},
	} {
		if got := kindOfErr(classify(tc.err)); got != tc.want {
			t.Errorf("%T %v: kind %q, want %q", tc.err, tc.err, got, tc.want)
		}
	}
	if err := classify(context.DeadlineExceeded); err != context.DeadlineExceeded {
		t.Fatalf("a context error was wrapped: %v", err)
	}
}

func TestStatements(t *testing.T) {
	s := newStatements("usertable", []string{"field0", "field1"})
	for got, want := range map[string]string{
		s.readAll:      "SELECT field0, field1 FROM usertable WHERE y_id = ?",
		s.readOne[1]:   "SELECT field1 FROM usertable WHERE y_id = ?",
		s.updateAll:    "UPDATE usertable SET field0 = ?, field1 = ? WHERE y_id = ?",
		s.updateOne[0]: "UPDATE usertable SET field0 = ? WHERE y_id = ?",
		s.insert:       "INSERT INTO usertable (y_id, field0, field1) VALUES (?, ?, ?)",
		s.scanAll:      "SELECT field0, field1 FROM usertable WHERE token(y_id) >= token(?) LIMIT ?",
		s.scanOne[1]:   "SELECT field1 FROM usertable WHERE token(y_id) >= token(?) LIMIT ?",
	} {
		if got != want {
			t.Errorf("statement %q, want %q", got, want)
		}
	}
}

// The options decode from a spec's target section with the spec's own
// decoder, a cluster block included, and the registry's cluster modes are
// what the spec checks against.
func TestSpecDecoding(t *testing.T) {
	decode := func(src string) (*Options, spec.Errors) {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(src), &n); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Target spec.Target `yaml:"target"`
		}
		errs := spec.DecodeNode("spec.yaml", &n, "", &doc)
		o, _ := doc.Target.Options.(*Options)
		return o, errs
	}
	o, errs := decode(`
target:
  type: cassandra
  read_consistency: ONE
  write_consistency: ALL
  managed:
    settings: {max_heap_size: 512M}
    cluster: {nodes: 3, replication_factor: 3, hosts: db}
`)
	if errs != nil {
		t.Fatal(errs)
	}
	if o.ReadConsistency != "ONE" || o.WriteConsistency != "ALL" || o.Managed.Cluster.Nodes != 3 || o.Managed.Cluster.Hosts != "db" ||
		o.Keyspace != "headroom" || o.Table != "usertable" || o.ConnectionsPerHost != 2 {
		t.Fatalf("decoded %+v", o)
	}
	_, errs = decode("target:\n  type: cassandra\n  managed:\n    cluster: {nodes: 3, mode: cluster}\n")
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, `"cluster" is not a cassandra cluster mode; use one of: ring`) {
		t.Fatalf("errors %v", errs)
	}
	_, errs = decode("target:\n  type: cassandra\n  password: hunter2\n")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "password") {
		t.Fatalf("a literal password: %v", errs)
	}
}

func TestRegistered(t *testing.T) {
	f, ok := registry.Lookup("cassandra")
	if !ok || f.InProcess || len(f.ClusterModes) != 1 || f.ClusterModes[0] != "ring" {
		t.Fatalf("cassandra factory %+v registered %v", f, ok)
	}
	if _, ok := f.NewOptions().(*Options); !ok {
		t.Fatal("NewOptions is not *Options")
	}
}

// The capabilities the campaign looks for are there on a managed target.
var (
	_ target.ServerProcesses = (*Managed)(nil)
	_ target.Ephemeral       = (*Managed)(nil)
	_ target.NodeScaler      = (*Managed)(nil)
	_ target.Addresser       = (*Target)(nil)
	_ target.Loader          = (*client)(nil)
)
