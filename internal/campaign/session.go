package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/hostinfo"
	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/infra/fromspec"
	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/version"
	"github.com/headroom-dev/headroom/internal/workload"
)

// Session is one invocation of `headroom run` or `headroom probe`: a
// results directory and its store, into which each treatment's
// infrastructure, target and facts go (Open). Both commands share it, so
// that a target works, and is recorded, the same way under either.
type Session struct {
	Dir   string
	Store *store.Store
	// Progress hears the infrastructure's lines (bringing hosts up);
	// nil = quiet.
	Progress progress.Reporter
	// Configure, when set, is called with each treatment's spec before its
	// target opens (the command line sizes the Go scheduler to the target
	// type).
	Configure func(*spec.Spec)

	lock *dirLock // held from opening to Close: one writer per directory
}

// SessionOptions tune NewSession.
type SessionOptions struct {
	// Kind names what the session does in its directory's name: ""
	// for a campaign (NAME-STAMP), "probe" for NAME-probe-STAMP.
	Kind string
	// Now names the directory and dates the store; nil = time.Now.
	Now func() time.Time
}

// NewSession creates a new results directory for s under its output
// directory (relative to the spec file), with a copy of the spec and a new
// store that records this machine's facts and Headroom's version.
func NewSession(s *spec.Spec, opt SessionOptions) (*Session, error) {
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	base := s.Output
	if !filepath.IsAbs(base) && s.File != "" {
		base = filepath.Join(filepath.Dir(s.File), base)
	}
	name := s.Name
	if opt.Kind != "" {
		name += "-" + opt.Kind
	}
	dir, err := newResultsDir(base, name, now())
	if err != nil {
		return nil, err
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "spec.yaml"), s.Source, 0o644); err != nil {
		lock.release()
		return nil, fmt.Errorf("writing the spec copy into %s: %w", dir, err)
	}
	st, err := store.Create(filepath.Join(dir, StoreFile), store.Campaign{
		Name: s.Name, SpecFile: s.File, SpecYAML: string(s.Source), Seed: s.Seed,
		HostJSON: hostinfo.Collect().JSON(), ToolVersion: version.Version, CreatedAt: now(),
	})
	if err != nil {
		lock.release()
		return nil, err
	}
	return &Session{Dir: dir, Store: st, lock: lock}, nil
}

// ReopenSession opens the results directory of an earlier session and
// the spec stored in it.
func ReopenSession(dir string) (*Session, *spec.Spec, error) {
	path := filepath.Join(dir, StoreFile)
	if _, err := os.Stat(path); err != nil {
		return nil, nil, fmt.Errorf("%s is not a Headroom results directory (no %s in it); pass the directory that `headroom run` printed", dir, StoreFile)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, nil, err
	}
	st, err := store.Open(path)
	if err != nil {
		lock.release()
		return nil, nil, err
	}
	c, err := st.Campaign()
	if err != nil {
		st.Close()
		lock.release()
		return nil, nil, err
	}
	name := c.SpecFile
	if name == "" {
		name = "spec.yaml"
	}
	s, err := spec.Parse(name, []byte(c.SpecYAML))
	if err != nil {
		st.Close()
		lock.release()
		return nil, nil, fmt.Errorf("the spec stored in %s no longer validates: %w", path, err)
	}
	s.File = c.SpecFile
	return &Session{Dir: dir, Store: st, lock: lock}, s, nil
}

// Close closes the session's store and then releases its directory.
func (ss *Session) Close() error {
	err := ss.Store.Close()
	ss.lock.release()
	return err
}

func newResultsDir(base, name string, t time.Time) (string, error) {
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("cannot create the output directory %s: %w (set output: in the spec, or --output, to a writable place)", base, err)
	}
	stamp := t.Format("20060102-150405")
	for i := 0; i < 100; i++ {
		dir := filepath.Join(base, name+"-"+stamp)
		if i > 0 {
			dir += "-" + strconv.Itoa(i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("cannot create the results directory %s: %w", dir, err)
		}
	}
	return "", fmt.Errorf("cannot find a free results directory name under %s", base)
}

// Treatment is one treatment of a spec as a session opens it: the spec
// itself, named "", when it has no treatments.
type Treatment struct {
	Name  string
	Index int               // position among the campaign's treatments
	Set   []results.Setting // the paths the treatment set, with their values
	Spec  *spec.Spec
}

// Treatments lists s's treatments in campaign order, or s itself as the
// one treatment "".
func Treatments(s *spec.Spec) []Treatment {
	if len(s.Treatments) == 0 {
		return []Treatment{{Spec: s}}
	}
	out := make([]Treatment, 0, len(s.Treatments))
	for i, t := range s.Treatments {
		out = append(out, Treatment{Name: t.Name, Index: i, Set: settingsOf(t), Spec: t.Spec})
	}
	return out
}

// Setup is one treatment's target ready for load: its hosts are up (with
// the target's managed server on its host) and the target is open.
type Setup struct {
	Target   target.Target
	Provider infra.Provider
	Hosts    infra.Hosts
	// Workload is the generator's configuration of the treatment's
	// workload section.
	Workload workload.Config

	spec      *spec.Spec
	treatment string
	st        *store.Store
	limits    *limitLog // writes the hosts' limits as they change
}

// Open brings up the infrastructure t's spec asks for (its lab, or this
// machine) and records it, opens the target on it and records the
// treatment's facts. Setup.Fill then prepares and populates the target;
// Setup.Close undoes it all.
func (ss *Session) Open(ctx context.Context, t Treatment) (_ *Setup, err error) {
	s := t.Spec
	if ss.Configure != nil {
		ss.Configure(s)
	}
	prog := ss.Progress
	if prog == nil {
		prog = progress.Quiet()
	}
	f, ok := registry.Lookup(s.Target.Type)
	if !ok {
		return nil, fmt.Errorf("target.type: unknown target %q", s.Target.Type)
	}
	specDir := ""
	if s.File != "" {
		specDir = filepath.Dir(s.File)
	}
	wcfg, err := WorkloadConfig(s.Workload, specDir)
	if err != nil {
		return nil, err
	}
	prov, err := fromspec.Provider(s)
	if err != nil {
		return nil, err
	}
	su := &Setup{Provider: prov, Workload: wcfg, spec: s, treatment: t.Name, st: ss.Store, limits: newLimitLog(ss.Store)}
	defer func() {
		if err != nil {
			if cerr := su.Close(); cerr != nil {
				err = errors.Join(err, cerr)
			}
		}
	}()
	if su.Hosts, err = prov.Up(ctx, infra.UpOptions{Note: prog.Note, Campaign: s.Name, Results: absDir(ss.Dir)}); err != nil {
		return nil, fmt.Errorf("%s: %w", prov.Name(), err)
	}
	if err := su.describe(); err != nil {
		return nil, err
	}
	if err := su.recordLimits(time.Now(), "up"); err != nil {
		return nil, err
	}
	env := registry.Env{Dir: ss.Dir}
	if !fromspec.Local(prov) {
		// Functions of su, not copies of its hosts: add_node events add
		// hosts while the campaign runs.
		env.Lab = placer(func() infra.Hosts { return su.Hosts })
		env.Hosts = func() []string { return su.Hosts.Names() }
	}
	if err := su.openTarget(f, env); err != nil {
		return nil, err
	}
	if err := RecordTreatment(ss.Store, s, t.Name, t.Index, su, t.Set); err != nil {
		return nil, err
	}
	return su, nil
}

// openTarget opens the target, which starts its managed servers. With
// lab.populate_unthrottled the hosts' limits are lifted while they start,
// as for the population: a node at a tenth of a core (a host scaled down
// so that a cluster fits this machine) would take minutes to start a JVM
// that the instance type it stands for starts in seconds; none of it is
// measured, and the limits are back before the first run.
func (su *Setup) openTarget(f registry.Factory, env registry.Env) (err error) {
	if su.spec.Lab != nil && su.spec.Lab.PopulateUnthrottled {
		if err := su.unthrottle(causeStartUnthrottled); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, su.rethrottle(causeStartDone)) }()
	}
	tg, err := f.Open(su.spec.Target.Options, env)
	if err != nil {
		// Whatever a target's Open returned beside its error is not a
		// target to close: a nil pointer in the interface is not nil.
		return err
	}
	su.Target = tg
	return nil
}

// placer puts managed servers on the provider's hosts for the target
// registry.
func placer(hosts func() infra.Hosts) func(host string) (*deploy.Placement, error) {
	return func(name string) (*deploy.Placement, error) {
		h, err := hosts().Get(name)
		if err != nil {
			return nil, err
		}
		return deploy.On(h), nil
	}
}

// describe records what the provider brought up (the lab's hosts, limits
// and prices), when it describes itself.
func (su *Setup) describe() error {
	d, ok := su.Provider.(infra.Describer)
	if !ok {
		return nil
	}
	kind, detail := d.Describe()
	if kind == "" {
		return nil
	}
	b, err := json.Marshal(detail)
	if err != nil {
		return err
	}
	return su.st.AddEvent(store.Event{Time: time.Now(), Kind: kind, Detail: string(b)})
}

// recordLimits writes the hosts' limits that changed since the last
// record. Only a provider that records what it brought up (a lab) has
// limits to record: this machine has none of its own.
func (su *Setup) recordLimits(at time.Time, cause string) error {
	if _, ok := su.Provider.(infra.Describer); !ok {
		return nil
	}
	return su.limits.record(su.Hosts, at, cause)
}

// Faults are the provider's run-time events, nil when it applies none.
func (su *Setup) Faults() infra.Faulter {
	f, _ := su.Provider.(infra.Faulter)
	return f
}

// Close closes the target (stopping the servers it runs), then releases
// the hosts (a lab this process brought up is taken down unless the spec
// keeps it).
func (su *Setup) Close() error {
	var errs []error
	if su.Target != nil {
		errs = append(errs, su.Target.Close())
		su.Target = nil
	}
	if su.Provider != nil {
		if err := su.Provider.Down(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", su.Provider.Name(), err))
		}
	}
	return errors.Join(errs...)
}

// absDir is dir made absolute where it can be: a lab's owner record is read
// from other directories, where a relative path points nowhere.
func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}
