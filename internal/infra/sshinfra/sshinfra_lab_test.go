package sshinfra_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/infra/labinfra"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/infra/sshinfra"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	_ "github.com/headroom-dev/headroom/internal/target/redis"
)

// The test's secret: the passphrase of the user key. It must reach no
// file the campaign writes.
const passEnv = "HEADROOM_TEST_SSH_PASSPHRASE"

// A "remote" host: a lab host running Debian's sshd in a mount namespace
// of its own, with a tmpfs over the results directory, so that the
// instance directory the relay mirrors there is not the local one. A
// managed Redis is deployed on it over ssh, a short campaign runs against
// it with a stop and a continue of its server, the host's /proc is
// sampled over the session, and nothing is left running afterwards. A
// wrong or unknown host key is refused with a sentence naming the host
// and the known_hosts file.
func TestRedisOnAHostOverSSH(t *testing.T) {
	labtest.NeedServer(t, "redis-server", "redis-server")
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		if os.Getenv("HEADROOM_REQUIRE_SERVERS") == "1" {
			t.Fatalf("sshd is not installed (apt-get install openssh-server)")
		}
		t.Skip("sshd is not installed (apt-get install openssh-server)")
	}
	const labName = "t-sshinfra"
	lab.Down(labName)
	lp, err := labinfra.FromDefinition(&lab.Definition{Hosts: []lab.HostSpec{{Name: "remote1", Type: "small"}}}, labName, "")
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

	dir := labtest.SearchableDir(t) // the results; hidden from sshd by a tmpfs
	sshDir := t.TempDir()
	hostKey := writeKey(t, filepath.Join(sshDir, "host_key"), "")
	const secret = "s3cret-Passphrase-f20a"
	t.Setenv(passEnv, secret)
	userKey := writeKey(t, filepath.Join(sshDir, "id_ed25519"), secret)
	write(t, filepath.Join(sshDir, "authorized_keys"), string(ssh.MarshalAuthorizedKey(userKey)))
	known := filepath.Join(sshDir, "known_hosts")
	write(t, known, knownhosts.Line([]string{addr}, hostKey)+"\n")
	startSSHD(t, remote, sshDir, dir)

	s, err := spec.Parse(filepath.Join(dir, "spec.yaml"), []byte(fmt.Sprintf(`
name: ssh-redis
target: {type: redis, managed: {host: remote1}}
workload: {ycsb: c, record_count: 200}
load: {model: open, rates: [100]}
phases: {warmup: 0s, measure: 3s}
interval: 1s
events:
  - {at: 1s, action: stop, host: remote1}
  - {at: 1500ms, action: continue, host: remote1}
infra:
  provider: ssh
  user: root
  key_file: %s
  passphrase_env: %s
  known_hosts: %s
  hosts: [{name: remote1, address: %s, price_per_hour: 0.25}]
output: out
`, filepath.Join(sshDir, "id_ed25519"), passEnv, known, addr)))
	if err != nil {
		t.Fatal(err)
	}
	s.File = filepath.Join(dir, "spec.yaml")
	out, err := campaign.Start(context.Background(), s, campaign.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if left := processesMentioning(addr, "ssh-relay"); len(left) > 0 {
		t.Errorf("processes left after the campaign: %v", left)
	}
	st, err := store.Open(out.StorePath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs()
	if err != nil || len(runs) != 1 || runs[0].Status != store.StatusCompleted {
		t.Fatalf("runs: %+v, %v", runs, err)
	}
	for _, m := range [][2]string{{"cpu", "util_pct"}, {"memory", "used_bytes"}} {
		xs, err := st.Samples(store.SampleFilter{RunID: runs[0].ID, Host: "remote1", Resource: m[0], Metric: m[1]})
		if err != nil || len(xs) < 2 {
			t.Errorf("%s %s samples of remote1: %d, %v", m[0], m[1], len(xs), err)
		}
	}
	evs, err := st.Events(runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var faults []string
	for _, e := range evs {
		if e.Kind == "fault" {
			faults = append(faults, e.Detail)
		}
	}
	if j := strings.Join(faults, "\n"); !strings.Contains(j, "stopped 1 server(s) on remote1") || !strings.Contains(j, "continued 1 server(s) on remote1") || strings.Contains(j, `"error"`) {
		t.Errorf("fault events: %s", j)
	}

	// The server's output came back through the relay into its local log.
	logs, _ := filepath.Glob(filepath.Join(out.Dir, "*", "server.log"))
	logs2, _ := filepath.Glob(filepath.Join(out.Dir, "*", "*", "server.log"))
	logs = append(logs, logs2...)
	if len(logs) == 0 {
		t.Fatalf("no server.log under %s", out.Dir)
	}
	if b, _ := os.ReadFile(logs[0]); !strings.Contains(string(b), "Ready to accept connections") {
		t.Errorf("the server log %s has not the server's output: %s", logs[0], b)
	}

	// The passphrase is nowhere in the results or logs.
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) {
				t.Errorf("%s holds the key's passphrase", p)
			}
		}
		return nil
	})

	// A host key that is not the one known, or a host not known at all,
	// is refused before anything runs there.
	other := writeKey(t, filepath.Join(sshDir, "other_key"), "")
	for _, c := range []struct{ known, want string }{
		{knownhosts.Line([]string{addr}, other) + "\n", "does not match the one in the known_hosts file"},
		{"", "is not in the known_hosts file"},
	} {
		write(t, known, c.known)
		p := sshinfra.New(sshinfra.Options{Hosts: []sshinfra.HostConfig{{Name: "remote1", Address: addr, User: "root",
			KeyFile: filepath.Join(sshDir, "id_ed25519"), PassphraseEnv: passEnv, KnownHosts: known}}})
		_, err := p.Up(context.Background(), infra.UpOptions{})
		if err == nil || !strings.Contains(err.Error(), "host remote1") || !strings.Contains(err.Error(), known) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("host key check: %v, want %q", err, c.want)
		}
		p.Down()
	}
}

// writeKey writes a new ed25519 private key in OpenSSH's format
// (encrypted when passphrase is set) and returns its public key.
func writeKey(t *testing.T, path, passphrase string) ssh.PublicKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var blk *pem.Block
	if passphrase != "" {
		blk, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte(passphrase))
	} else {
		blk, err = ssh.MarshalPrivateKey(priv, "")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(blk), 0o600); err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startSSHD runs sshd on h (its network namespace and cgroups) in a mount
// namespace where hide is an empty tmpfs, and stops it at cleanup.
func startSSHD(t *testing.T, h infra.Host, sshDir, hide string) {
	t.Helper()
	startSSHDWith(t, h, sshDir, hide, "")
}

// processesMentioning lists the processes whose command line holds any
// of words.
func processesMentioning(words ...string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cl := strings.ReplaceAll(string(b), "\x00", " ")
		for _, w := range words {
			if strings.Contains(cl, w) && !strings.Contains(cl, "sshd") {
				out = append(out, e.Name()+": "+cl)
				break
			}
		}
	}
	return out
}
