package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/headroom-dev/headroom/internal/agent"
	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// fleet is the load agents of a treatment (load.agents): the coordinator
// that merges them and the agent processes this campaign started.
type fleet struct {
	coord *agent.Coordinator
	names []string // agent names, in share order
	hosts []string // their hosts
	procs []*agentProc
	dir   string // where the agents' logs go
	// stop undoes what launched the agents (the Kubernetes Job,
	// agents_k8s.go); nil for processes.
	stop func() error
	// region is the Kubernetes pods' region (kubernetes.region), stored
	// with each agent's part of a run: a pod's host is not a spec host
	// whose region the results know.
	region string
	// envNames are the variables the spec's target options name: the
	// agents started on this machine get them, and may read only them.
	envNames []string
}

// agentProc is one agent process this campaign started.
type agentProc struct {
	name string
	cmd  *exec.Cmd
	log  string
	mu   sync.Mutex
	err  error // its exit, once it exited
	done chan struct{}
}

func (p *agentProc) exited() error {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return fmt.Errorf("agent %s exited (%v); its log: %s", p.name, p.err, lastLine(p.log))
	default:
		return nil
	}
}

// lastLine is the last non-empty line of a log file, for a message.
func lastLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return path
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return path + ": " + lines[len(lines)-1]
}

// agentNames names one agent per host entry: the host's name, with -2,
// -3, ... for further agents on the same host.
func agentNames(hosts []string) []string {
	seen := map[string]int{}
	out := make([]string, len(hosts))
	for i, h := range hosts {
		seen[h]++
		out[i] = h
		if seen[h] > 1 {
			out[i] = h + "-" + strconv.Itoa(seen[h])
		}
	}
	return out
}

// startAgents starts the treatment's load agents (load.agents, or the
// pods of k when set) and waits until all have connected; nil without
// either.
func (ex *executor) startAgents(ctx context.Context, dir string, k *KubernetesAgents) (*fleet, error) {
	if k != nil {
		return startKubernetesFleet(ctx, ex.s, k, ex.prog.Note) // agents_k8s.go
	}
	return startFleet(ctx, ex.s, ex.setup.Hosts, ex.prog.Note, dir)
}

// startFleet starts the load agents of s on hosts (or this machine) and
// waits until all have connected; nil without load.agents. Their logs go
// to dir/agents.
func startFleet(ctx context.Context, s *spec.Spec, hosts infra.Hosts, note func(string), dir string) (*fleet, error) {
	a := s.Load.Agents
	if a == nil {
		return nil, nil
	}
	if note == nil {
		note = func(string) {}
	}
	token := agent.NewToken()
	if a.TokenFile != "" {
		var err error
		if token, err = agent.ReadToken(specPath(s, a.TokenFile)); err != nil {
			return nil, fmt.Errorf("load.agents.token_file: %w", err)
		}
	}
	coord, err := agent.Listen(listenAddress(a), token)
	if err != nil {
		return nil, fmt.Errorf("load.agents.listen: %w", err)
	}
	if addr := coord.Addr().(*net.TCPAddr); !addr.IP.IsLoopback() {
		note(fmt.Sprintf("load agents: the coordinator listens on %s, which is not loopback: any machine that reaches it can try the token", addr))
	}
	f := &fleet{coord: coord, names: agentNames(a.Hosts), hosts: a.Hosts, dir: filepath.Join(dir, "agents"), envNames: targetEnvNames(s)}
	fail := func(err error) (*fleet, error) {
		f.close()
		return nil, err
	}
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return fail(err)
	}
	self := AgentProgram
	if self == "" {
		if self, err = os.Executable(); err != nil {
			return fail(fmt.Errorf("load.agents: cannot find this program to start agents with: %w", err))
		}
	}
	bin := self
	if a.Binary != "" {
		bin = specPath(s, a.Binary)
	}
	progs := map[string]string{} // host -> the program agents run there
	for i, host := range a.Hosts {
		prog, ok := progs[host]
		if !ok {
			if prog, err = agentProgram(hosts, host, bin, a.Binary != "", self, note); err != nil {
				return fail(err)
			}
			progs[host] = prog
		}
		p, err := f.launch(hosts, prog, f.names[i], host, token)
		if err != nil {
			return fail(err)
		}
		f.procs = append(f.procs, p)
	}
	note(fmt.Sprintf("load agents: waiting for %s on port %d", strings.Join(f.names, ", "), coord.Port()))
	check := func() error {
		var errs []error
		for _, p := range f.procs {
			errs = append(errs, p.exited())
		}
		return errors.Join(errs...)
	}
	if err := coord.Wait(ctx, f.names, time.Minute, check); err != nil {
		return fail(err)
	}
	return f, nil
}

// listenAddress is where the coordinator listens for a's agents:
// load.agents.listen when given; otherwise loopback when every agent is a
// process on this machine (no other machine needs to reach it), and every
// address when some agent is on another host (lab hosts included: they
// dial this machine's address on the lab bridge).
func listenAddress(a *spec.Agents) string {
	if a.Listen != "" {
		return a.Listen
	}
	for _, h := range a.Hosts {
		if h != spec.LocalAgent {
			return "0.0.0.0:0"
		}
	}
	return "127.0.0.1:0"
}

// AgentProgram is the headroom executable that load agents run when
// load.agents.binary is not set, and the one copied to ssh hosts; "" =
// this program. Tests set it: a test binary has no agent command.
var AgentProgram string

// agentProgram is the program agents run on host: bin, except on a host
// that does not share this machine's files (ssh) when bin was not given
// or is absent there; self is then copied there (infra.Shipper), if the
// host's OS and architecture are this program's.
func agentProgram(hosts infra.Hosts, host, bin string, given bool, self string, note func(string)) (string, error) {
	if host == spec.LocalAgent {
		return bin, nil
	}
	h, err := hosts.Get(host)
	if err != nil {
		return "", fmt.Errorf("load.agents.hosts: %w", err)
	}
	sh, ok := h.(infra.Shipper)
	if !ok {
		return bin, nil
	}
	if given {
		there, err := sh.HasExecutable(bin)
		if err != nil {
			return "", fmt.Errorf("load agent on %s: %w", host, err)
		}
		if there {
			return bin, nil
		}
		note(fmt.Sprintf("load.agents.binary %s is not on host %s: copying this program there instead", bin, host))
	}
	path, err := sh.Ship(self, note)
	var ae *infra.ArchError
	if errors.As(err, &ae) {
		want := ae.Remote
		if want == "" {
			want = ae.Uname
		}
		fix := "install headroom for " + want + " on " + host + " and set load.agents.binary to its path there"
		if given {
			fix = "install headroom for " + want + " at " + bin + " on " + host
		}
		return "", fmt.Errorf("load agent on %s: %v, so it cannot be copied there; %s", host, ae, fix)
	}
	if err != nil {
		return "", fmt.Errorf("load agent on %s: %w", host, err)
	}
	return path, nil
}

// launch starts one agent process on host (this machine for "local"),
// dialling back to the coordinator's port at the address the host reaches
// this machine by. The token goes in the environment, never on the
// command line.
func (f *fleet) launch(hosts infra.Hosts, bin, name, host string, token []byte) (*agentProc, error) {
	addr := "127.0.0.1"
	var run func(*exec.Cmd) error
	// On this machine (local, a lab host): what a process needs and the
	// variables the target names, which the agent may read; not this
	// process's whole environment, which may hold other secrets.
	env, allow := agentEnv(f.envNames), f.envNames
	if host != spec.LocalAgent {
		h, err := hosts.Get(host)
		if err != nil {
			return nil, fmt.Errorf("load.agents.hosts: %w", err)
		}
		addr = h.ClientAddress()
		run = func(cmd *exec.Cmd) error { return h.Command(cmd, os.Getuid(), os.Getgid()) }
		if _, ok := h.(infra.Shipper); ok {
			// Another machine: none of this one's variables go there
			// (the relay would put those not named like secrets on the
			// host's command line).
			env, allow = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}, nil
		}
	}
	logPath := filepath.Join(f.dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := []string{"agent", "--connect", fmt.Sprintf("%s:%d", addr, f.coord.Port()), "--name", name}
	for _, n := range allow {
		args = append(args, "--allow-env", n)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = f.dir
	cmd.Env = append(env, agent.TokenEnv+"="+string(token))
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so that a Ctrl-C meant for the coordinator
	// does not stop it mid-run (the coordinator stops it), and a signal
	// when the coordinator dies, so that it does not outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if run != nil {
		if err := run(cmd); err != nil {
			logf.Close()
			return nil, fmt.Errorf("load agent %s on %s: %w", name, host, err)
		}
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting load agent %s on %s (%s): %w", name, host, bin, err)
	}
	p := &agentProc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		logf.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// agentEnv is the environment of an agent started on this machine: PATH,
// HOME and TMPDIR as this process has them, and the variables names (those
// this process has).
func agentEnv(names []string) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	env := []string{"PATH=" + path}
	seen := map[string]bool{"PATH": true}
	for _, n := range append([]string{"HOME", "TMPDIR"}, names...) {
		if v, ok := os.LookupEnv(n); ok && !seen[n] {
			seen[n] = true
			env = append(env, n+"="+v)
		}
	}
	return env
}

// close says bye to the agents, gives their processes a few seconds to
// leave, kills those that did not, and undoes their launch.
func (f *fleet) close() error {
	if f == nil {
		return nil
	}
	_ = f.coord.Close()
	deadline := time.After(5 * time.Second)
	for _, p := range f.procs {
		select {
		case <-p.done:
		case <-deadline:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	if f.stop != nil {
		return f.stop()
	}
	return nil
}

// agentDetail is what the store keeps of an agent's part of a run
// (store.AgentRun.Detail).
type agentDetail struct {
	Share  agent.Share      `json:"share"`
	Clock  agent.Clock      `json:"clock"`
	Result *agent.ResultMsg `json:"result,omitempty"`
	Region string           `json:"region,omitempty"`
}

// runAgents drives one run with the fleet instead of this process: the
// agents' merged intervals go to sink as the engine's would, each agent's
// own intervals and outcome to the store, and the result is the fleet's
// (sums; client-limited when an agent was, naming it).
func (ex *executor) runAgents(ctx context.Context, id int64, p spec.PlannedRun, cfg load.Config, gen *workload.Generator, sink load.Sink) (load.Result, error) {
	f := ex.agents
	n := len(f.names)
	ex.partial = ""
	shares, err := agent.Split(cfg.Model, p.Level, cfg.MaxInFlight, cfg.Seed, gen.NextInsert(), n)
	if err != nil {
		return load.Result{}, err
	}
	// Every agent's insert block is taken, whatever it used: the next run
	// starts after all of them.
	gen.ContinueInserts(agent.NextInsert(gen.NextInsert(), n))
	addr, user, password := agentTarget(ex.tgt)
	rs := agent.RunSpec{Agents: f.names, Interval: cfg.Interval, Drain: cfg.Timeout + cfg.Interval + time.Second}
	warm := (cfg.Warmup + cfg.Interval - 1) / cfg.Interval * cfg.Interval
	rs.Last = int64((warm + cfg.Measure - 1) / cfg.Interval)
	for i := range n {
		rs.Orders = append(rs.Orders, agent.Order{RunID: id, Spec: string(ex.s.Source), SpecFile: ex.s.File, Treatment: ex.tr.name,
			Address: addr, User: user, Password: password, Level: p.Level, Share: shares[i]})
	}
	opOf := map[string]workload.OpType{}
	for _, op := range ex.ops {
		opOf[ex.wcfg.OpName(op)] = op
	}
	var measured load.Totals
	var start time.Time
	rs.Started = func(t0 time.Time) {
		// The agents' start instant is the run's: monitors and events
		// follow it.
		start = t0
		if cfg.Started != nil {
			cfg.Started(t0)
		}
	}
	perAgentDone := make([]int64, n) // measured completions of each agent, from its intervals
	merged := func(m agent.Merged) error {
		t := load.Tick{Index: m.Index, At: m.Start, Start: m.Start.Sub(start), Duration: m.Duration, Phase: load.Warmup}
		if m.Phase == load.Measure.String() {
			t.Phase = load.Measure
		}
		for _, s := range m.Stats {
			ph := load.Warmup
			if s.Phase == load.Measure.String() {
				ph = load.Measure
				measured.Completed += s.Count
				measured.Errors += s.Errors
				measured.Late += s.Late
				measured.Dropped += s.Dropped
			}
			t.Stats = append(t.Stats, load.OpStats{Phase: ph, Op: opOf[s.Op], Count: s.Count, Errors: s.Errors, Late: s.Late,
				Dropped: s.Dropped, ErrorKinds: s.ErrorKinds, Hist: s.Hist})
		}
		for i, name := range f.names {
			stats, ok := m.PerAgent[name]
			if !ok {
				continue
			}
			ivs := make([]store.Interval, 0, len(stats))
			for _, s := range stats {
				ivs = append(ivs, store.Interval{RunID: id, Phase: s.Phase, Op: s.Op, Start: m.Start, Duration: m.Duration,
					Count: s.Count, Errors: s.Errors, Late: s.Late, Dropped: s.Dropped, Hist: s.Hist})
				if s.Phase == load.Measure.String() {
					perAgentDone[i] += s.Count
				}
			}
			if err := ex.st.AddAgentIntervals(name, ivs); err != nil {
				return &storeError{err}
			}
		}
		return sink(t)
	}
	out, err := f.coord.Run(ctx, rs, merged)
	res := ex.fleetResult(ctx, out, warm, cfg, shares, measured, perAgentDone)
	for i, a := range out.Agents {
		d, _ := json.Marshal(agentDetail{Share: shares[i], Clock: a.Clock, Result: a.Result, Region: f.region})
		if perr := ex.st.PutAgentRun(store.AgentRun{RunID: id, Agent: a.Name, Host: f.hosts[i], Index: i, Status: a.Status,
			LostAt: a.LostAt, Reason: a.Reason, Detail: d}); perr != nil && err == nil {
			err = &storeError{perr}
		}
	}
	if part := out.Partial(); part != "" {
		ex.partial = part
		_ = ex.st.AddEvent(store.Event{RunID: id, Time: time.Now(), Kind: EventAgentsPartial, Detail: part})
	}
	return res, err
}

// EventAgentsPartial is the event of a run some of whose agents' shares
// are missing from part of it (an agent died, failed or fell behind).
const EventAgentsPartial = "agents_partial"

// fleetResult sums the agents' results into the run's. The measured
// totals come from the merged intervals (so a lost agent's intervals
// before it was lost count, as in the stored intervals); the client-limit
// verdict is each agent's own, and the run is client-limited when one
// was, which the note names.
func (ex *executor) fleetResult(ctx context.Context, out agent.Outcome, warm time.Duration, cfg load.Config, shares []agent.Share,
	measured load.Totals, perAgentDone []int64) load.Result {
	res := load.Result{Start: out.Start, MeasureStart: warm, MeasureEnd: warm + cfg.Measure, Measured: measured, Interrupted: ctx.Err() != nil}
	var notes []string
	secs := cfg.Measure.Seconds()
	for i, a := range out.Agents {
		if cfg.Model == "open" {
			res.TargetRate += shares[i].Rate
		}
		r := a.Result
		if r == nil {
			res.Throughput += float64(perAgentDone[i]) / secs
			continue
		}
		if r.Interrupted {
			res.Interrupted = true
			res.MeasureEnd = min(res.MeasureEnd, max(time.Duration(r.MeasureEndNs), warm))
		}
		res.Warmup.Completed += r.Warmup.Completed
		res.Warmup.Errors += r.Warmup.Errors
		res.Measured.LateWake += r.Measured.LateWake
		res.Unfinished += r.Unfinished
		res.Throughput += r.Throughput
		res.ClientCPU += r.ClientCPU
		res.Cores += r.Cores
		for k, v := range r.ErrorKinds {
			if res.ErrorKinds == nil {
				res.ErrorKinds = map[string]int64{}
			}
			res.ErrorKinds[k] += v
		}
		if res.FirstError == "" {
			res.FirstError = r.FirstError
		}
		if r.ClientLimited {
			res.ClientLimited = true
			notes = append(notes, "client-limited by agent "+a.Name+": "+r.Note)
		} else if r.Note != "" {
			notes = append(notes, "agent "+a.Name+": "+r.Note)
		}
	}
	if s := (res.MeasureEnd - res.MeasureStart).Seconds(); s > 0 {
		res.SentRate = float64(measured.Sent()+measured.Dropped) / s
	}
	if part := out.Partial(); part != "" {
		notes = append(notes, part)
	}
	res.Note = strings.Join(notes, "; ")
	return res
}

// specPath resolves a path of the spec relative to the spec file.
func specPath(s *spec.Spec, p string) string {
	if filepath.IsAbs(p) || s.File == "" {
		return p
	}
	return filepath.Join(filepath.Dir(s.File), p)
}

// agentTarget is what agents need to reach the coordinator's target: its
// address and, for a managed server, the user and generated password
// (sent only over the agents' connections).
func agentTarget(tgt target.Target) (addr, user, password string) {
	if a, ok := tgt.(target.Addresser); ok {
		addr = a.Address()
	}
	if m, ok := tgt.(interface{ Instance() *deploy.Instance }); ok && m.Instance() != nil {
		user, password = m.Instance().User, m.Instance().Password
	}
	// A managed cluster has no one instance: it names its role itself.
	if m, ok := tgt.(interface{ Credentials() (string, string) }); ok {
		user, password = m.Credentials()
	}
	return addr, user, password
}
