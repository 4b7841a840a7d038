package sshinfra

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
)

// How a managed server runs on an ssh host. The recipes in internal/deploy
// write the instance directory (configuration, data) here and start the
// server with an exec.Cmd that Host.Command rewrites. The rewritten
// command re-executes this binary as a small relay (relayEnv selects it in
// init, before main), which:
//
//  1. connects to the host with the same settings as the provider;
//  2. mirrors the instance directory at the same absolute path there (a
//     tar stream that replaces only files older than the local copy, so
//     a restart keeps the data the server wrote remotely, and a
//     configuration rewritten locally is sent again);
//  3. runs the server there under a small sh supervisor (runScript) in
//     the instance directory, with the command's environment and nothing
//     else, as the recipe's service user when the ssh user is root;
//  4. copies the server's output to its own stdout and stderr (the
//     instance's local log) and forwards the signals it gets (deploy's
//     stop signal) as lines on the session's stdin;
//  5. exits as the server exited (its code, or its signal re-raised).
//
// The supervisor kills the server when the session's stdin closes: the
// relay exiting, being killed, or the connection dropping all stop the
// server there. A relay rather than rewriting the command line to the
// `ssh` client: the same key, agent and known_hosts checks as the
// provider, no dependency on an OpenSSH client, and exact control of the
// signals and exit status deploy relies on.
const relayEnv = "HEADROOM_SSH_RELAY"

// pidFile is written by the supervisor in the instance directory on the
// host, for the faults (faults.go).
const pidFile = ".headroom-ssh.pid"

func init() {
	if v, ok := os.LookupEnv(relayEnv); ok {
		os.Exit(relayMain(v))
	}
}

// relaySpec is what a relay process is told (as JSON in relayEnv, which
// only this user and root can read). The passphrase of a key is passed in
// its own variable; Env may hold the server's secrets (an agent's token),
// which reach the host over the session's stdin (remoteCommand).
type relaySpec struct {
	Host HostConfig `json:"host"`
	Dir  string     `json:"dir"`  // instance directory, mirrored at the same path
	Path string     `json:"path"` // the server program
	Args []string   `json:"args"`
	Env  []string   `json:"env"` // the server's whole environment
	// RunAs is the service user the server runs as when the ssh user is
	// root ("" = the ssh user).
	RunAs string `json:"run_as,omitempty"`
	// Package provides Path on this machine (for the message when the
	// host lacks it).
	Package string `json:"package,omitempty"`
	// Exclude are local files not mirrored (the server's log, which the
	// relay itself writes).
	Exclude []string `json:"exclude,omitempty"`
}

// Command implements infra.Host: cmd runs on the host through a relay
// (see relayEnv). cmd's Dir (required: it is mirrored), Env, Stdout and
// Stderr are carried over; uid is mapped to its user name, which the
// server runs as when the ssh user is root and the host has that user
// (nobody otherwise).
func (h *Host) Command(cmd *exec.Cmd, uid, gid int) error {
	if cmd.Dir == "" || !filepath.IsAbs(cmd.Dir) {
		return fmt.Errorf("host %s: a server runs in its instance directory, which is mirrored there; the command has no absolute directory", h.cfg.Name)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("host %s: cannot find this program to relay the server's session: %v", h.cfg.Name, err)
	}
	rs := relaySpec{Host: h.cfg, Dir: cmd.Dir, Path: cmd.Path, Args: cmd.Args[1:], Env: cmd.Env, Package: packageOf(cmd.Path)}
	rs.Host.KnownHosts = h.cfg.knownHostsFile()
	if rs.Env == nil {
		rs.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"}
	}
	if uid != os.Getuid() {
		if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
			rs.RunAs = u.Username
		} else {
			rs.RunAs = "nobody"
		}
	}
	for _, w := range []io.Writer{cmd.Stdout, cmd.Stderr} {
		if f, ok := w.(*os.File); ok {
			rs.Exclude = append(rs.Exclude, f.Name())
		}
	}
	b, err := json.Marshal(rs)
	if err != nil {
		return err
	}
	env := []string{relayEnv + "=" + string(b)}
	if n := h.cfg.PassphraseEnv; n != "" {
		if v, ok := os.LookupEnv(n); ok {
			env = append(env, n+"="+v)
		}
	}
	if h.cfg.Agent {
		env = append(env, "SSH_AUTH_SOCK="+os.Getenv("SSH_AUTH_SOCK"))
	}
	cmd.Path = exe
	cmd.Args = []string{exe, "ssh-relay", h.cfg.Name, filepath.Base(rs.Path)}
	cmd.Env = env
	if cmd.SysProcAttr != nil {
		// The relay runs as this user (it reads the key); the host
		// decides who the server runs as.
		cmd.SysProcAttr.Credential = nil
	}
	h.p.track(h.cfg.Name, cmd.Dir)
	return nil
}

var (
	pkgMu    sync.Mutex
	pkgCache = map[string]string{}
)

// packageOf is the Debian package that provides path on this machine
// (dpkg -S), "" when unknown.
func packageOf(path string) string {
	pkgMu.Lock()
	defer pkgMu.Unlock()
	if p, ok := pkgCache[path]; ok {
		return p
	}
	out, err := exec.Command("dpkg", "-S", path).Output()
	p := ""
	if err == nil {
		p, _, _ = strings.Cut(strings.TrimSpace(string(out)), ":")
	}
	pkgCache[path] = p
	return p
}

// runScript is the supervisor on the host: $1 the instance directory, $2
// the user to run as ("" = the ssh user), $3 the package of the program,
// $4 the host's name, then the command. It runs the server in its own
// session (so faults reach its whole process group), records its pid,
// forwards each signal name read on stdin to it, and on end of stdin
// (the session closed) stops it: TERM, then KILL after 10 s. It exits as
// the server did, re-raising a signal that killed it.
const runScript = `dir=$1 as=$2 pkg=$3 host=$4; shift 4
if [ ! -x "$1" ]; then
  echo "headroom: $1 is not installed on host $host; install it there (Debian: apt-get install -y ${pkg:-the package that provides it})" >&2
  exit 127
fi
cd "$dir" || exit 126
if [ -n "$as" ] && [ "$(id -u)" = 0 ]; then
  id -u "$as" >/dev/null 2>&1 || as=nobody
  chown -R "$(id -u "$as"):$(id -g "$as")" "$dir" || exit 126
  set -- setpriv --reuid="$(id -u "$as")" --regid="$(id -g "$as")" --clear-groups -- "$@"
fi
exec 3<&0
setsid "$@" </dev/null 3<&- &
pid=$!
echo "$pid" >` + pidFile + `
(
  while read -r sig; do kill -s "$sig" "$pid" 2>/dev/null; done
  kill -s TERM "$pid" 2>/dev/null
  i=0
  while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  kill -s KILL -- "-$pid" 2>/dev/null
) <&3 >/dev/null 2>&1 &
watch=$!
exec 3<&-
wait "$pid"
st=$?
rm -f ` + pidFile + `
kill "$watch" 2>/dev/null
if [ "$st" -gt 128 ] && [ "$st" -lt 160 ]; then kill -$((st - 128)) $$; fi
exit "$st"`

// remoteCommand is the command line the ssh server runs for rs: the
// supervisor in a clean environment holding only the server's variables.
// A secret variable (secretEnv) is not on it, where the host's other users
// could read it in the process list: the supervisor reads its value from
// the first lines of the session's stdin (secretLines), before the signals.
func (rs relaySpec) remoteCommand() string {
	var b strings.Builder
	var prelude strings.Builder
	b.WriteString("exec env -i")
	for _, kv := range rs.Env {
		if name, _, _ := strings.Cut(kv, "="); secretEnv(name) {
			prelude.WriteString("IFS= read -r " + name + " || exit 125; export " + name + "\n")
			continue
		}
		b.WriteString(" " + shellQuote(kv))
	}
	b.WriteString(" /bin/sh -c " + shellQuote(prelude.String()+runScript) + " headroom-run")
	for _, a := range append([]string{rs.Dir, rs.RunAs, rs.Package, rs.Host.Name, rs.Path}, rs.Args...) {
		b.WriteString(" " + shellQuote(a))
	}
	return b.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// secretEnv reports whether an environment variable holds a secret by its
// name (an agent's HEADROOM_AGENT_TOKEN, a password): such a value goes
// to the host over the session's stdin, not its command line. Only names
// that are shell identifiers qualify, as the supervisor reads into them.
func secretEnv(name string) bool {
	if name == "" || strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	up := strings.ToUpper(name)
	for _, s := range []string{"TOKEN", "PASSWORD", "PASSPHRASE", "SECRET"} {
		if strings.HasSuffix(up, s) {
			return true
		}
	}
	return false
}

// secretLines are the values of rs's secret variables, one per line in
// the order remoteCommand reads them.
func (rs relaySpec) secretLines() (string, error) {
	var b strings.Builder
	for _, kv := range rs.Env {
		name, v, _ := strings.Cut(kv, "=")
		if !secretEnv(name) {
			continue
		}
		if strings.ContainsAny(v, "\n\r") {
			return "", fmt.Errorf("the value of %s holds a line break, so it cannot be passed to the host over the session's input; use a value on one line", name)
		}
		b.WriteString(v + "\n")
	}
	return b.String(), nil
}

// relayMain is the relay process (see relayEnv); it returns the exit code.
func relayMain(v string) int {
	var rs relaySpec
	if err := json.Unmarshal([]byte(v), &rs); err != nil {
		fmt.Fprintf(os.Stderr, "headroom ssh relay: bad %s: %v\n", relayEnv, err)
		return 255
	}
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "headroom: %v\n", err)
		return 255
	}
	// Signals are caught from the start, so that a stop during the
	// upload reaches the server once it runs.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	cl, err := rs.Host.dial()
	if err != nil {
		return fail(err)
	}
	defer cl.Close()
	if err := mirror(cl, rs.Dir, rs.Exclude); err != nil {
		return fail(fmt.Errorf("host %s: copying the instance directory %s there: %v", rs.Host.Name, rs.Dir, err))
	}
	sess, err := cl.NewSession()
	if err != nil {
		return fail(err)
	}
	stdin, err := sess.StdinPipe()
	if err != nil {
		return fail(err)
	}
	sess.Stdout, sess.Stderr = os.Stdout, os.Stderr
	secrets, err := rs.secretLines()
	if err != nil {
		return fail(fmt.Errorf("host %s: %v", rs.Host.Name, err))
	}
	if err := sess.Start(rs.remoteCommand()); err != nil {
		return fail(fmt.Errorf("host %s: starting %s: %v", rs.Host.Name, rs.Path, err))
	}
	if _, err := io.WriteString(stdin, secrets); err != nil {
		return fail(fmt.Errorf("host %s: passing %s its secrets: %v", rs.Host.Name, rs.Path, err))
	}
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	for {
		select {
		case s := <-sigs:
			if name, ok := signalNames[s.(syscall.Signal)]; ok {
				fmt.Fprintln(stdin, name)
			}
		case err := <-done:
			return exitAs(rs.Host.Name, err)
		}
	}
}

// signalNames are the signals a relay forwards, by the names kill -s and
// the ssh protocol use.
var signalNames = map[syscall.Signal]string{
	syscall.SIGTERM: "TERM", syscall.SIGINT: "INT", syscall.SIGHUP: "HUP", syscall.SIGQUIT: "QUIT",
	syscall.SIGUSR1: "USR1", syscall.SIGUSR2: "USR2", syscall.SIGKILL: "KILL", syscall.SIGABRT: "ABRT",
	syscall.SIGSEGV: "SEGV", syscall.SIGSTOP: "STOP", syscall.SIGCONT: "CONT", syscall.SIGPIPE: "PIPE",
	syscall.SIGALRM: "ALRM", syscall.SIGBUS: "BUS", syscall.SIGFPE: "FPE", syscall.SIGILL: "ILL",
}

// exitAs ends the relay as the remote server ended: its status, or the
// signal that killed it raised on the relay itself, so that deploy reads
// the same exit as for a local server.
func exitAs(host string, err error) int {
	if err == nil {
		return 0
	}
	var ee *ssh.ExitError
	if errors.As(err, &ee) {
		if name := ee.Signal(); name != "" {
			for sig, n := range signalNames {
				if n == name {
					signal.Reset(sig)
					_ = syscall.Kill(os.Getpid(), sig)
					time.Sleep(time.Second)
				}
			}
			return 128 + 9
		}
		return ee.ExitStatus()
	}
	fmt.Fprintf(os.Stderr, "headroom: the ssh session to host %s ended without an exit status (%v); the server there is stopped when its session closes\n", host, err)
	return 255
}

// mirror copies the local directory dir to the same path on the host: a
// tar stream extracted there with --keep-newer-files, so a file the
// server changed there since (data) stays, and one changed here since
// (configuration) replaces it. Files are owned by the ssh user; the
// supervisor hands them to the service user.
func mirror(cl *ssh.Client, dir string, exclude []string) error {
	sess, err := cl.NewSession()
	if err != nil {
		return err
	}
	defer sess.Close()
	w, err := sess.StdinPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	sess.Stderr = &stderr
	q := shellQuote(dir)
	if err := sess.Start("mkdir -p " + q + " && exec tar -C " + q + " --no-same-owner --keep-newer-files --warning=no-ignore-newer -xf -"); err != nil {
		return err
	}
	werr := writeTar(w, dir, exclude)
	w.Close()
	if err := sess.Wait(); err != nil {
		if strings.Contains(stderr.String(), "not found") {
			return fmt.Errorf("tar is not installed there (Debian: apt-get install -y tar): %s", strings.TrimSpace(stderr.String()))
		}
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return werr
}

// writeTar writes dir's regular files, directories and symbolic links to
// w as a tar stream of paths relative to dir.
func writeTar(w io.Writer, dir string, exclude []string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." || rel == pidFile {
			return nil
		}
		for _, x := range exclude {
			if p == x {
				return nil
			}
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		case fi.IsDir(), fi.Mode().IsRegular():
		default:
			return nil // sockets and pipes are the server's own, made when it runs
		}
		hdr, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		hdr.Uname, hdr.Gname = "", ""
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyN(tw, f, hdr.Size)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
