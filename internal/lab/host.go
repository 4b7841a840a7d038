package lab

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/headroom-dev/headroom/internal/monitor/procfs"
)

// Command returns cmd rewritten to run on host: the process joins the
// host's cgroups before it starts the program (so every child it forks is
// limited too), enters the host's network namespace, and, when uid/gid
// are not 0, drops to that user. cmd's Path and Args are replaced; its
// Dir, Env, Stdout, Stderr and SysProcAttr (without Credential, which
// must not apply to the wrapper) are kept.
//
// The wrapper is /bin/sh, nsenter and setpriv, all exec'ing in turn, so
// the PID of the started command is the PID of the program itself.
func (l *Lab) Command(host string, cmd *exec.Cmd, uid, gid int) error {
	h, err := l.Host(host)
	if err != nil {
		return err
	}
	nsenter, err := lookPath("nsenter")
	if err != nil {
		return err
	}
	var script strings.Builder
	for _, f := range l.cg.procsFiles(h.Cgroup) {
		fmt.Fprintf(&script, "echo $$ > %s || exit 126; ", shellQuote(f))
	}
	script.WriteString(`exec "$@"`)
	args := []string{"/bin/sh", "-c", script.String(), "sh", nsenter, "--net=" + filepath.Join("/run/netns", h.Netns), "--"}
	if uid != 0 || gid != 0 {
		setpriv, err := lookPath("setpriv")
		if err != nil {
			return err
		}
		args = append(args, setpriv, "--reuid="+strconv.Itoa(uid), "--regid="+strconv.Itoa(gid), "--clear-groups", "--")
	}
	args = append(args, cmd.Path)
	args = append(args, cmd.Args[1:]...)
	cmd.Path = "/bin/sh"
	cmd.Args = args
	if cmd.SysProcAttr != nil {
		cmd.SysProcAttr.Credential = nil
	}
	return nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func lookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		for _, d := range []string{"/usr/bin", "/usr/sbin", "/bin", "/sbin"} {
			if fi, serr := os.Stat(filepath.Join(d, name)); serr == nil && !fi.IsDir() {
				return filepath.Join(d, name), nil
			}
		}
		return "", fmt.Errorf("%s is not installed; the lab needs it (Debian: apt-get install %s)", name, packageOf(name))
	}
	return p, nil
}

// Do runs fn on an OS thread that is inside host's network namespace:
// sockets fn opens belong to the host (a listener on its address, a
// connection from it) and keep working after Do returns, from any thread.
func (l *Lab) Do(host string, fn func() error) error {
	h, err := l.Host(host)
	if err != nil {
		return err
	}
	target, err := os.Open(filepath.Join("/run/netns", h.Netns))
	if err != nil {
		return fmt.Errorf("lab host %s has no network namespace (%v); is the lab up?", host, err)
	}
	defer target.Close()
	errc := make(chan error, 1)
	// A fresh goroutine whose thread is thrown away if it cannot be put
	// back into the machine's namespace: no other goroutine ever runs in
	// the host's namespace by accident.
	go func() {
		runtime.LockOSThread()
		self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			errc <- err
			return
		}
		defer self.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("cannot enter lab host %s's network namespace: %v", host, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- ferr // the locked thread exits with this goroutine
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// Listen opens a listener on host (address as for net.Listen, e.g.
// ":9000" for every address of the host).
func (l *Lab) Listen(host, network, addr string) (net.Listener, error) {
	var ln net.Listener
	err := l.Do(host, func() (err error) {
		ln, err = net.Listen(network, addr)
		return err
	})
	return ln, err
}

// Dial connects from host to addr.
func (l *Lab) Dial(host string, d *net.Dialer, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := l.Do(host, func() (err error) {
		c, err = d.Dial(network, addr)
		return err
	})
	return c, err
}

// wholeDisk returns "major:minor" of the whole disk holding dir, the
// device block-I/O limits are set on.
func wholeDisk(dir string) (string, error) {
	name, err := procfs.DiskForPath("/", dir)
	if err != nil {
		return "", fmt.Errorf("cannot find the disk under the lab volume directory %s: %v", dir, err)
	}
	b, err := os.ReadFile(filepath.Join("/sys/block", name, "dev"))
	if err != nil {
		return "", fmt.Errorf("cannot read the device number of disk %s: %v", name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func randomID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
