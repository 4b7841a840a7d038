// Package registry maps target type names from the spec ("sqlite", "null",
// ...) to their option types and constructors, so that the spec package can
// validate a target section and the runner can open it without either one
// importing concrete targets.
package registry

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/target"
)

// Env is what a target may use from the campaign it runs in.
type Env struct {
	// Dir is the campaign's results directory; relative paths in target
	// options are resolved against it.
	Dir string
	// Lab places a managed server on a lab host (managed.host); nil when
	// the campaign has no lab.
	Lab func(host string) (*deploy.Placement, error)
	// Hosts lists the lab's hosts in their defined order, including hosts
	// added while the campaign runs; nil when the campaign has no lab.
	Hosts func() []string
}

// ClusterPlacements returns m with the placements of its cluster's nodes
// filled in from cluster.hosts (a lab host name prefix: the first
// cluster.nodes lab hosts whose names start with it); m itself is not
// changed. Without cluster.hosts the nodes stay on this machine.
func (e Env) ClusterPlacements(m *deploy.Managed) (*deploy.Managed, error) {
	if m == nil || m.Cluster == nil {
		return m, nil
	}
	if m.Host != "" {
		return nil, fmt.Errorf("managed.host: a cluster's nodes are placed by managed.cluster.hosts (a lab host name prefix); remove managed.host")
	}
	c := *m.Cluster
	c.Placements = nil
	if c.Hosts == "" {
		out := *m
		out.Cluster = &c
		return &out, nil
	}
	if e.Lab == nil || e.Hosts == nil {
		return nil, fmt.Errorf("managed.cluster.hosts: %q names lab hosts, but the spec has no lab: section; add hosts named %s1, %s2, ... to lab.hosts, or remove cluster.hosts to run the nodes on this machine", c.Hosts, c.Hosts, c.Hosts)
	}
	var names []string
	for _, h := range e.Hosts() {
		if strings.HasPrefix(h, c.Hosts) {
			names = append(names, h)
		}
	}
	if len(names) < c.NodeCount() {
		return nil, fmt.Errorf("managed.cluster.hosts: %d lab hosts start with %q (%s) but the cluster has %d nodes; add hosts to lab.hosts or lower cluster.nodes", len(names), c.Hosts, strings.Join(names, ", "), c.NodeCount())
	}
	for _, name := range names[:c.NodeCount()] {
		p, err := e.Lab(name)
		if err != nil {
			return nil, fmt.Errorf("managed.cluster.hosts: %w", err)
		}
		c.Placements = append(c.Placements, p)
	}
	out := *m
	out.Cluster = &c
	return &out, nil
}

// Managed returns m with its placement on a lab host filled in when it
// names one (managed.host); m itself is not changed.
func (e Env) Managed(m *deploy.Managed) (*deploy.Managed, error) {
	if m == nil || m.Host == "" {
		return m, nil
	}
	if e.Lab == nil {
		return nil, fmt.Errorf("managed.host: %q names a lab host, but the spec has no lab: section; add one with that host, or remove managed.host to run the server on this machine", m.Host)
	}
	p, err := e.Lab(m.Host)
	if err != nil {
		return nil, fmt.Errorf("managed.host: %w", err)
	}
	c := *m
	c.Placement = p
	return &c, nil
}

// InstanceDir is where a target keeps a new managed server instance of kind
// (see deploy.InstanceDir).
func (e Env) InstanceDir(kind string) string { return deploy.InstanceDir(e.Dir, kind) }

// Factory describes one target type.
type Factory struct {
	Name string
	// Summary is one line for `headroom targets` and error messages.
	Summary string
	// InProcess is true for a target that runs inside the Headroom process
	// (embedded SQLite): its CPU use counts as the client's, which reports
	// must say when they judge the client.
	InProcess bool
	// NewOptions returns a pointer to the target's option struct filled with
	// defaults; the spec decoder fills it strictly from the target section
	// (every key except "type"). The struct uses `yaml` tags.
	NewOptions func() any
	// Validate checks decoded options; it returns an error naming the field
	// (without the "target." prefix) and the fix. Nil means no checks.
	Validate func(opts any) error
	// Open creates the target from validated options.
	Open func(opts any, env Env) (target.Target, error)
	// ClusterModes are the managed.cluster modes the target runs, its
	// default first; nil = it runs one server only (deploy.CheckCluster).
	ClusterModes []string
	// ScalesNodes is true for a target whose own tier grows and shrinks
	// without managed.cluster (the apptier target's application servers):
	// add_node and remove_node events apply to it.
	ScalesNodes bool
	// TierPrefix, for a ScalesNodes target, is the lab host name prefix
	// of the tier that grows with a lab.hosts entry's count (the apptier
	// target's app.prefix; "" when the options list hosts by name):
	// headroom assess --verify scales the tier out through that count.
	TierPrefix func(opts any) string
}

var (
	mu        sync.RWMutex
	factories = map[string]Factory{}
)

// Register adds a target type; it is called from the target packages' init.
func Register(f Factory) {
	mu.Lock()
	defer mu.Unlock()
	factories[f.Name] = f
}

// Lookup returns the factory for a type name.
func Lookup(name string) (Factory, bool) {
	mu.RLock()
	defer mu.RUnlock()
	f, ok := factories[name]
	return f, ok
}

// Names lists the registered type names, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(factories))
	for n := range factories {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ManagedOf returns the managed-server settings held in a target's options
// (every managed target's options have a Managed *deploy.Managed field);
// nil when the options have none or it is not set.
func ManagedOf(opts any) *deploy.Managed {
	if opts == nil {
		return nil
	}
	v := reflect.ValueOf(opts)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	f := v.FieldByName("Managed")
	if !f.IsValid() || !f.CanInterface() {
		return nil
	}
	m, _ := f.Interface().(*deploy.Managed)
	return m
}

// ManagedHost is the lab host a target's managed server runs on ("" when
// it has none).
func ManagedHost(opts any) string {
	if m := ManagedOf(opts); m != nil {
		return m.Host
	}
	return ""
}
