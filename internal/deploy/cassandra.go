package deploy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The Cassandra recipe: one Apache Cassandra node (CassandraDaemon from
// the cassandra-all jars on Maven Central, deps/jars/cassandra) per
// Instance, run by CassandraCluster (cassandra_cluster.go), which knows the
// ring the node joins. Init writes Dir/cassandra.yaml:
//
//   - cluster_name, listen_address = rpc_address = the node's address
//     (its lab host's, or 127.0.0.N on this machine: Cassandra needs a
//     distinct address per node for its storage port), the cluster's
//     storage and native (CQL) ports, the seeds the cluster gives;
//   - data, commitlog, saved_caches, hints and cdc_raw directories under
//     the instance's data directory (on the lab host's volume when placed);
//   - PasswordAuthenticator: the cluster creates the workload's role with a
//     generated password and drops the default cassandra role;
//   - num_tokens 16 with token allocation for replication factor 3, which
//     spreads 3-8 node rings evenly without 256 vnodes per node;
//   - then every managed.settings key as a top-level cassandra.yaml line
//     (a setting replaces the default of the same name; see
//     CheckCassandraSettings for what Headroom sets itself), except
//     max_heap_size, which sizes the JVM heap (cassandraHeapMiB).
//
// The node runs in the foreground with a logback configuration of its own
// that logs INFO to stdout (server.log).

// cassandraNode is the recipe of one node of a cluster.
type cassandraNode struct {
	name      string   // node1, node2, ...
	cluster   string   // cluster_name
	seeds     []string // addresses of the seed nodes
	storage   int      // storage (internode) port, the same on every node
	jmxPort   int      // JMX port nodetool connects to
	jmxRemote bool     // JMX on every address (lab host) instead of loopback only
	heapMiB   int
	authRF    int // system_auth's replication factor when this node creates it
	// ringDelay is cassandra.ring_delay_ms: how long a new node waits for
	// the ring's state, and how long its first gossip with a seed may take.
	ringDelay time.Duration
	java      string
	classpath string

	mu        sync.Mutex
	listening time.Time // first time the storage port accepted a connection
}

func (*cassandraNode) Kind() string { return "cassandra" }

// User is the account the node runs as; Debian has no cassandra user
// without the (absent) package, so Start falls back to nobody.
func (*cassandraNode) User() string { return "cassandra" }

func (n *cassandraNode) Binaries() []Binary {
	var dirs []string
	if h := os.Getenv("JAVA_HOME"); h != "" {
		dirs = append(dirs, filepath.Join(h, "bin"))
	}
	return []Binary{{Name: "java", Dirs: dirs, Package: "openjdk-17-jre-headless"}}
}

// cassandraReserved are the cassandra.yaml keys Headroom sets itself.
var cassandraReserved = map[string]string{
	"cluster_name":                     "every node of a managed cluster shares Headroom's cluster name",
	"listen_address":                   "the node listens on its host's address",
	"listen_interface":                 "the node listens on its host's address",
	"rpc_address":                      "the node listens on its host's address",
	"rpc_interface":                    "the node listens on its host's address",
	"broadcast_address":                "the node listens on its host's address",
	"broadcast_rpc_address":            "the node listens on its host's address",
	"seed_provider":                    "the cluster names its seeds",
	"storage_port":                     "the cluster picks its ports",
	"ssl_storage_port":                 "the cluster picks its ports",
	"native_transport_port":            "set managed.port instead",
	"data_file_directories":            "the data is in the instance's data directory",
	"commitlog_directory":              "the data is in the instance's data directory",
	"saved_caches_directory":           "the data is in the instance's data directory",
	"hints_directory":                  "the data is in the instance's data directory",
	"cdc_raw_directory":                "the data is in the instance's data directory",
	"local_system_data_file_directory": "the data is in the instance's data directory",
	"authenticator":                    "Headroom logs in with a generated password",
	"role_manager":                     "Headroom creates the workload's role",
	"start_native_transport":           "the workload connects over CQL",
	"partitioner":                      "the partitioner cannot change once data is written",
}

// cassandraDefaults are the cassandra.yaml lines a setting of the same name
// replaces: a small node that starts fast, as a cloud instance of the
// lab's catalog would run it.
var cassandraDefaults = [][2]string{
	{"num_tokens", "16"},
	{"allocate_tokens_for_local_replication_factor", "3"},
	{"endpoint_snitch", "SimpleSnitch"},
	{"authorizer", "AllowAllAuthorizer"},
	{"commitlog_sync", "periodic"},
	{"commitlog_sync_period", "10000ms"},
	{"concurrent_compactors", "1"},
	{"key_cache_size", "16MiB"},
	{"counter_cache_size", "4MiB"},
	{"file_cache_size", "64MiB"},
	{"memtable_heap_space", "64MiB"},
	{"memtable_offheap_space", "64MiB"},
}

// cassandraHeapSetting is the one managed.settings key that is not a
// cassandra.yaml line: the JVM heap ("512M", "1G"), as MAX_HEAP_SIZE of
// Cassandra's own cassandra-env.sh.
const cassandraHeapSetting = "max_heap_size"

var (
	cassandraKeyRE  = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	cassandraHeapRE = regexp.MustCompile(`^([0-9]+)([MmGg])$`)
)

// CheckCassandraSettings reports the first managed.settings entry that
// cannot be written to cassandra.yaml: a key that is not a top-level
// cassandra.yaml name, a value that is not one line, a setting Headroom
// controls, or a max_heap_size that is not a size in M or G. Targets call
// it from their Validate.
func CheckCassandraSettings(settings map[string]string) error {
	for _, k := range sortedKeys(settings) {
		v := settings[k]
		if !cassandraKeyRE.MatchString(k) {
			return fmt.Errorf("managed.settings: %q is not a cassandra.yaml setting name; use a top-level name such as concurrent_writes", truncateName(k))
		}
		if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return fmt.Errorf("managed.settings.%s: the value must be one line without control characters", k)
		}
		if why, ok := cassandraReserved[k]; ok {
			return fmt.Errorf("managed.settings.%s: Headroom sets this itself (%s); remove it", k, why)
		}
		if k == cassandraHeapSetting {
			if _, err := parseHeapMiB(v); err != nil {
				return fmt.Errorf("managed.settings.%s: %v", k, err)
			}
		}
	}
	return nil
}

// parseHeapMiB reads a heap size such as 512M or 2G.
func parseHeapMiB(v string) (int, error) {
	m := cassandraHeapRE.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return 0, fmt.Errorf("%q is not a heap size; write it as 512M or 2G", v)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, fmt.Errorf("%q is not a heap size; write it as 512M or 2G", v)
	}
	if strings.EqualFold(m[2], "G") {
		n *= 1024
	}
	if n < 128 || n > 64<<10 {
		return 0, fmt.Errorf("%s is outside 128M..64G", v)
	}
	return n, nil
}

// cassandraHeapMiB is the node's heap: max_heap_size when set; on a lab
// host, Cassandra's own rule over the host's memory limit,
// max(min(mem/2, 1 GiB), min(mem/4, 8 GiB)) (cassandra-env.sh), but at
// most mem - 320 MiB (at least 128 MiB): a node with a 256 MiB heap
// measured 470 MiB resident, and a host's limit counts all of it; on this
// machine, 512 MiB, so three nodes and the load generator share a small
// machine.
func cassandraHeapMiB(settings map[string]string, p *Placement) int {
	if v, ok := settings[cassandraHeapSetting]; ok {
		if n, err := parseHeapMiB(v); err == nil {
			return n
		}
	}
	if p != nil && p.on != nil {
		if c, ok := p.on.(oomCounter); ok {
			if _, mib, ok := c.OOMKills(); ok && mib > 0 {
				heap := max(min(mib/2, 1024), min(mib/4, 8192))
				return int(max(min(heap, mib-cassandraOffHeapMiB), 128))
			}
		}
	}
	return 512
}

// cassandraOffHeapMiB is what a node takes besides its heap (metaspace,
// thread stacks, direct buffers, the chunk cache), kept free of a lab
// host's memory limit.
const cassandraOffHeapMiB = 320

func cassandraConfPath(inst *Instance) string { return filepath.Join(inst.Dir, "cassandra.yaml") }
func cassandraLogbackPath(inst *Instance) string {
	return filepath.Join(inst.Dir, "logback.xml")
}

// cassandraLogback logs INFO and above to stdout, which Start sends to
// server.log; Cassandra's own configuration writes rotating files instead.
const cassandraLogback = `<configuration scan="false">
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="STDOUT"/></root>
</configuration>
`

func (n *cassandraNode) Init(_ context.Context, inst *Instance) error {
	if err := CheckCassandraSettings(inst.Settings); err != nil {
		return err
	}
	data := inst.DataDir()
	for _, d := range []string{"data", "commitlog", "saved_caches", "hints", "cdc_raw"} {
		if err := os.MkdirAll(filepath.Join(data, d), 0o750); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(inst.Dir, "tmp"), 0o750); err != nil {
		return err
	}
	seeds := make([]string, len(n.seeds))
	for i, s := range n.seeds {
		seeds[i] = net.JoinHostPort(s, strconv.Itoa(n.storage))
	}
	var b strings.Builder
	b.WriteString("# Written by Headroom for a managed Cassandra node (internal/deploy/cassandra.go).\n")
	fmt.Fprintf(&b, "cluster_name: %q\n", n.cluster)
	fmt.Fprintf(&b, "listen_address: %s\nrpc_address: %s\n", inst.Host, inst.Host)
	fmt.Fprintf(&b, "storage_port: %d\nnative_transport_port: %d\nstart_native_transport: true\n", n.storage, inst.Port)
	b.WriteString("seed_provider:\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n    parameters:\n")
	fmt.Fprintf(&b, "      - seeds: %q\n", strings.Join(seeds, ","))
	b.WriteString("partitioner: org.apache.cassandra.dht.Murmur3Partitioner\n")
	fmt.Fprintf(&b, "data_file_directories:\n  - %q\n", filepath.Join(data, "data"))
	for _, d := range []string{"commitlog", "saved_caches", "hints", "cdc_raw"} {
		fmt.Fprintf(&b, "%s_directory: %q\n", d, filepath.Join(data, d))
	}
	b.WriteString("authenticator: PasswordAuthenticator\nrole_manager: CassandraRoleManager\n")
	for _, d := range cassandraDefaults {
		if _, ok := inst.Settings[d[0]]; !ok {
			fmt.Fprintf(&b, "%s: %s\n", d[0], d[1])
		}
	}
	if len(inst.Settings) > 0 {
		b.WriteString("# managed.settings\n")
	}
	for _, k := range sortedKeys(inst.Settings) {
		if k != cassandraHeapSetting {
			fmt.Fprintf(&b, "%s: %s\n", k, inst.Settings[k])
		}
	}
	if err := os.WriteFile(cassandraConfPath(inst), []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(cassandraLogbackPath(inst), []byte(cassandraLogback), 0o644)
}

// cassandraJavaModules are the module exports and opens Cassandra 5.0 needs
// on Java 17, each found by starting the node without it:
//
//   - java.base/sun.nio.ch (opens): FileUtils cleans direct buffers through
//     sun.nio.ch.DirectBuffer, and the commit log reads FileChannelImpl.fd;
//   - java.base/jdk.internal.ref (exports): the cleaner of those buffers;
//   - java.rmi/sun.rmi.registry (exports): the JMX registry nodetool uses
//     subclasses RegistryImpl;
//   - java.base/java.io (opens): FileDescriptor.fd, for fsync of
//     directories and posix_fadvise on sstables.
//
// nodetool (cassandra_tool.go) needs the same.
var cassandraJavaModules = []string{
	"--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
	"--add-exports", "java.base/jdk.internal.ref=ALL-UNNAMED",
	"--add-exports", "java.rmi/sun.rmi.registry=ALL-UNNAMED",
	"--add-opens", "java.base/java.io=ALL-UNNAMED",
}

func (n *cassandraNode) Command(inst *Instance) (string, []string) {
	heap := strconv.Itoa(n.heapMiB) + "M"
	args := []string{
		"-Xms" + heap, "-Xmx" + heap,
		// Cassandra's own defaults: small thread stacks (it runs hundreds
		// of threads), G1, and stop on OutOfMemoryError rather than run on
		// with a heap in an unknown state.
		"-Xss256k", "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError",
		// No hsperfdata file in /tmp per node.
		"-XX:-UsePerfData",
		"-Djava.net.preferIPv4Stack=true",
		// Cassandra installs a security manager for user functions:
		// allow says that is intended (Java 17 warns otherwise).
		"-Djava.security.manager=allow",
	}
	args = append(args, cassandraJavaModules...)
	args = append(args,
		"-Djava.io.tmpdir="+filepath.Join(inst.Dir, "tmp"),
		"-Duser.home="+inst.Dir,
		"-Dcassandra.config=file://"+cassandraConfPath(inst),
		"-Dlogback.configurationFile=file://"+cassandraLogbackPath(inst),
		"-Dcassandra.logdir="+inst.Dir,
		// Without it the daemon closes stdout and stderr once started,
		// and server.log ends there.
		"-Dcassandra-foreground=yes",
		// A new node waits ring_delay for the ring's state to reach it
		// (30 s by default); see cassandraRingDelay.
		"-Dcassandra.ring_delay_ms="+strconv.FormatInt(max(n.ringDelay, time.Second).Milliseconds(), 10),
		"-Dcassandra.skip_wait_for_gossip_to_settle=0",
		// The default superuser is tried after 1 s instead of 10 s (and
		// again every second until system_auth has a quorum); the
		// cluster replaces it with the workload's role.
		"-Dcassandra.superuser_setup_delay_ms=1000",
		"-Dcassandra.system_auth.default_rf="+strconv.Itoa(max(n.authRF, 1)),
	)
	if n.jmxRemote {
		// On a lab host the address is the host's own; nodetool reaches
		// it from this machine over the lab bridge.
		p := strconv.Itoa(n.jmxPort)
		args = append(args, "-Dcassandra.jmx.remote.port="+p, "-Dcom.sun.management.jmxremote.rmi.port="+p,
			"-Djava.rmi.server.hostname="+inst.Host, "-Dcom.sun.management.jmxremote.authenticate=false",
			"-Dcom.sun.management.jmxremote.ssl=false")
	} else {
		// Loopback only (127.0.0.1), a port per node.
		args = append(args, "-Dcassandra.jmx.local.port="+strconv.Itoa(n.jmxPort))
	}
	args = append(args, "-cp", n.classpath, "org.apache.cassandra.service.CassandraDaemon")
	return n.java, args
}

// Ready returns nil once the node's native port answers a CQL STARTUP,
// which Cassandra opens only after the node has joined the ring (a new
// node streams its ranges first). It also notes when the storage port
// first accepted a connection: the node is up and gossiping.
func (n *cassandraNode) Ready(ctx context.Context, inst *Instance) error {
	n.mu.Lock()
	seen := !n.listening.IsZero()
	n.mu.Unlock()
	if !seen {
		d := net.Dialer{Timeout: time.Second}
		if c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(inst.Host, strconv.Itoa(n.storage))); err == nil {
			c.Close()
			n.mu.Lock()
			n.listening = time.Now()
			n.mu.Unlock()
		}
	}
	return cqlProbe(ctx, inst.Addr())
}

// listeningSince is when the storage port first answered (zero: not yet).
func (n *cassandraNode) listeningSince() time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.listening
}

// cqlProbe checks that a native port answers STARTUP with READY or a
// request to log in.
func cqlProbe(ctx context.Context, addr string) error {
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c, err := cqlDial(pctx, addr, "", "")
	if err == nil {
		c.Close()
		return nil
	}
	if errors.Is(err, errCQLLoginNeeded) {
		return nil
	}
	return err
}
