// Package deploy creates, configures, starts, stops and removes private
// server instances for a campaign: a PostgreSQL cluster, a MariaDB server or
// a Redis server of its own, from the Debian packages, on this machine's
// loopback or on an infra host (Placement, made from an infra.Host), with
// its configuration and log under the campaign's results directory.
// Each kind of server is a Recipe (postgres.go, mariadb.go, redis.go); this
// file holds what they share: finding binaries, running the server process
// as an unprivileged user, waiting for it to accept connections, stopping it.
package deploy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Managed is the `managed:` block of a target's options: when present,
// Headroom runs its own server instead of connecting to an existing one.
type Managed struct {
	// Settings are server settings written into its configuration, e.g.
	// shared_buffers (PostgreSQL), innodb_buffer_pool_size (MariaDB),
	// maxmemory (Redis). Values are passed through as written.
	Settings map[string]string `yaml:"settings"`
	// Port to listen on; 0 (default) picks a free one.
	Port int `yaml:"port"`
	// Keep leaves the instance's data directory in place when the campaign
	// ends (default false: it is removed, its log is kept).
	Keep bool `yaml:"keep"`
	// Host is a lab host to run the server on (see the spec's lab:
	// section); "" = this machine.
	Host string `yaml:"host"`
	// Cluster runs a group of servers instead of one (cluster.go); nil =
	// one server. Host and Cluster.Hosts exclude each other.
	Cluster *Cluster `yaml:"cluster"`
	// StartTimeout bounds how long a start or restart may take
	// (default 60s).
	StartTimeout time.Duration `yaml:"-"`
	// Placement is filled from Host by whoever knows the hosts (the
	// target's registry.Env, from the campaign's infra provider); nil runs
	// the server on this machine.
	Placement *Placement `yaml:"-"`
}

// Host is where a managed server runs, as the recipes need it: every
// infra.Host is one (deploy does not import infra, which the lab's own
// tests could not then use).
type Host interface {
	Name() string
	// Address is where the server listens and clients dial it.
	Address() string
	// ClientAddress is where Headroom's connections come from.
	ClientAddress() string
	// DataDir is a directory on the host's volume ("" = none).
	DataDir() string
	// Command rewrites cmd to run on the host as uid:gid.
	Command(cmd *exec.Cmd, uid, gid int) error
}

// Placement is the host a managed server runs on, in the terms the recipes
// use; build it with On. A nil *Placement runs the server on this machine's
// loopback, with its data in the instance directory.
type Placement struct {
	Host          string // the host's name, for messages
	Address       string // the host's address: the server listens on it, clients dial it
	ClientAddress string // the address Headroom's connections come from (grants, pg_hba)
	// DataDir is a directory on the host's volume for the server's data
	// ("" = the instance directory). The instance directory, with its
	// configuration and log, stays in the results directory.
	DataDir string
	// Wrap rewrites cmd so that it runs on the host as uid:gid.
	Wrap func(cmd *exec.Cmd, uid, gid int) error

	on Host
}

// On places a server on host h (an infra.Host): its address, client
// address, data directory and the way to run a command on it all come
// from h.
func On(h Host) *Placement {
	return &Placement{Host: h.Name(), Address: h.Address(), ClientAddress: h.ClientAddress(),
		DataDir: h.DataDir(), Wrap: h.Command, on: h}
}

// OnHost is the host the placement was made from (nil for a placement not
// made by On).
func (p *Placement) OnHost() Host { return p.on }

// Binary is a program a recipe needs.
type Binary struct {
	Name    string   // e.g. "postgres"
	Dirs    []string // where to look besides $PATH, e.g. /usr/lib/postgresql/*/bin (globs allowed)
	Package string   // Debian package that provides it, for the error message
}

// Recipe knows how to set up and run one kind of server.
type Recipe interface {
	// Kind is "postgres", "mariadb" or "redis".
	Kind() string
	// Binaries lists the programs the recipe needs; Start resolves them
	// before anything else, so a missing one fails with the package to
	// install.
	Binaries() []Binary
	// Init creates the instance's data directory and configuration under
	// inst.Dir (run once, before the first start). It runs as root; the
	// runner chowns inst.Dir to the service user afterwards.
	Init(ctx context.Context, inst *Instance) error
	// Command is the server's foreground command line (it must not
	// daemonize), run as the service user.
	Command(inst *Instance) (path string, args []string)
	// Ready returns nil once the server accepts connections and is ready
	// for the workload (it may create the database and user here).
	Ready(ctx context.Context, inst *Instance) error
	// User is the unprivileged account the server runs as when Headroom
	// runs as root ("postgres", "mysql", "redis"); nobody is the fallback.
	User() string
}

// Instance is one running (or stopped) private server.
type Instance struct {
	Kind     string
	Dir      string // instance root: data, config, socket and log live here
	Host     string // 127.0.0.1, or the lab host's address
	Port     int
	User     string // database user the workload connects as
	Password string // generated; never logged or stored in results
	Database string // database (or Redis db number as text) for the workload
	Settings map[string]string

	recipe  Recipe
	bins    map[string]string // binary name -> resolved path
	cred    *syscall.Credential
	uid     int
	gid     int
	keep    bool
	timeout time.Duration
	place   *Placement
	dataDir string // "" = Dir/data

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{} // closed when cmd exits
	exitErr error
	logFile *os.File
}

// ErrMissingBinary is wrapped by errors about programs that are not installed.
var ErrMissingBinary = errors.New("server program not installed")

// Bin returns the resolved path of one of the recipe's binaries.
func (i *Instance) Bin(name string) string { return i.bins[name] }

// Addr is host:port.
func (i *Instance) Addr() string { return net.JoinHostPort(i.Host, strconv.Itoa(i.Port)) }

// DataDir is where recipes keep the server's files: Dir/data, or a
// directory on the lab host's volume.
func (i *Instance) DataDir() string {
	if i.dataDir != "" {
		return i.dataDir
	}
	return filepath.Join(i.Dir, "data")
}

// ClientAddress is the address the workload's connections come from,
// which the server must let in.
func (i *Instance) ClientAddress() string {
	if i.place != nil && i.place.ClientAddress != "" {
		return i.place.ClientAddress
	}
	return "127.0.0.1"
}

// Placement is where the server runs; nil = this machine.
func (i *Instance) Placement() *Placement { return i.place }

// LogPath is the server's log file (its stdout and stderr).
func (i *Instance) LogPath() string { return filepath.Join(i.Dir, "server.log") }

// PID is the server's process id, 0 when it is not running.
func (i *Instance) PID() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.cmd == nil || i.cmd.Process == nil {
		return 0
	}
	return i.cmd.Process.Pid
}

// Owner is the uid and gid the server runs as (recipes chown files they
// create after Init with it).
func (i *Instance) Owner() (uid, gid int) { return i.uid, i.gid }

// RunAs runs a helper program of the recipe (initdb, mariadb-install-db,
// pg_dump, ...) as the service user, with its output in the error on failure.
func (i *Instance) RunAs(ctx context.Context, path string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = i.Dir
	if i.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: i.cred}
	}
	cmd.Env = i.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s %v: %w: %s", filepath.Base(path), args, err, lastLines(out, 5))
	}
	return out, nil
}

// env is the whole environment of the server and its helper programs:
// not Headroom's own, which may hold other targets' passwords (password_env)
// that the service user could read in /proc/PID/environ.
func (i *Instance) env() []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
	}
	return []string{"PATH=" + path, "HOME=" + i.Dir, "LC_ALL=C", "TZ=UTC"}
}

// Start creates a new instance of the recipe's server in dir (which must not
// exist yet or be empty), starts it and waits until it is ready.
func Start(ctx context.Context, r Recipe, dir string, m Managed) (*Instance, error) {
	bins, err := resolve(r)
	if err != nil {
		return nil, err
	}
	port := m.Port
	if port == 0 {
		if port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	inst := &Instance{
		Kind: r.Kind(), Dir: dir, Host: "127.0.0.1", Port: port, Settings: m.Settings,
		Password: randomPassword(), recipe: r, bins: bins, keep: m.Keep, timeout: m.StartTimeout,
		uid: os.Getuid(), gid: os.Getgid(), place: m.Placement,
	}
	if inst.timeout <= 0 {
		inst.timeout = 60 * time.Second
	}
	if p := m.Placement; p != nil {
		inst.Host = p.Address
		if p.DataDir != "" {
			inst.dataDir = filepath.Join(p.DataDir, r.Kind()+"-"+strconv.Itoa(port))
		}
	}
	if err := inst.prepareDir(); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		if err := inst.dropPrivileges(r.User()); err != nil {
			return nil, err
		}
	}
	if inst.dataDir != "" {
		// initdb and mariadb-install-db create the data directory
		// themselves but need its parent writable; the parent (the
		// volume) is the lab's and stays.
		if err := os.MkdirAll(inst.dataDir, 0o750); err != nil {
			return nil, fmt.Errorf("cannot create the data directory %s on the lab volume: %w", inst.dataDir, err)
		}
		if err := os.Chown(inst.dataDir, inst.uid, inst.gid); err != nil {
			return nil, err
		}
	}
	if err := r.Init(ctx, inst); err != nil {
		return nil, fmt.Errorf("setting up the %s instance in %s: %w", r.Kind(), dir, err)
	}
	if err := inst.chownAll(); err != nil {
		return nil, err
	}
	if err := inst.start(ctx); err != nil {
		return nil, err
	}
	return inst, nil
}

// prepareDir creates the instance directory and makes sure the service user
// can reach it: every parent must be searchable by others, because the
// server does not run as root.
func (i *Instance) prepareDir() error {
	abs, err := filepath.Abs(i.Dir)
	if err != nil {
		return err
	}
	i.Dir = abs
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("cannot create the instance directory %s: %w", abs, err)
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("the instance directory %s is not empty; remove it or choose another results directory", abs)
	}
	if os.Geteuid() != 0 {
		return nil
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("the %s server runs as an unprivileged user, which cannot enter %s (mode %v); run `chmod o+x %s` or put the results directory (output:) elsewhere", i.Kind, d, fi.Mode().Perm(), d)
		}
		if d == "/" || d == filepath.Dir(d) {
			return nil
		}
	}
}

func (i *Instance) dropPrivileges(name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		if u, err = user.Lookup("nobody"); err != nil {
			return fmt.Errorf("no user %q or nobody to run the %s server as: %w", name, i.Kind, err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	i.uid, i.gid = uid, gid
	i.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	return os.Chown(i.Dir, uid, gid)
}

func (i *Instance) chownAll() error {
	if i.cred == nil {
		return nil
	}
	dirs := []string{i.Dir}
	if i.dataDir != "" {
		dirs = append(dirs, i.dataDir)
	}
	for _, d := range dirs {
		err := filepath.Walk(d, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, i.uid, i.gid)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (i *Instance) start(ctx context.Context) error {
	i.mu.Lock()
	if i.cmd != nil {
		i.mu.Unlock()
		return nil
	}
	path, args := i.recipe.Command(i)
	logf, err := os.OpenFile(i.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		i.mu.Unlock()
		return fmt.Errorf("opening the server log: %w", err)
	}
	if i.cred != nil {
		_ = logf.Chown(i.uid, i.gid)
	}
	oomBefore, _, _ := i.oomKills()
	cmd := exec.Command(path, args...)
	cmd.Dir = i.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = i.env()
	// Own process group, so a Ctrl-C at the terminal reaches Headroom, which
	// stops the server in order, and not the server directly.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if i.cred != nil {
		cmd.SysProcAttr.Credential = i.cred
	}
	if i.place != nil && i.place.Wrap != nil {
		// A lab host's wrapper needs root to join the host; it drops to
		// the service user itself. (The parent-death signal does not
		// survive that change of user: a lab host's processes are removed
		// with the lab instead.)
		if err := i.place.Wrap(cmd, i.uid, i.gid); err != nil {
			logf.Close()
			i.mu.Unlock()
			return fmt.Errorf("placing the %s server on host %s: %w", i.Kind, i.place.Host, err)
		}
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		i.mu.Unlock()
		return fmt.Errorf("starting %s: %w", path, err)
	}
	exited := make(chan struct{})
	i.cmd, i.exited, i.logFile = cmd, exited, logf
	go func() {
		err := cmd.Wait()
		i.mu.Lock()
		i.exitErr = err
		i.mu.Unlock()
		close(exited)
	}()
	i.mu.Unlock()

	wctx, cancel := context.WithTimeout(ctx, i.timeout)
	defer cancel()
	var last error
	for {
		select {
		case <-exited:
			i.reap()
			if cause := i.oomCause(oomBefore); cause != "" {
				return fmt.Errorf("%s (it exited while starting: %v; its log is %s)", cause, i.exitErr, i.LogPath())
			}
			return fmt.Errorf("the %s server exited while starting (%v); %s", i.Kind, i.exitErr, logSays(i.LogPath(), 5))
		default:
		}
		if last = i.recipe.Ready(wctx, i); last == nil {
			return nil
		}
		select {
		case <-wctx.Done():
			_ = i.Stop(context.Background())
			return fmt.Errorf("the %s server did not become ready within %v: %v; %s", i.Kind, i.timeout, last, logSays(i.LogPath(), 5))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (i *Instance) reap() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.logFile != nil {
		i.logFile.Close()
	}
	i.cmd, i.logFile = nil, nil
}

// Running reports whether the server process is alive.
func (i *Instance) Running() bool {
	i.mu.Lock()
	ex := i.exited
	i.mu.Unlock()
	if ex == nil {
		return false
	}
	select {
	case <-ex:
		return false
	default:
		return true
	}
}

// Stop asks the server to shut down cleanly and promptly (SIGTERM, or the
// recipe's StopSignal: PostgreSQL's fast shutdown is SIGINT) and waits for
// it, killing it after 30 s.
func (i *Instance) Stop(ctx context.Context) error {
	i.mu.Lock()
	cmd, ex := i.cmd, i.exited
	i.mu.Unlock()
	if cmd == nil {
		return nil
	}
	sig := syscall.SIGTERM
	if s, ok := i.recipe.(interface{ StopSignal() syscall.Signal }); ok {
		sig = s.StopSignal()
	}
	_ = cmd.Process.Signal(sig)
	var err error
	select {
	case <-ex:
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-ex
		err = fmt.Errorf("the %s server did not shut down within %v and was killed; data it had not written yet (a Redis save, a PostgreSQL checkpoint) is lost, and the next start may recover or come back empty", i.Kind, stopTimeout)
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-ex
		err = fmt.Errorf("the %s server was killed before it finished shutting down: %w", i.Kind, ctx.Err())
	}
	i.reap()
	return err
}

// stopTimeout bounds a clean shutdown: long enough for a server to write a
// few GB (Redis saves its data set on the way down, PostgreSQL takes a
// checkpoint), short enough that a hung server cannot stall a campaign.
const stopTimeout = 3 * time.Minute

// Restart stops the server and starts it again on the same port and data.
func (i *Instance) Restart(ctx context.Context) error {
	if err := i.Stop(ctx); err != nil {
		return err
	}
	return i.start(ctx)
}

// Remove stops the server and deletes its data directory unless the spec
// asked to keep it; the server log stays for the record.
func (i *Instance) Remove(ctx context.Context) error {
	if d, ok := i.recipe.(interface {
		ShutdownDiscarding(context.Context, *Instance)
	}); ok && !i.keep && i.Running() {
		// The data is about to be deleted: do not let the server spend
		// minutes writing it out on the way down.
		d.ShutdownDiscarding(ctx, i)
	}
	err := i.Stop(ctx)
	if i.keep {
		return err
	}
	entries, rerr := os.ReadDir(i.Dir)
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	for _, e := range entries {
		if e.Name() == filepath.Base(i.LogPath()) {
			continue
		}
		if rerr := os.RemoveAll(filepath.Join(i.Dir, e.Name())); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	if i.dataDir != "" {
		if rerr := os.RemoveAll(i.dataDir); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// emptyDir removes what is in dir but not dir itself (whose parent the
// service user may not be able to write).
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// resolve finds every binary the recipe needs.
func resolve(r Recipe) (map[string]string, error) {
	out := map[string]string{}
	for _, b := range r.Binaries() {
		p, err := findBinary(b)
		if err != nil {
			return nil, err
		}
		out[b.Name] = p
	}
	return out, nil
}

func findBinary(b Binary) (string, error) {
	for _, pattern := range b.Dirs {
		matches, _ := filepath.Glob(filepath.Join(pattern, b.Name))
		// Globs sort lexically; the last match is the highest version for
		// the single-digit-free version numbers Debian uses (13, 15, 16).
		for j := len(matches) - 1; j >= 0; j-- {
			if isExecutable(matches[j]) {
				return matches[j], nil
			}
		}
	}
	if p, err := exec.LookPath(b.Name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: %s was not found in $PATH or %v; install it with `apt-get install -y %s`, or point the target at an existing server instead of using managed", ErrMissingBinary, b.Name, b.Dirs, b.Package)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// FreePort asks the kernel for a free TCP port on loopback.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
