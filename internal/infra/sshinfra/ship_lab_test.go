package sshinfra_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/infra/labinfra"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/infra/sshinfra"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	_ "github.com/headroom-dev/headroom/internal/target/null"
)

// A load agent on an ssh host that lacks headroom: the campaign copies a
// real headroom build into the host's cache (a directory only the
// "remote" mount namespace sees, through XDG_CACHE_HOME set by its sshd)
// and runs the agent from there; the run completes with the agent's
// intervals stored under its name. A second campaign finds the identical
// copy and sends nothing; a host of another architecture is refused
// before any run with a sentence naming both and the fix. Neither the
// key's passphrase nor the agents' token reaches the results.
func TestAgentCopiedToAnSSHHost(t *testing.T) {
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		if os.Getenv("HEADROOM_REQUIRE_SERVERS") == "1" {
			t.Fatalf("sshd is not installed (apt-get install openssh-server)")
		}
		t.Skip("sshd is not installed (apt-get install openssh-server)")
	}
	// The agent: a real headroom build (this test's own executable has no
	// agent command).
	bin := filepath.Join(t.TempDir(), "headroom")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/headroom-dev/headroom/cmd/headroom").CombinedOutput(); err != nil {
		t.Fatalf("building headroom: %v\n%s", err, out)
	}
	campaign.AgentProgram = bin
	t.Cleanup(func() { campaign.AgentProgram = "" })
	sum := fileSum(t, bin)

	const labName = "t-sshship"
	lab.Down(labName)
	lp, err := labinfra.FromDefinition(&lab.Definition{Hosts: []lab.HostSpec{{Name: "remote1", Type: "medium"}}}, labName, "")
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := lp.Up(context.Background(), infra.UpOptions{})
	if err != nil {
		t.Fatal(err)
	}
	netns := lp.Lab().State().Hosts[0].Netns
	t.Cleanup(func() {
		lp.Down()
		lab.Down(labName)
		if _, err := os.Stat(filepath.Join("/run/netns", netns)); err == nil {
			t.Errorf("the lab host's namespace %s is still there", netns)
		}
	})
	remote := hosts[0]
	addr := remote.Address()

	dir := labtest.SearchableDir(t) // the results and the host's cache; hidden from sshd by a tmpfs
	cache := filepath.Join(dir, "remote-cache")
	sshDir := t.TempDir()
	hostKey := writeKey(t, filepath.Join(sshDir, "host_key"), "")
	const secret = "s3cret-Passphrase-5a1e"
	t.Setenv(passEnv, secret)
	userKey := writeKey(t, filepath.Join(sshDir, "id_ed25519"), secret)
	write(t, filepath.Join(sshDir, "authorized_keys"), string(ssh.MarshalAuthorizedKey(userKey)))
	known := filepath.Join(sshDir, "known_hosts")
	write(t, known, knownhosts.Line([]string{addr}, hostKey)+"\n")
	const token = "agent-token-7c3f9e1d2b4a6c8e"
	write(t, filepath.Join(dir, "agents.token"), token+"\n")
	startSSHDWith(t, remote, sshDir, dir, "SetEnv XDG_CACHE_HOME="+cache+"\n")

	s, err := spec.Parse(filepath.Join(dir, "spec.yaml"), []byte(fmt.Sprintf(`
name: ssh-agent
target: {type: null}
workload: {ycsb: b, record_count: 1000}
load: {model: open, rates: [200], agents: {hosts: [remote1], token_file: agents.token}}
phases: {warmup: 0s, measure: 2s, populate: false}
interval: 1s
monitor: {enabled: false}
infra:
  provider: ssh
  user: root
  key_file: %s
  passphrase_env: %s
  known_hosts: %s
  hosts: [{name: remote1, address: %s}]
output: out
`, filepath.Join(sshDir, "id_ed25519"), passEnv, known, addr)))
	if err != nil {
		t.Fatal(err)
	}
	s.File = filepath.Join(dir, "spec.yaml")
	remotePath := filepath.Join(cache, "headroom", "headroom-"+sum[:16])

	campaignOnce := func(what string) (campaign.Outcome, string, error) {
		notes := &noteRecorder{}
		t0 := time.Now()
		out, err := campaign.Start(context.Background(), s, campaign.Options{Progress: notes})
		t.Logf("%s campaign: %.1f s", what, time.Since(t0).Seconds())
		if left := processesMentioning(addr, "ssh-relay", cache); len(left) > 0 {
			t.Errorf("processes left after the %s campaign: %v", what, left)
		}
		return out, notes.String(), err
	}

	// 1. The first campaign copies the program and runs the agent.
	out, notes, err := campaignOnce("first")
	if err != nil {
		t.Fatalf("first campaign: %v\nnotes:\n%s", err, notes)
	}
	t.Logf("the first campaign's notes:\n%s", notes)
	if want := fmt.Sprintf("copying %s (", bin); !strings.Contains(notes, want) || !strings.Contains(notes, "MB) to host remote1:"+remotePath) {
		t.Errorf("no note of the copy to %s in:\n%s", remotePath, notes)
	}
	checkAgentRun(t, out, "remote1")
	if _, err := os.Stat(remotePath); err == nil {
		t.Errorf("%s exists on this side of the mount namespace: the program was not copied to the host", remotePath)
	}
	first := remoteRun(t, addr, filepath.Join(sshDir, "id_ed25519"), secret, known,
		fmt.Sprintf("sha256sum <%[1]s; stat -c '%%a %%i' %[1]s; ls -a %[2]s; stat -c %%Y %[1]s", remotePath, filepath.Dir(remotePath)))
	lines := strings.Split(strings.TrimSpace(first), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], sum+" ") || !strings.HasPrefix(lines[1], "755 ") {
		t.Fatalf("the copy on the host: %q, want sha256 %s and mode 755", first, sum)
	}
	if strings.Contains(first, ".tmp.") {
		t.Errorf("a temporary file is left in the host's cache: %q", first)
	}

	// 2. A second campaign finds the identical copy: nothing is sent.
	out, notes, err = campaignOnce("second")
	if err != nil {
		t.Fatalf("second campaign: %v\nnotes:\n%s", err, notes)
	}
	if !strings.Contains(notes, "host remote1 has "+remotePath+" already (same sha256): not copied again") || strings.Contains(notes, "copying ") {
		t.Errorf("the second campaign's notes:\n%s", notes)
	}
	checkAgentRun(t, out, "remote1")
	second := remoteRun(t, addr, filepath.Join(sshDir, "id_ed25519"), secret, known,
		fmt.Sprintf("sha256sum <%[1]s; stat -c '%%a %%i' %[1]s; ls -a %[2]s; stat -c %%Y %[1]s", remotePath, filepath.Dir(remotePath)))
	// The same file (sha256, mode, inode, nothing else in the cache), its
	// modification time moved on: the probe marks the copy used, so that
	// pruning keeps it.
	identity := func(s string) (string, string) {
		s = strings.TrimSpace(s)
		i := strings.LastIndex(s, "\n")
		return s[:i], s[i+1:]
	}
	same1, used1 := identity(first)
	same2, used2 := identity(second)
	if same2 != same1 {
		t.Errorf("the copy changed in the second campaign: %q, was %q", same2, same1)
	}
	if u1, err1 := strconv.ParseInt(used1, 10, 64); err1 != nil {
		t.Errorf("modification time %q: %v", used1, err1)
	} else if u2, err2 := strconv.ParseInt(used2, 10, 64); err2 != nil || u2 <= u1 {
		t.Errorf("the copy's modification time went from %s to %s (%v); the probe should mark it used", used1, used2, err2)
	}

	// 3. A host of another architecture: refused before any run.
	otherUname, otherArch := "Linux aarch64", "linux/arm64"
	if runtime.GOARCH == "arm64" {
		otherUname, otherArch = "Linux x86_64", "linux/amd64"
	}
	restore := sshinfra.FakeUname(otherUname)
	out, notes, err = campaignOnce("other-architecture")
	restore()
	want := fmt.Sprintf("load agent on remote1: host remote1 runs %s (%s) and this program is built for %s/%s, so it cannot be copied there; install headroom for %s on remote1 and set load.agents.binary to its path there",
		otherUname, otherArch, runtime.GOOS, runtime.GOARCH, otherArch)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("another architecture: %v\nwant: %s", err, want)
	}
	if out.StorePath != "" || strings.Contains(notes, "copying ") {
		t.Errorf("another architecture: runs stored in %q, or a copy: %s", out.StorePath, notes)
	}

	// Neither the passphrase nor the token is in the results or logs.
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && p != filepath.Join(dir, "agents.token") {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) || strings.Contains(string(b), token) {
				t.Errorf("%s holds the key's passphrase or the agents' token", p)
			}
		}
		return nil
	})
}

// checkAgentRun checks that out's one run completed with the intervals
// of the agent name, on host name.
func checkAgentRun(t *testing.T, out campaign.Outcome, name string) {
	t.Helper()
	st, err := store.Open(out.StorePath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs()
	if err != nil || len(runs) != 1 || runs[0].Status != store.StatusCompleted {
		t.Fatalf("runs: %+v, %v", runs, err)
	}
	ars, err := st.AgentRuns(runs[0].ID)
	if err != nil || len(ars) != 1 || ars[0].Agent != name || ars[0].Host != name {
		t.Errorf("agent runs: %+v, %v", ars, err)
	}
	ivs, err := st.AgentIntervals(runs[0].ID, name)
	var n int64
	for _, iv := range ivs {
		if iv.Phase == "measure" {
			n += iv.Count
		}
	}
	// 200/s for 2 s: about 400 requests.
	if err != nil || len(ivs) < 2 || n < 300 {
		t.Errorf("agent %s: %d intervals, %d measured requests, %v", name, len(ivs), n, err)
	}
}

// remoteRun runs cmd on the host over ssh, as the campaign's user.
func remoteRun(t *testing.T, addr, keyFile, passphrase, known, cmd string) string {
	t.Helper()
	b, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKeyWithPassphrase(b, []byte(passphrase))
	if err != nil {
		t.Fatal(err)
	}
	check, err := knownhosts.New(known)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := ssh.Dial("tcp", net.JoinHostPort(addr, "22"), &ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: check, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sess, err := cl.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	out, err := sess.CombinedOutput(cmd)
	if err != nil {
		t.Fatalf("on the host: %s: %v: %s", cmd, err, out)
	}
	return string(out)
}

func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// noteRecorder keeps a campaign's notes.
type noteRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *noteRecorder) Update(progress.State)          {}
func (r *noteRecorder) RunDone(progress.State, string) {}
func (r *noteRecorder) Finish()                        {}
func (r *noteRecorder) Note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, s)
}

func (r *noteRecorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}

// startSSHDWith runs sshd on h (its network namespace and cgroups) in a
// mount namespace where hide is an empty tmpfs, with extra lines of sshd
// configuration, and stops it at cleanup.
func startSSHDWith(t *testing.T, h infra.Host, sshDir, hide, extra string) {
	t.Helper()
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil { // sshd's privilege separation directory
		t.Fatal(err)
	}
	cfg := filepath.Join(sshDir, "sshd_config")
	write(t, cfg, fmt.Sprintf(`Port 22
ListenAddress %s
HostKey %s/host_key
PidFile %s/sshd.pid
AuthorizedKeysFile %s/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
%s`, h.Address(), sshDir, sshDir, sshDir, extra))
	logf, err := os.Create(filepath.Join(sshDir, "sshd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
		`mount -t tmpfs tmpfs "$0" && exec /usr/sbin/sshd -D -e -f "$1"`, hide, cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := h.Command(cmd, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		logf.Close()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(h.Address(), "22"), time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("sshd on %s does not accept connections: %v; its log: %s", h.Name(), err, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
