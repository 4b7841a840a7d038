package cli

import (
	"fmt"

	"k8s.io/client-go/kubernetes"

	"github.com/headroom-dev/headroom/internal/agent/k8s"
	"github.com/headroom-dev/headroom/internal/campaign"
)

// kubernetesAgents reads headroom run's --agents value (k8s:N) and
// connects to the cluster now, so that a bad value or a missing
// kubeconfig is said before the target starts; nil without --agents.
func kubernetesAgents(v string) (*campaign.KubernetesAgents, error) {
	if v == "" {
		return nil, nil
	}
	n, err := k8s.ParseAgents(v)
	if err != nil {
		return nil, &exitError{ExitUsage, err.Error()}
	}
	client, err := k8s.Client()
	if err != nil {
		return nil, &exitError{ExitError, fmt.Sprintf("--agents %s: %v", v, err)}
	}
	return &campaign.KubernetesAgents{Agents: n, Client: func() (kubernetes.Interface, error) { return client, nil }}, nil
}
