package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// headroom run (and probe) --agents k8s:N says in one sentence what is wrong before
// anything starts: a bad value, no cluster to launch in, a spec without
// the kubernetes: section or without an address the pods can dial. (There
// is no cluster here; the launch itself is tested in internal/campaign
// against client-go's fake clientset.)
func TestRunKubernetesAgentsErrors(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBECONFIG", filepath.Join(dir, "none"))
	out := filepath.Join(dir, "out")
	base := "name: k8s\ntarget: {type: null}\nworkload: {ycsb: c, record_count: 100}\nload: {model: closed, clients: [2]}\nphases: {measure: 1s, populate: false}\noutput: " + out + "\n"
	bare := filepath.Join(dir, "bare.yaml")
	noAddr := filepath.Join(dir, "noaddr.yaml")
	for path, text := range map[string]string{bare: base, noAddr: base + "kubernetes: {image: reg/headroom:1}\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(wantCode int, want string, args ...string) {
		t.Helper()
		_, stderr, code := headroom(t, args...)
		if code != wantCode || !strings.Contains(stderr, want) {
			t.Errorf("headroom %s: exit %d, stderr %q; want exit %d and %q", strings.Join(args, " "), code, stderr, wantCode, want)
		}
	}
	check(ExitUsage, `--agents "k8s:0": write k8s:N with N >= 1 agent pods`, "run", "--agents", "k8s:0", bare)
	check(ExitError, "--agents k8s:2: kubernetes agents: no cluster to launch them in", "run", "--agents", "k8s:2", bare)
	// headroom probe takes the same flag, with the same checks.
	check(ExitUsage, `--agents "k8s:0": write k8s:N with N >= 1 agent pods`, "probe", "--agents", "k8s:0", bare)
	check(ExitError, "--agents k8s:2: kubernetes agents: no cluster to launch them in", "probe", "--agents", "k8s:2", bare)

	// A kubeconfig naming a cluster that is not there: the client is made
	// without dialling it, and the spec's problems come first.
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: none, user: {}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	check(ExitError, "kubernetes: required section is missing", "run", "--agents", "k8s:2", bare)
	check(ExitError, "set kubernetes.coordinator to HOST:PORT", "run", "--agents", "k8s:2", noAddr)
	check(ExitError, "kubernetes: required section is missing", "probe", "--agents", "k8s:2", bare)
	check(ExitError, "set kubernetes.coordinator to HOST:PORT", "probe", "--agents", "k8s:2", noAddr)
	check(ExitError, "2 clients cannot be dealt out to 3 agents", "run", "--agents", "k8s:3", noAddr)
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a results directory was made: %v", err)
	}
}
