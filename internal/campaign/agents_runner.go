package campaign

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/headroom-dev/headroom/internal/agent"
	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

// AgentRunner runs a load agent's shares (`headroom agent`): it reads the
// order's spec and treatment for the target and workload, points the
// target at the address the coordinator gives (never starting a managed
// server of its own) and runs the load engine on its share.
type AgentRunner struct {
	// Dir is a scratch directory for targets that keep files.
	Dir string
	// AllowEnv names the environment variables the agent's operator lets
	// an order's target options name (`headroom agent --allow-env`): a
	// coordinator decides the spec, so without this a spec could have the
	// agent send any of its variables (its secrets) to any address.
	AllowEnv []string
}

// Prepare implements agent.Runner.
func (ar AgentRunner) Prepare(ctx context.Context, o agent.Order) (agent.Prepared, error) {
	s, err := spec.Parse(o.SpecFile, []byte(o.Spec))
	if err != nil {
		return nil, err
	}
	var ts *spec.Spec
	for _, t := range Treatments(s) {
		if t.Name == o.Treatment {
			ts = t.Spec
		}
	}
	if ts == nil {
		return nil, fmt.Errorf("the spec has no treatment %q", o.Treatment)
	}
	f, ok := registry.Lookup(ts.Target.Type)
	if !ok {
		return nil, fmt.Errorf("this agent has no target %q; run the coordinator's Headroom version", ts.Target.Type)
	}
	wcfg, err := WorkloadConfig(ts.Workload, filepath.Dir(o.SpecFile))
	if err != nil {
		return nil, err
	}
	sh := o.Share
	cfg := load.Config{
		Model: ts.Load.Model, ThinkTime: ts.Load.ThinkTime.Duration,
		MaxInFlight: sh.MaxInFlight, LateAfter: ts.Load.LateAfter.Duration, DropAfter: ts.Load.DropAfter.Duration,
		Timeout: ts.Load.Timeout.Duration, Warmup: ts.Phases.Warmup.Duration, Measure: ts.Phases.Measure.Duration,
		Interval: ts.Interval.Duration, Seed: sh.Seed, Ops: wcfg.Ops(), Clients: sh.Clients,
	}
	cfg.InProcess, cfg.Percentile = verdictSettings(ts)
	if ph := o.Phases; ph != nil {
		cfg.Warmup, cfg.Measure, cfg.Interval = time.Duration(ph.Warmup), time.Duration(ph.Measure), time.Duration(ph.Interval)
	}
	if cfg.Model == "open" {
		if cfg.Schedule, err = ts.Load.Arrivals(sh.Rate, sh.Seed); err != nil {
			return nil, err
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	gen, err := workload.New(wcfg, sh.Seed)
	if err != nil {
		return nil, err
	}
	gen.ContinueInserts(sh.InsertStart)

	opts := ts.Target.Options
	if err := redirect(opts, o.Address, ts.Target.Type); err != nil {
		return nil, err
	}
	if err := credentials(opts, o.User, o.Password); err != nil {
		return nil, err
	}
	// Checked on the options the target will open with: after the
	// redirect (which may rewrite them) and the managed server's
	// credentials (whose variable is the agent's own, set from the order).
	if err := ar.checkEnv(opts, o.Password != ""); err != nil {
		return nil, err
	}
	tgt, err := f.Open(opts, registry.Env{Dir: ar.Dir})
	if err != nil {
		return nil, fmt.Errorf("opening the %s target at %s: %w", ts.Target.Type, o.Address, err)
	}
	// The coordinator prepared and filled the target; fresh = false only
	// readies this side's view of it (a target may need it before its
	// clients open) and changes nothing there.
	if err := tgt.Prepare(ctx, wcfg, false); err != nil {
		_ = tgt.Close()
		return nil, fmt.Errorf("preparing the %s target: %w", ts.Target.Type, err)
	}
	slots := cfg.Clients
	if cfg.Model == "open" {
		slots = cfg.MaxInFlight
	}
	pool := &preopened{Target: tgt}
	for range slots {
		c, err := tgt.NewClient(ctx)
		if err != nil {
			pool.Close()
			return nil, fmt.Errorf("opening client %d of %d: %w", len(pool.free)+1, slots, err)
		}
		pool.free = append(pool.free, c)
	}
	return &agentShare{cfg: cfg, tgt: pool, gen: gen, wcfg: wcfg}, nil
}

// redirect points a target's options at the coordinator's server: the
// managed server (if any) is the coordinator's, so the agent only dials
// its address, which replaces the options' Address (or what the
// options' ForAgent makes of it).
func redirect(opts any, addr, typ string) error {
	// A target whose managed server is a cluster (no one Address field)
	// says itself how an agent reaches it.
	if a, ok := opts.(interface{ ForAgent(addr string) error }); ok {
		return a.ForAgent(addr)
	}
	v := reflect.ValueOf(opts)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	managed := false
	if m := v.FieldByName("Managed"); m.IsValid() && m.Kind() == reflect.Pointer && !m.IsNil() && m.CanSet() {
		managed = true
		m.Set(reflect.Zero(m.Type()))
	}
	if addr == "" {
		if managed {
			return fmt.Errorf("the %s target's managed server has no address the agent can dial", typ)
		}
		return nil
	}
	if a := v.FieldByName("Address"); a.IsValid() && a.Kind() == reflect.String && a.CanSet() {
		a.SetString(addr)
		return nil
	}
	if managed {
		return fmt.Errorf("load agents cannot drive a managed %s server yet (its options have no address to point them at)", typ)
	}
	return nil
}

// agentPasswordEnv is the variable through which an agent hands a managed
// server's generated password to the target's options (password_env), so
// that it never appears in the options or a command line.
const agentPasswordEnv = "HEADROOM_AGENT_TARGET_PASSWORD"

// credentials puts a managed server's generated user and password into a
// target's options: the user into User or Username, the password through
// password_env.
func credentials(opts any, user, password string) error {
	v := reflect.ValueOf(opts)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct || user == "" && password == "" {
		return nil
	}
	set := func(name, val string) bool {
		f := v.FieldByName(name)
		if !f.IsValid() || f.Kind() != reflect.String || !f.CanSet() {
			return false
		}
		f.SetString(val)
		return true
	}
	if user != "" && !set("User", user) {
		set("Username", user)
	}
	if password != "" {
		if !set("PasswordEnv", agentPasswordEnv) {
			return fmt.Errorf("the target's options take no password_env for the managed server's password")
		}
		set("PasswordFile", "")
		if err := os.Setenv(agentPasswordEnv, password); err != nil {
			return err
		}
	}
	return nil
}

// checkEnv refuses target options naming an environment variable the
// operator did not allow; ownPassword exempts agentPasswordEnv, which the
// agent set itself from the order's managed credentials.
func (ar AgentRunner) checkEnv(opts any, ownPassword bool) error {
	for _, f := range envOptions(opts) {
		if ownPassword && f.name == agentPasswordEnv || slices.Contains(ar.AllowEnv, f.name) {
			continue
		}
		return fmt.Errorf("the spec's target.%s names the environment variable %s, which this agent is not allowed to read; if it should send it, start the agent with --allow-env %s", f.key, f.name, f.name)
	}
	return nil
}

// envOption is a target option naming an environment variable the target
// reads (a key ending in _env: password_env, auth_header_env, ...).
type envOption struct {
	key  string // its YAML path under target, e.g. "auth_header_env"
	name string // the variable
}

// envOptions finds every *_env option set in a target's options, nested
// ones included, by their YAML keys: a target type added later is covered
// without being listed here.
func envOptions(opts any) []envOption {
	var out []envOption
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			if v.IsNil() {
				return
			}
			v = v.Elem()
		}
		switch v.Kind() {
		case reflect.Struct:
			t := v.Type()
			for i := range t.NumField() {
				sf := t.Field(i)
				if !sf.IsExported() && !sf.Anonymous { // as yaml.v3: embedded structs count
					continue
				}
				key, flags, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
				switch {
				case key == "-":
					continue
				case strings.Contains(flags, "inline") || sf.Anonymous && key == "":
					walk(v.Field(i), path) // its keys are this struct's
					continue
				case key == "":
					key = strings.ToLower(sf.Name) // yaml.v3's default key
				}
				fpath := key
				if path != "" {
					fpath = path + "." + key
				}
				if fv := v.Field(i); fv.Kind() == reflect.String && strings.HasSuffix(key, "_env") {
					if fv.String() != "" {
						out = append(out, envOption{key: fpath, name: fv.String()})
					}
				} else {
					walk(fv, fpath)
				}
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
			}
		case reflect.Map:
			keys := v.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
			for _, k := range keys {
				walk(v.MapIndex(k), fmt.Sprintf("%s.%v", path, k))
			}
		}
	}
	walk(reflect.ValueOf(opts), "")
	return out
}

// targetEnvNames are the variables s's target options name, which the
// agents this campaign starts get from its environment and may read.
func targetEnvNames(s *spec.Spec) []string {
	var names []string
	for _, f := range envOptions(s.Target.Options) {
		if !slices.Contains(names, f.name) {
			names = append(names, f.name)
		}
	}
	return names
}

// preopened hands the load engine clients opened before the start
// barrier, so that the run starts at the ordered instant rather than after
// opening hundreds of connections.
type preopened struct {
	target.Target
	mu   sync.Mutex
	free []target.Client
}

func (p *preopened) NewClient(ctx context.Context) (target.Client, error) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		c := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	return p.Target.NewClient(ctx)
}

func (p *preopened) Close() error {
	p.mu.Lock()
	for _, c := range p.free {
		_ = c.Close()
	}
	p.free = nil
	p.mu.Unlock()
	return p.Target.Close()
}

// agentShare is a prepared share.
type agentShare struct {
	cfg  load.Config
	tgt  *preopened
	gen  *workload.Generator
	wcfg workload.Config
}

func (a *agentShare) Hist() agent.HistRange {
	h := load.NewHistogram()
	return agent.HistRange{Lowest: h.LowestTrackableValue(), Highest: h.HighestTrackableValue(), SigFigs: h.SignificantFigures()}
}

func (a *agentShare) Close() error { return a.tgt.Close() }

// Run waits for the start instant and runs the load engine, sending each
// interval as the engine hands it out.
func (a *agentShare) Run(ctx context.Context, start time.Time, send func(agent.IntervalMsg) error) (agent.ResultMsg, error) {
	t := time.NewTimer(time.Until(start))
	select {
	case <-ctx.Done():
		t.Stop()
		return agent.ResultMsg{Interrupted: true}, nil
	case <-t.C:
	}
	cfg := a.cfg
	var skew time.Duration
	cfg.Started = func(t0 time.Time) { skew = t0.Sub(start) }
	sink := func(t load.Tick) error {
		iv := agent.IntervalMsg{Index: t.Index, StartNs: int64(t.Start), Duration: int64(t.Duration), Phase: t.Phase.String()}
		for _, o := range t.Stats {
			st, err := agent.EncodeStat(agent.Stat{Phase: o.Phase.String(), Op: a.wcfg.OpName(o.Op), Count: o.Count, Errors: o.Errors,
				Late: o.Late, Dropped: o.Dropped, ErrorKinds: o.ErrorKinds, Hist: o.Hist})
			if err != nil {
				return err
			}
			iv.Stats = append(iv.Stats, st)
		}
		return send(iv)
	}
	res, err := load.Run(ctx, cfg, a.tgt, a.gen, sink)
	out := agent.ResultMsg{
		Warmup: totalsOf(res.Warmup), Measured: totalsOf(res.Measured), Unfinished: res.Unfinished,
		MeasureStartNs: int64(res.MeasureStart), MeasureEndNs: int64(res.MeasureEnd),
		TargetRate: res.TargetRate, SentRate: res.SentRate, Throughput: res.Throughput, ClientCPU: res.ClientCPU, Cores: res.Cores, CPUSaturated: res.CPUSaturated(),
		ClientLimited: res.ClientLimited, Note: res.Note, Interrupted: res.Interrupted, ErrorKinds: res.ErrorKinds, FirstError: res.FirstError,
		StartSkewNs: int64(skew),
	}
	return out, err
}

func totalsOf(t load.Totals) agent.Totals {
	return agent.Totals{Completed: t.Completed, Errors: t.Errors, Late: t.Late, Dropped: t.Dropped, LateWake: t.LateWake}
}
