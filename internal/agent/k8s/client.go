package k8s

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/headroom-dev/headroom/internal/spec"
)

// Client connects to the cluster as kubectl would: the kubeconfig named by
// KUBECONFIG or ~/.kube/config, else the pod's service account when the
// coordinator itself runs in the cluster. Credentials stay in those files.
func Client() (kubernetes.Interface, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes agents: no cluster to launch them in (%v); set KUBECONFIG or run inside the cluster", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes agents: %v", err)
	}
	return cs, nil
}

// FromSpec is the launch of n agents described by the spec's kubernetes:
// section, dialling coordinator (HOST:PORT) with token. The coordinator
// (internal/campaign's fleet) calls New(client, FromSpec(...)).Launch
// after it listens, waits for the agents' names (AgentNames), and Stop at
// the end.
func FromSpec(k *spec.Kubernetes, n int, coordinator string, token []byte) Config {
	c := Config{Agents: n, Coordinator: coordinator, Token: string(token)}
	if k != nil {
		c.Namespace, c.Image, c.CPU, c.Memory, c.Region = k.Namespace, k.Image, k.CPU, k.Memory, k.Region
		c.Timeout = k.StartTimeout.Duration
	}
	return c
}
