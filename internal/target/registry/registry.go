// Package registry maps target type names from the spec ("sqlite", "null",
// ...) to their option types and constructors, so that the spec package can
// validate a target section and the runner can open it without either one
// importing concrete targets.
package registry

import (
	"fmt"
	"reflect"
	"sort"
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
