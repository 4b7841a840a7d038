package k8s

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/spec"
)

// Without a kubeconfig and outside a cluster, Client says how to give it one.
func TestClientWithoutCluster(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KUBECONFIG", filepath.Join(dir, "none"))
	t.Setenv("HOME", dir)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := Client(); err == nil || !strings.Contains(err.Error(), "set KUBECONFIG or run inside the cluster") {
		t.Fatalf("Client without a cluster: %v", err)
	}
}

// The spec's kubernetes: section becomes the launch's configuration.
func TestFromSpec(t *testing.T) {
	k := &spec.Kubernetes{Namespace: "load", Image: "img:1", CPU: "1", Memory: "256Mi", Region: "eu", StartTimeout: spec.Duration{Duration: time.Minute}}
	c := FromSpec(k, 5, "10.1.2.3:7000", []byte("0123456789abcdef"))
	want := Config{Agents: 5, Coordinator: "10.1.2.3:7000", Token: "0123456789abcdef", Image: "img:1", Namespace: "load", CPU: "1", Memory: "256Mi", Region: "eu", Timeout: time.Minute}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("FromSpec = %+v\nwant %+v", c, want)
	}
}
