// Package apptier is the n-tier system under test: Headroom's own
// application servers (internal/apptier, `headroom serve-app`) on lab hosts
// in front of a private PostgreSQL or MariaDB server on another lab host.
// Each YCSB operation is one HTTP request, sent round-robin across the
// application servers, which run it as SQL. With the application servers'
// CPU work per request, the lab's CPU quotas, links and volume IOPS, the
// bottleneck of the whole system can be put where an experiment wants it
// (seed-digest §6: the n-tier set-ups of 003 and their maps over tier
// sizes).
package apptier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/headroom-dev/headroom/internal/apptier"
	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/rotation"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

func init() {
	registry.Register(registry.Factory{
		Name:        "apptier",
		Summary:     "Headroom's HTTP application servers (on lab hosts) in front of a private PostgreSQL or MariaDB server: an n-tier system",
		NewOptions:  func() any { return defaultOptions() },
		Validate:    validate,
		ScalesNodes: true, // its application servers (scale.go)
		TierPrefix:  func(o any) string { return o.(*Options).App.Prefix },
		Open: func(o any, env registry.Env) (target.Target, error) {
			t, err := Open(context.Background(), *o.(*Options), env)
			if err != nil {
				return nil, fmt.Errorf("apptier target: %w", err)
			}
			return t, nil
		},
	})
}

// serverCommand is the program, leading arguments and extra environment
// that run `headroom serve-app`: this very binary. Tests replace it to
// re-run their own binary.
var serverCommand = func() (path string, args, env []string, err error) {
	exe, err := os.Executable()
	return exe, []string{"serve-app"}, nil, err
}

// Target is the running n-tier system.
type Target struct {
	opts      Options
	env       registry.Env            // kept for AddNode: the lab hosts brought up mid-run
	db        *deploy.Instance        // the one server, or the cluster's primary
	pc        *deploy.PostgresCluster // db.cluster (dbtier.go); nil: one server
	dsn       string                  // the application servers' database URL: holds the password
	dir       string                  // the application servers' logs
	transport *http.Transport
	client    *http.Client
	fields    atomic.Int64 // of the prepared table

	// all is every application server running, in start order; rot is
	// those in the round-robin rotation (all of them, except a server
	// being added or removed). Both are immutable slices replaced whole
	// under scale, so that pick reads them without a lock or an
	// allocation.
	all atomic.Pointer[[]*appServer]
	rot rotation.Set[*appServer]
	// scale serialises changes of the set of servers and of their state
	// (AddNode, RemoveNode, StartServer, Prepare, Close).
	scale   sync.Mutex
	allowed map[string]bool // addresses the database admits (lab only)
	locals  int             // local servers numbered so far (local1, ...)

	// loads counts the population batches sent; replayed is its value
	// when the replicas last caught up (waitReplayed).
	loads    atomic.Int64
	replayMu sync.Mutex
	replayed int64
}

// appServer is one application server process.
type appServer struct {
	name  string // lab host, or "local1", ...
	addr  string // host:port it listens on
	base  string // http://addr
	place *deploy.Placement
	log   string

	// Member counts the requests that picked this server and have not
	// finished, and marks it once it left the rotation (internal/rotation).
	rotation.Member
	answered atomic.Uint64 // requests it answered (any status)

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// Open starts the database, then the application servers, and waits until
// every server answers with a working database connection.
func Open(ctx context.Context, opts Options, env registry.Env) (_ *Target, err error) {
	t := &Target{opts: opts, env: env}
	defer func() {
		if err != nil {
			_ = t.Close()
		}
	}()
	apps, err := t.placeApps(env)
	if err != nil {
		return nil, err
	}
	recipe, scheme := opts.DB.recipe()
	if opts.DB.Cluster != nil {
		if err := t.startCluster(ctx, env); err != nil {
			return nil, err
		}
	} else if err := t.startDB(ctx, env, recipe); err != nil {
		return nil, err
	}
	inst := t.db
	if env.Lab != nil {
		if err := t.allowApps(ctx, apps); err != nil {
			return nil, fmt.Errorf("db: letting the application hosts in: %w", err)
		}
	}
	t.dsn = (&url.URL{Scheme: scheme, User: url.UserPassword(inst.User, inst.Password), Host: inst.Addr(), Path: "/" + inst.Database}).String()

	t.transport = &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: 1 << 16,
		MaxConnsPerHost:     opts.MaxConnections,
		IdleConnTimeout:     time.Hour,
		DisableCompression:  true,
	}
	t.client = &http.Client{Transport: t.transport, Timeout: opts.Timeout.Duration}

	t.dir = env.InstanceDir("apptier")
	if err := os.MkdirAll(t.dir, 0o755); err != nil {
		return nil, err
	}
	var started []*appServer
	for _, a := range apps {
		a.log = filepath.Join(t.dir, a.name+".log")
		if err := t.start(a); err != nil {
			return nil, err
		}
		started = append(started, a)
		snap := slices.Clone(started)
		t.all.Store(&snap) // Close stops what started so far
	}
	for _, a := range apps {
		if _, err := t.waitReady(ctx, a); err != nil {
			return nil, err
		}
	}
	t.rot.Store(apps)
	return t, nil
}

// startDB starts the one database server, on db.host (default db) in a
// lab or on this machine.
func (t *Target) startDB(ctx context.Context, env registry.Env, recipe deploy.Recipe) error {
	opts := t.opts
	m := deploy.Managed{Settings: opts.DB.Settings, Port: opts.DB.Port, Keep: opts.DB.Keep}
	switch {
	case env.Lab != nil:
		host := opts.DB.Host
		if host == "" {
			host = defaultDBHost
		}
		p, err := env.Lab(host)
		if err != nil {
			return fmt.Errorf("db.host: %w", err)
		}
		m.Placement = p
	case opts.DB.Host != "":
		return fmt.Errorf("db.host: %q names a lab host, but the spec has no lab: section; add one, or leave db.host out to run the database on this machine", opts.DB.Host)
	}
	inst, err := deploy.Start(ctx, recipe, env.InstanceDir(recipe.Kind()), m)
	if err != nil {
		return fmt.Errorf("db: %w", err)
	}
	t.db = inst
	return nil
}

// placeApps decides where the application servers run: on the lab hosts
// app.hosts or app.prefix name, or on this machine without a lab.
func (t *Target) placeApps(env registry.Env) ([]*appServer, error) {
	a := t.opts.App
	if env.Lab == nil {
		if len(a.Hosts) > 0 || a.Prefix != "" {
			return nil, fmt.Errorf("app.hosts: application hosts are lab hosts, but the spec has no lab: section; add one, or use app.count to run servers on this machine")
		}
		var apps []*appServer
		for range max(a.Count, 1) {
			s, err := t.localApp()
			if err != nil {
				return nil, err
			}
			apps = append(apps, s)
		}
		return apps, nil
	}
	port := t.labPort()
	hosts := a.Hosts
	if a.Prefix != "" {
		if p, err := env.Lab(a.Prefix); err == nil {
			return []*appServer{newApp(a.Prefix, p.Address, port, p)}, nil
		}
		var apps []*appServer
		for i := 1; ; i++ {
			h := a.Prefix + strconv.Itoa(i)
			p, err := env.Lab(h)
			if err != nil {
				if i == 1 {
					return nil, fmt.Errorf("app.prefix: no lab host is named %s or %s1: %w", a.Prefix, a.Prefix, err)
				}
				return apps, nil
			}
			apps = append(apps, newApp(h, p.Address, port, p))
		}
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("app.hosts: the application servers need lab hosts; list them in app.hosts, or give the name of a lab.hosts entry in app.prefix")
	}
	var apps []*appServer
	for _, h := range hosts {
		p, err := env.Lab(h)
		if err != nil {
			return nil, fmt.Errorf("app.hosts: %w", err)
		}
		apps = append(apps, newApp(h, p.Address, port, p))
	}
	return apps, nil
}

// localApp is the next application server on this machine's loopback:
// local1, local2, ... (a server added after one was removed takes a new
// number), on a free port or the next after app.port.
func (t *Target) localApp() (*appServer, error) {
	t.locals++
	port := t.opts.App.Port
	if port == 0 {
		var err error
		if port, err = deploy.FreePort(); err != nil {
			return nil, err
		}
	} else {
		port += t.locals - 1
	}
	return newApp(fmt.Sprintf("local%d", t.locals), "127.0.0.1", port, nil), nil
}

// labPort is the port the servers listen on on lab hosts.
func (t *Target) labPort() int {
	if t.opts.App.Port != 0 {
		return t.opts.App.Port
	}
	return defaultLabPort
}

func newApp(name, host string, port int, p *deploy.Placement) *appServer {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	return &appServer{name: name, addr: addr, base: "http://" + addr, place: p}
}

// servers is every running application server, in start order.
func (t *Target) servers() []*appServer {
	if p := t.all.Load(); p != nil {
		return *p
	}
	return nil
}

// serving is the servers in the round-robin rotation.
func (t *Target) serving() []*appServer {
	return t.rot.Load()
}

// cpuTime is the CPU time a request's work d takes on a's host: in a lab
// whose vCPU follows the reference compute unit, cpu_work is the
// reference core's CPU time, so that a host serves the same requests per
// second on a faster or slower machine (docs/lab.md, "The compute unit").
func (a *appServer) cpuTime(d time.Duration) time.Duration {
	if a.place != nil {
		if h, ok := a.place.OnHost().(interface {
			CPUTimeFor(time.Duration) time.Duration
		}); ok {
			return h.CPUTimeFor(d)
		}
	}
	return d
}

// start runs one application server (again). Its database URL is in its
// environment only.
func (t *Target) start(a *appServer) error {
	path, args, env, err := serverCommand()
	if err != nil {
		return fmt.Errorf("finding the headroom binary to run serve-app: %w", err)
	}
	args = append(args, "--listen", a.addr, "--db", apptier.DefaultDSNEnv,
		"--cpu-work", a.cpuTime(t.opts.App.CPUWork.Duration).String(), "--pool", strconv.Itoa(t.opts.App.Pool), "--table", t.opts.Table)
	logf, err := os.OpenFile(a.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=/", "TZ=UTC", apptier.DefaultDSNEnv + "=" + t.dsn}, env...)
	// Own process group (a Ctrl-C reaches Headroom, which stops the
	// servers in order); the parent-death signal ends a server whose
	// Headroom died.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if a.place != nil {
		// The server runs as the user Headroom runs as (root in a lab): no
		// other user can read its environment.
		if err := a.place.Wrap(cmd, os.Getuid(), os.Getgid()); err != nil {
			logf.Close()
			return fmt.Errorf("placing the application server on lab host %s: %w", a.name, err)
		}
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("starting the application server on %s: %w", a.name, err)
	}
	logf.Close()
	exited := make(chan struct{})
	a.mu.Lock()
	a.cmd, a.exited = cmd, exited
	a.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	return nil
}

// waitReady polls the server's health check, which answers only once its
// database connection works. It returns when the server first answered
// at all (its process accepted connections).
func (t *Target) waitReady(ctx context.Context, a *appServer) (accepting time.Time, err error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	a.mu.Lock()
	exited := a.exited
	a.mu.Unlock()
	var last error
	for {
		select {
		case <-exited:
			return accepting, fmt.Errorf("the application server on %s exited while starting; its log %s ends with: %s", a.name, a.log, tail(a.log))
		default:
		}
		var answered bool
		answered, last = t.health(ctx, a)
		if answered && accepting.IsZero() {
			accepting = time.Now()
		}
		if last == nil {
			return accepting, nil
		}
		select {
		case <-ctx.Done():
			return accepting, fmt.Errorf("the application server on %s did not become ready within 60s: %v; its log %s ends with: %s", a.name, last, a.log, tail(a.log))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// health asks the server's health check; answered says whether the
// server answered at all.
func (t *Target) health(ctx context.Context, a *appServer) (answered bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.base+apptier.PathHealth, nil)
	resp, err := t.client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		return true, fmt.Errorf("health check: %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	return true, nil
}

// Prepare (re)creates the table through the first application server and
// has every server prepare its statements.
func (t *Target) Prepare(ctx context.Context, w workload.Config, fresh bool) error {
	if w.IsStatements() {
		return errors.New("apptier target: the application servers run YCSB operations only; use the postgres or mysql target for statement workloads")
	}
	t.scale.Lock()
	defer t.scale.Unlock()
	for i, a := range t.servers() {
		q := url.Values{"fields": {strconv.Itoa(w.FieldCount)}}
		if i == 0 {
			q.Set("ddl", "1")
			if fresh {
				q.Set("fresh", "1")
			}
		}
		if err := t.post(ctx, a, apptier.PathPrepare+"?"+q.Encode(), nil); err != nil {
			return fmt.Errorf("apptier target: preparing %s: %w", a.name, err)
		}
	}
	t.fields.Store(int64(w.FieldCount))
	if t.pc != nil && t.opts.DB.readsFromReplicas() {
		// A prepare empties each server's replica list: the replicas
		// get the table once they have replayed it, then the list again.
		if err := t.pc.WaitReplayed(ctx, 2*time.Minute); err != nil {
			return fmt.Errorf("apptier target: waiting for the replicas to replay the new table: %w", err)
		}
		if err := t.sendReplicasToAll(ctx, ""); err != nil {
			return fmt.Errorf("apptier target: %w", err)
		}
	}
	return nil
}

// post sends an administrative request and fails on any status but 200.
func (t *Target) post(ctx context.Context, a *appServer, path string, body []byte) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.base+path, bytes.NewReader(body))
	resp, err := t.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

// pick is the next application server in the rotation, round-robin over
// all requests; the caller must Release it when its request is over. The
// rotation is never empty: RemoveNode keeps its last server.
func (t *Target) pick() *appServer {
	a, _ := t.rot.Pick()
	return a
}

// NewClient returns a request slot; all share the HTTP connection pool.
func (t *Target) NewClient(ctx context.Context) (target.Client, error) {
	if t.fields.Load() == 0 {
		return nil, errors.New("apptier target: Prepare must run before clients are opened")
	}
	if err := t.waitReplayed(ctx); err != nil {
		return nil, err
	}
	return &client{t: t}, nil
}

// Ephemeral implements target.Ephemeral: each session starts an empty
// database.
func (t *Target) Ephemeral() bool { return true }

// ServerPIDs implements target.ServerProcesses: the database server (each
// node's with db.cluster, replicas added later included) and the
// application servers.
func (t *Target) ServerPIDs() []int {
	var out []int
	for _, n := range t.dbNodes() {
		if pid := n.Inst.PID(); pid > 0 {
			out = append(out, pid)
		}
	}
	for _, a := range t.servers() {
		a.mu.Lock()
		if a.cmd != nil && a.cmd.Process != nil {
			out = append(out, a.cmd.Process.Pid)
		}
		a.mu.Unlock()
	}
	return out
}

// StartServer implements target.ServerStarter: after a kill event, the
// database (every node of a cluster, the primary first) and every
// application server that is not running start again; an application
// server started again gets its statements and the replica list.
func (t *Target) StartServer(ctx context.Context) error {
	t.scale.Lock()
	defer t.scale.Unlock()
	for _, n := range t.dbNodes() {
		if !n.Inst.Running() {
			if err := n.Inst.Restart(ctx); err != nil {
				return err
			}
		}
	}
	for _, a := range t.servers() {
		a.mu.Lock()
		ex := a.exited
		a.mu.Unlock()
		select {
		case <-ex:
		default:
			continue
		}
		if err := t.start(a); err != nil {
			return err
		}
		if _, err := t.waitReady(ctx, a); err != nil {
			return err
		}
		if err := t.prepareOne(ctx, a); err != nil {
			return fmt.Errorf("preparing %s again: %w", a.name, err)
		}
		if err := t.sendReplicas(ctx, a, t.replicaList("")); err != nil {
			return err
		}
	}
	return nil
}

// prepareOne has a server that started after Prepare prepare its
// statements for the current table.
func (t *Target) prepareOne(ctx context.Context, a *appServer) error {
	n := t.fields.Load()
	if n == 0 {
		return nil
	}
	return t.post(ctx, a, apptier.PathPrepare+"?fields="+strconv.FormatInt(n, 10), nil)
}

// Close stops the application servers (those added by AddNode too), then
// the database (every node of a cluster, replicas added later too).
func (t *Target) Close() error {
	t.scale.Lock()
	defer t.scale.Unlock()
	for _, a := range t.servers() {
		a.stop()
	}
	if t.transport != nil {
		t.transport.CloseIdleConnections()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if t.pc != nil {
		return t.pc.Remove(ctx)
	}
	if t.db != nil {
		return t.db.Remove(ctx)
	}
	return nil
}

// stop asks the server to finish (SIGTERM) and kills it after 5 s.
func (a *appServer) stop() {
	a.mu.Lock()
	cmd, ex := a.cmd, a.exited
	a.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-ex:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-ex
	}
}

// tail is the end of a log file, as one line.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return string(bytes.Join(lines, []byte(" | ")))
}
