package deploy

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// nodetool and the node's own tables: how the cluster learns the ring's
// state (Status), runs decommission, and reads what streamed.

// nodetoolLogback keeps nodetool's own log (its JMX client logs at DEBUG
// by default) out of its output.
const nodetoolLogback = `<configuration scan="false">
  <appender name="STDERR" class="ch.qos.logback.core.ConsoleAppender">
    <target>System.err</target>
    <encoder><pattern>%-5level %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="STDERR"/></root>
</configuration>
`

// nodetool runs Cassandra's nodetool (org.apache.cassandra.tools.NodeTool
// from the same jars) against mem's JMX port, as the node's service user
// on this machine, and returns its output.
func (c *CassandraCluster) nodetool(ctx context.Context, mem *cassandraMember, args ...string) (string, error) {
	inst := mem.node.Inst
	host := "127.0.0.1" // JMX listens on loopback only, except on a lab host
	if mem.recipe.jmxRemote {
		host = inst.Host
	}
	jargs := []string{"-Xms32m", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
		"-Djava.net.preferIPv4Stack=true"}
	jargs = append(jargs, cassandraJavaModules...)
	jargs = append(jargs, "-Duser.home="+inst.Dir,
		"-Dlogback.configurationFile=file://"+filepath.Join(inst.Dir, "nodetool-logback.xml"),
		"-cp", c.classpath, "org.apache.cassandra.tools.NodeTool",
		"-h", host, "-p", strconv.Itoa(mem.recipe.jmxPort))
	jargs = append(jargs, args...)
	out, err := inst.RunAs(ctx, c.java, jargs...)
	if err != nil {
		// RunAs quotes the whole java command line; say what ran instead.
		return string(out), fmt.Errorf("nodetool %s on %s: %s", strings.Join(args, " "), mem.node.Name, lastLines(out, 3))
	}
	return string(out), nil
}

// nodetoolStatusRE is one node's line of nodetool status: state (U/D,
// then N/L/J/M) and address.
var nodetoolStatusRE = regexp.MustCompile(`(?m)^([UD][NLJM])\s+(\S+)\s`)

// parseNodetoolStatus maps each address in nodetool status output to its
// two-letter state.
func parseNodetoolStatus(out string) map[string]string {
	st := map[string]string{}
	for _, m := range nodetoolStatusRE.FindAllStringSubmatch(out, -1) {
		addr := m[2]
		if h, _, ok := strings.Cut(addr, ":"); ok && strings.Count(addr, ":") == 1 {
			addr = h // -pp prints address:port
		}
		st[addr] = m[1]
	}
	return st
}

// Status is each node's state as nodetool status on a running member
// says it: UN (up, normal), UJ (joining), UL (leaving), DN (down), ...
// Keys are node names; a node the cluster does not know (one that joined
// by other means) is keyed by its address.
func (c *CassandraCluster) Status(ctx context.Context) (map[string]string, error) {
	c.mu.Lock()
	members := append([]*cassandraMember(nil), c.members...)
	c.mu.Unlock()
	var errs []error
	for _, m := range members {
		if !m.node.Inst.Running() {
			continue
		}
		st, err := c.statusVia(ctx, m)
		if err == nil {
			return st, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("cassandra: no node is running")
	}
	return nil, errors.Join(errs...)
}

// statusVia is Status as one member sees the ring.
func (c *CassandraCluster) statusVia(ctx context.Context, via *cassandraMember) (map[string]string, error) {
	out, err := c.nodetool(ctx, via, "status")
	if err != nil {
		return nil, err
	}
	byAddr := parseNodetoolStatus(out)
	if len(byAddr) == 0 {
		return nil, fmt.Errorf("nodetool status on %s listed no nodes: %s", via.node.Name, lastLines([]byte(out), 3))
	}
	c.mu.Lock()
	names := map[string]string{}
	for _, m := range c.members {
		names[m.node.Inst.Host] = m.node.Name
	}
	c.mu.Unlock()
	st := make(map[string]string, len(byAddr))
	for addr, s := range byAddr {
		if n, ok := names[addr]; ok {
			addr = n
		}
		st[addr] = s
	}
	return st, nil
}

// queryAs runs one statement on mem at ONE, logged in as the workload's
// role, on a connection of its own.
func (c *CassandraCluster) queryAs(ctx context.Context, mem *cassandraMember, stmt string) ([][][]byte, error) {
	conn, err := cqlDial(ctx, mem.node.Inst.Addr(), CassandraUser, c.password)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.query(ctx, stmt, cqlOne)
}

// streamRow is one stream of a node's system_views.streaming table.
type streamRow struct {
	operation      string // Bootstrap, Unbootstrap, Repair, ...
	peers          []string
	received, sent int64
}

// streams reads mem's system_views.streaming (the streams the node took
// part in, kept for days), over CQL as the workload's role.
func (c *CassandraCluster) streams(ctx context.Context, mem *cassandraMember) ([]streamRow, error) {
	rows, err := c.queryAs(ctx, mem, "SELECT operation, peers, bytes_received, bytes_sent FROM system_views.streaming")
	if err != nil {
		return nil, err
	}
	out := make([]streamRow, 0, len(rows))
	for _, r := range rows {
		if len(r) != 4 {
			return nil, fmt.Errorf("cassandra: system_views.streaming answered %d columns, want 4", len(r))
		}
		out = append(out, streamRow{operation: string(r[0]), peers: cqlTextList(r[1]), received: cqlCount(r[2]), sent: cqlCount(r[3])})
	}
	return out, nil
}

// streamed sums the bytes mem received (or sent) in streams of operation;
// errStreamCountUnknown when such a stream has no count.
func (c *CassandraCluster) streamed(ctx context.Context, mem *cassandraMember, operation string, received bool) (int64, error) {
	rows, err := c.streams(ctx, mem)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, r := range rows {
		if strings.EqualFold(r.operation, operation) {
			v := r.sent
			if received {
				v = r.received
			}
			if v < 0 {
				return 0, errStreamCountUnknown
			}
			n += v
		}
	}
	return n, nil
}

// errStreamCountUnknown says a stream's byte count is null.
var errStreamCountUnknown = errors.New("cassandra: a stream without a byte count")

// streamedFrom sums what mem received from the node at addr while it
// left the ring (decommission streams are "Unbootstrap").
func (c *CassandraCluster) streamedFrom(ctx context.Context, mem *cassandraMember, addr string) (int64, error) {
	rows, err := c.streams(ctx, mem)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, r := range rows {
		if !strings.EqualFold(r.operation, "Unbootstrap") {
			continue
		}
		for _, p := range r.peers {
			// Peers are written /address:port.
			if h, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), ":"); h == addr {
				if r.received < 0 {
					return 0, errStreamCountUnknown
				}
				n += r.received
				break
			}
		}
	}
	return n, nil
}

// cqlCount decodes a CQL int or bigint count; -1 for a null.
func cqlCount(b []byte) int64 {
	switch len(b) {
	case 8:
		return int64(binary.BigEndian.Uint64(b))
	case 4:
		return int64(int32(binary.BigEndian.Uint32(b)))
	}
	return -1
}

// cqlTextList decodes a CQL list or set of text.
func cqlTextList(b []byte) []string {
	if len(b) < 4 {
		return nil
	}
	n := int(binary.BigEndian.Uint32(b))
	b = b[4:]
	var out []string
	for i := 0; i < n; i++ {
		var v []byte
		v, b = cqlTakeBytes(b)
		if b == nil && v == nil {
			break
		}
		out = append(out, string(v))
	}
	return out
}

// keyspaceCopies is how many copies of each row a keyspace keeps: its
// replication_factor, or the sum over data centres.
type keyspaceCopies struct {
	name   string
	copies int
}

// replication reads the replication of the ring's keyspaces other than
// Cassandra's own (system*), over CQL through mem.
func (c *CassandraCluster) replication(ctx context.Context, mem *cassandraMember) ([]keyspaceCopies, error) {
	rows, err := c.queryAs(ctx, mem, "SELECT keyspace_name, replication FROM system_schema.keyspaces")
	if err != nil {
		return nil, err
	}
	var out []keyspaceCopies
	for _, r := range rows {
		if len(r) != 2 {
			return nil, fmt.Errorf("cassandra: system_schema.keyspaces answered %d columns, want 2", len(r))
		}
		name := string(r[0])
		if strings.HasPrefix(name, "system") {
			continue
		}
		out = append(out, keyspaceCopies{name: name, copies: replicationCopies(cqlTextMap(r[1]))})
	}
	return out, nil
}

// replicationCopies sums a replication map's counts: replication_factor
// for SimpleStrategy, one entry per data centre for
// NetworkTopologyStrategy ("3", or "3/1" with transient replicas).
func replicationCopies(m map[string]string) int {
	n := 0
	for k, v := range m {
		if k == "class" {
			continue
		}
		full, _, _ := strings.Cut(v, "/")
		if x, err := strconv.Atoi(full); err == nil {
			n += x
		}
	}
	return n
}

// cqlTextMap decodes a CQL map<text, text> value: an entry count, then
// each key and value as [bytes].
func cqlTextMap(b []byte) map[string]string {
	if len(b) < 4 {
		return nil
	}
	n := int(binary.BigEndian.Uint32(b))
	b = b[4:]
	out := map[string]string{}
	for i := 0; i < n; i++ {
		var k, v []byte
		k, b = cqlTakeBytes(b)
		if b == nil {
			break
		}
		v, b = cqlTakeBytes(b)
		out[string(k)] = string(v)
		if b == nil {
			break
		}
	}
	return out
}
